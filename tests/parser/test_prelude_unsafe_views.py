"""The unsafe output views (`parser.prelude.unsafe_views`): typing, and E0133 outside
`unsafe`; every unsafe API of the DSL that the prelude supports is declared unsafe."""

from __future__ import annotations

import pytest

from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser import codes
from parser.diagnostics import Severity
from parser.prelude import FUNCTIONS, METHODS, PRELUDE, Receiver, find_method
from parser.spans import SourceFile
from parser.types import PartitionTy
from tests.parser.prelude_support import compile_body, lets, module

# dsl-surface.md §4.1: the calls that need `unsafe` in cuTile Rust.
UNSAFE_FUNCTIONS = (
    "make_tensor_view",
    "make_partition_view_mut",
    "make_mapped_partition_view",
    "make_nested_partition_view_mut",
    "load_view_tko_mut",
    "store_view_tko_mut",
    "store_view_tko_bounded",
    "store_view_tko_mapped_mut",
    "load_tensor",
    "assume_div_by",
    "assume_bounds_lower",
    "assume_bounds_upper",
    "assume_bounds",
    "assume_div_by_every_along",
    "assume_same_elements_1d",
    "assume_same_elements_2d",
    "assume_same_elements_3d",
    "assume_same_elements_4d",
    "swizzle_partition_index_2d",
    # `cutile::tileir`, unsafe wholesale
    "atomic_red_view_tko",
    "make_gather_scatter_view",
    "load_gather_scatter_view_tko",
    "make_strided_view",
    "load_strided_view_tko",
)
# Safe in cuTile Rust, which calls them outside `unsafe`, yet they access memory no bounds
# check covers: accepted anywhere, with a warning outside `unsafe`.
RAW_ACCESS_FUNCTIONS = ("load_ptr_tko", "store_ptr_tko", "atomic_rmw_tko", "atomic_cas_tko")
UNSAFE_METHODS = (
    (Receiver.TENSOR, "partition_full_mut"),
    (Receiver.PARTITION_MUT, "store_unchecked"),
    (Receiver.PARTITION_MUT, "load"),
    (Receiver.MAPPED, "index"),
)

FULL = "let mut whole = unsafe { z.partition_full_mut(const_shape![4, 64]) };"
SLAB = "let mut pz = z.partition_mut(const_shape![4, 64]);"


def test_every_unsafe_api_the_prelude_supports_requires_unsafe() -> None:
    supported = [FUNCTIONS[n] for n in UNSAFE_FUNCTIONS if n in FUNCTIONS]
    supported += [m for k, n in UNSAFE_METHODS if (m := find_method(k, n)) is not None]
    assert {i.id for i in supported} >= {
        "partition_full_mut",
        "store_unchecked",
        "partition_mut_load",
        "assume_div_by",
        "assume_bounds_lower",
        "assume_bounds_upper",
        "assume_bounds",
    }
    assert all(intrinsic.unsafe for intrinsic in supported)
    shared_load = find_method(Receiver.PARTITION, "load")
    assert shared_load is not None and not shared_load.unsafe


def test_the_raw_accesses_cutile_rust_calls_safely_are_safe_but_marked() -> None:
    raw = {i.id for i in PRELUDE if i.raw_access}
    assert raw == set(RAW_ACCESS_FUNCTIONS)
    assert not any(FUNCTIONS[name].unsafe for name in RAW_ACCESS_FUNCTIONS)


def test_a_partition_mut_inherits_the_partition_methods() -> None:
    assert find_method(Receiver.PARTITION_MUT, "store") is METHODS[(Receiver.PARTITION, "store")]
    assert find_method(Receiver.PARTITION, "store_unchecked") is None


def test_partition_full_mut_is_a_mutable_view_of_the_whole_output() -> None:
    whole = lets(FULL)["whole"]
    assert isinstance(whole, PartitionTy)
    assert (whole.tile, whole.mutable, whole.full) == ((4, 64), True, True)


