"""Client-side measurement of tensor facts for specialized compile requests."""

from __future__ import annotations

import pytest

from client_stubs import DeviceTensor
from client_stubs.specialization import facts_for, largest_divisor, tensor_facts


@pytest.mark.parametrize(
    ("value", "divisor"), [(1, 1), (6, 2), (12, 4), (24, 8), (4096, 16), (48, 16), (0, 16)]
)
def test_largest_power_of_two_divisor_up_to_16(value: int, divisor: int) -> None:
    assert largest_divisor(value) == divisor


def test_facts_of_a_strided_tensor_and_a_partition() -> None:
    x = DeviceTensor(0x7F00_0000_0000, (1000, 200), (208, 1), dtype="f16")
    facts = tensor_facts("x", x)
    assert (facts.param, list(facts.dim_divisors), list(facts.stride_divisors)) == (
        "x",
        [8, 8],
        [16, 1],
    )
    z = DeviceTensor(0x7F10_0000_0000, (64, 96), dtype="f32").partition((32, 32))
    assert list(tensor_facts("z", z).dim_divisors) == [16, 16]


def test_facts_are_sorted_by_name() -> None:
    a = DeviceTensor(0x7F00_0000_0000, (8,))
    assert [f.param for f in facts_for({"y": a, "x": a})] == ["x", "y"]


def test_foreign_arrays_are_measured_through_the_cuda_array_interface() -> None:
    class Foreign:
        __cuda_array_interface__ = {
            "shape": (24, 40),
            "typestr": "<f4",
            "data": (0x7F00_0000_0000, False),
            "version": 3,
            "strides": None,
        }

    facts = tensor_facts("x", Foreign())
    assert (list(facts.dim_divisors), list(facts.stride_divisors)) == ([8, 8], [8, 1])


def test_view_facts_are_measured_and_sent_only_where_they_relax_the_default() -> None:
    base = 0x7F00_0000_0000
    plain = tensor_facts("x", DeviceTensor(base, (64, 64)))
    assert (plain.base_align, plain.any_last_stride) == (0, False)  # 16-byte aligned, unit
    shifted = tensor_facts("x", DeviceTensor(base + 4, (64, 63), (64, 1)))  # x[:, 1:] of f32
    assert (shifted.base_align, shifted.any_last_stride) == (4, False)
    half = tensor_facts("x", DeviceTensor(base + 2, (10,), dtype="f16"))
    assert half.base_align == 2
    strided = tensor_facts("x", DeviceTensor(base + 8, (64, 32), (64, 2)))  # x[:, ::2]
    assert (strided.base_align, strided.any_last_stride) == (8, True)
    assert list(strided.stride_divisors) == [16, 2]
    assert tensor_facts("x", DeviceTensor(base + 48, (4,))).base_align == 0  # 16 or more


def test_a_tensor_with_no_fact_is_left_out_of_the_request() -> None:
    """Divisors of 1 everywhere, aligned base and unit last stride: the kernel of no facts, so
    the request stays the plain one (one cache key for one artifact)."""
    base = 0x7F00_0000_0000
    odd = DeviceTensor(base, (7,))  # extent 7, stride 1
    assert list(tensor_facts("x", odd).dim_divisors) == [1]
    assert [f.param for f in facts_for({"x": odd, "y": DeviceTensor(base, (64,))})] == ["y"]
    shifted = DeviceTensor(base + 4, (7,))  # an odd extent, but a relaxed base: kept
    assert [f.param for f in facts_for({"x": shifted})] == ["x"]