def test_loading_from_a_partition_mut_gives_its_tile() -> None:
    types = lets(
        f"{SLAB}\npz.store(t, [0i32, 0i32]);\nlet back = unsafe {{ pz.load([0i32, 0i32]) }};"
    )
    assert types["back"] == types["t"]


@pytest.mark.parametrize(
    ("body", "name"),
    [
        (f"{FULL.replace('unsafe {', '{')}\nwhole.store(t, [0i32, 0i32]);", "partition_full_mut"),
        (f"{SLAB}\npz.store_unchecked(t, [0i32, 0i32]);", "store_unchecked"),
        (f"{SLAB}\npz.store(t, [0i32, 0i32]);\nlet back = pz.load([0i32, 0i32]);", "load"),
    ],
)
def test_each_unsafe_view_api_outside_unsafe_is_e0133(body: str, name: str) -> None:
    result = compile_body(body)
    (diagnostic,) = [d for d in result.diagnostics if d.is_error]
    assert diagnostic.code is codes.UNSAFE_REQUIRED
    assert f"call to unsafe function `{name}` is unsafe and requires unsafe block" in (
        diagnostic.message
    )


@pytest.mark.parametrize(
    "body",
    [
        f"{FULL}\nwhole.store(t, [0i32, 0i32]);",
        f"{SLAB}\nunsafe {{ pz.store_unchecked(t, [n, 0i32]); }}",
        f"{SLAB}\npz.store(t, [0i32, 0i32]);\nlet back = unsafe {{ pz.load([0i32, 0i32]) }};"
        "\npz.store(back, [0i32, 0i32]);",
    ],
)
def test_inside_unsafe_they_compile_without_warnings(body: str) -> None:
    result = compile_body(body, Stage.IR)
    assert result.ok and not result.diagnostics, result.diagnostics


def test_an_unsafe_fn_entry_needs_no_unsafe_block() -> None:
    text = module(f"{SLAB}\npz.store_unchecked(t, [0i32, 0i32]);").replace(
        "    fn f(", "    unsafe fn f("
    )
    request = CompileRequest((SourceFile("k.rs", text),), "f")
    result = compile_kernel(request, stop_after=Stage.IR)
    assert result.ok and not result.diagnostics, result.diagnostics


def test_store_unchecked_skips_the_slab_index_check_only_inside_unsafe() -> None:
    checked = compile_body(f"{SLAB}\npz.store(t, [1i32, 0i32]);")
    assert [d.code for d in checked.diagnostics] == [codes.PARTITION_OUT_OF_BOUNDS]
    unchecked = compile_body(f"{SLAB}\nunsafe {{ pz.store_unchecked(t, [1i32, 0i32]); }}")
    assert unchecked.ok and all(d.severity is not Severity.ERROR for d in unchecked.diagnostics)


def test_store_unchecked_needs_a_mut_binding_and_a_partition_mut() -> None:
    immutable = compile_body(
        "let pz = z.partition_mut(const_shape![4, 64]);\n"
        "unsafe { pz.store_unchecked(t, [0i32, 0i32]); }"
    )
    assert [d.code for d in immutable.diagnostics if d.is_error] == [codes.MUTATE_SHARED]
    shared = compile_body(
        "let p = x.partition(const_shape![4, 64]);\nunsafe { p.store_unchecked(t, [0i32, 0i32]); }"
    )
    assert [d.code for d in shared.diagnostics if d.is_error] == [codes.UNKNOWN_METHOD]


def test_partition_full_mut_borrows_its_output_mutably() -> None:
    body = (
        f"{FULL}\nlet mut pz = z.partition_mut(const_shape![4, 64]);\nwhole.store(t, [0i32, 0i32]);"
    )
    result = compile_body(body)
    assert [d.code for d in result.diagnostics if d.is_error] == [codes.MUTABLE_BORROW_TWICE]
