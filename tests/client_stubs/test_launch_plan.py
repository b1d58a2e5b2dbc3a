"""plan_launch: argument checks, grid and parameter packing, with fake device tensors."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from client_stubs import (
    ArgumentKindError,
    ArityError,
    AssumptionError,
    DeviceMismatchError,
    DeviceTensor,
    DTypeMismatchError,
    EmptyOutputError,
    GridLimitError,
    GridMismatchError,
    HostArgumentError,
    HostArrayError,
    LaunchError,
    MovedArgumentError,
    MovedTensorError,
    NegativeStrideError,
    OverlapError,
    RankMismatchError,
    ScalarValueError,
    SelfOverlapError,
    ShapeMismatchError,
    SlotValueError,
    TileShapeMismatchError,
    plan_launch,
)
from client_stubs.plan import elements_disjoint
from protos.generated.cutile.compile.v1 import contract_pb2 as pb

N = 1_000_003
Z, X, Y = 0x7F00_0000_0000, 0x7F10_0000_0000, 0x7F20_0000_0000


def fake(ptr: int, shape: int | tuple[int, ...] = N, dtype: str = "f32", **kw) -> DeviceTensor:
    return DeviceTensor(ptr, shape, dtype=dtype, **kw)


def vadd_args(n: int = N, tile: int = 128, dtype: str = "f32") -> list[object]:
    return [fake(Z, n, dtype).partition([tile]), fake(X, n, dtype), fake(Y, n, dtype)]


# ---- packing and grid ---------------------------------------------------------------------


def test_add_abi_layout_matches_the_documented_offsets(add):
    layout = [(s.param, s.role, s.axis, s.ctype, s.offset, s.size) for s in add.abi]
    ptr, dim, stride = pb.SLOT_ROLE_PTR, pb.SLOT_ROLE_DIM, pb.SLOT_ROLE_STRIDE
    assert layout == [
        (0, ptr, 0, "u64", 0, 8),
        (0, dim, 0, "i32", 8, 4),
        (0, stride, 0, "i32", 12, 4),
        (0, pb.SLOT_ROLE_PART_DIM, 0, "i32", 16, 4),
        (0, pb.SLOT_ROLE_PART_STRIDE, 0, "i32", 20, 4),
        (1, ptr, 0, "u64", 24, 8),
        (1, dim, 0, "i32", 32, 4),
        (1, stride, 0, "i32", 36, 4),
        (2, ptr, 0, "u64", 40, 8),
        (2, dim, 0, "i32", 48, 4),
        (2, stride, 0, "i32", 52, 4),
    ]
    assert add.launch.param_buffer_bytes == 56


def test_add_packs_exact_bytes_and_grid(add):
    plan = plan_launch(add, vadd_args())
    expected = struct.pack("<QiiiiQiiQii", Z, N, 1, 128, 1, X, N, 1, Y, N, 1)
    assert plan.param_buffer == expected
    assert len(plan.param_buffer) == 56
    assert plan.grid == (7813, 1, 1)
    assert plan.block == (1, 1, 1) and plan.shared_mem_bytes == 0
    assert plan.slot_offsets == (0, 8, 12, 16, 20, 24, 32, 36, 40, 48, 52)
    assert plan.entry_symbol == "add_entry"


def test_results_are_the_arguments_given(add):
    args = vadd_args()
    plan = plan_launch(add, args)
    assert plan.results == tuple(args)
    assert plan.results[0] is args[0]


def test_saxpy_packs_scalar_and_output_slots(saxpy):
    x, y = fake(X), fake(Y).partition([128])
    plan = plan_launch(saxpy, [2.5, x, y])
    assert plan.param_buffer == struct.pack("<fxxxxQiiQiiii", 2.5, X, N, 1, Y, N, 1, 128, 1)
    assert plan.grid == (7813, 1, 1)


def test_integer_scalars_and_numpy_scalars_are_accepted(kit):
    c = kit.build("k", [kit.P("n", kit.SCALAR, "i32"), kit.P("z", kit.OUT, "f32", [64])])
    plan = plan_launch(c, [np.int32(7), fake(Z, 64).partition([64])])
    assert struct.unpack_from("<i", plan.param_buffer, 0) == (7,)


@pytest.mark.parametrize(
    ("n", "tile", "grid"),
    [(1, 128, 1), (128, 128, 1), (129, 128, 2), (N, 128, 7813), (N, 1024, 977)],
)
def test_grid_is_ceil_of_extent_over_tile(kit, n, tile, grid):
    plan = plan_launch(kit.add(block=tile), vadd_args(n, tile))
    assert plan.grid == (grid, 1, 1)


def test_grid_2d_pads_to_three_axes(kit):
    c = kit.build("g", [kit.P("c", kit.OUT, "f16", [128, 64]), kit.P("a", kit.IN, "f16", [-1, -1])])
    out = fake(Z, (300, 200), "f16").partition([128, 64])
    plan = plan_launch(c, [out, fake(X, (300, 200), "f16")])
    assert plan.grid == (3, 4, 1)
    dims = struct.unpack_from("<iiiiiiii", plan.param_buffer, 8)
    assert dims == (300, 200, 200, 1, 128, 64, 200, 1)


def test_bf16_and_f16_scalar_packing(kit):
    c = kit.build(
        "s",
        [
            kit.P("a", kit.SCALAR, "bf16"),
            kit.P("b", kit.SCALAR, "f16"),
            kit.P("z", kit.OUT, "f32", [8]),
        ],
    )
    plan = plan_launch(c, [1.0, -2.0, fake(Z, 8).partition([8])])
    assert plan.param_buffer[:4] == struct.pack("<He", 0x3F80, -2.0)


def test_fp8_scalars_and_tensors(kit):
    """An fp8 scalar slot is one byte (the nearest code); fp8 tensors match by dtype name."""
    c = kit.build(
        "s",
        [
            kit.P("a", kit.SCALAR, "f8e4m3fn"),
            kit.P("b", kit.SCALAR, "f8e5m2"),
            kit.P("x", kit.IN, "f8e4m3fn", [-1]),
            kit.P("z", kit.OUT, "f4e2m1fnx2", [8]),
        ],
    )
    x = fake(X, 8, "f8e4m3fn")
    plan = plan_launch(c, [1.0, -2.0, x, fake(Z, 8, "f4e2m1fnx2").partition([8])])
    assert plan.param_buffer[:2] == b"\x38\xc0"
    with pytest.raises(DTypeMismatchError):
        plan_launch(c, [1.0, -2.0, fake(X, 8, "f8e5m2"), fake(Z, 8, "f4e2m1fnx2").partition([8])])
    with pytest.raises(SlotValueError, match="out of range"):
        plan_launch(c, [1e6, -2.0, x, fake(Z, 8, "f4e2m1fnx2").partition([8])])


def test_kernel_params_are_packed_once_per_call(add):
    first = plan_launch(add, vadd_args())
    second = plan_launch(add, vadd_args(n=1000))
    assert first.param_buffer != second.param_buffer


# ---- rejections ---------------------------------------------------------------------------


def assert_names(err: LaunchError, param: str | None, *fragments: str) -> None:
    text = str(err)
    assert "`add`" in text or err.kernel in text
    if param is not None:
        assert f"`{param}`" in text and err.param == param
    for fragment in fragments:
        assert fragment in text, text


def test_wrong_dtype(add):
    args = vadd_args()
    args[1] = fake(X, N, "f16")
    with pytest.raises(DTypeMismatchError) as info:
        plan_launch(add, args)
    assert_names(info.value, "x", "expected f32", "got f16")


def test_wrong_output_dtype(add):
    with pytest.raises(DTypeMismatchError) as info:
        plan_launch(add, vadd_args(dtype="f64"))
    assert info.value.param == "z"


def test_wrong_rank(add):
    args = vadd_args()
    args[2] = fake(Y, (1000, 1000))
    with pytest.raises(RankMismatchError) as info:
        plan_launch(add, args)
    assert_names(info.value, "y", "expected 1", "got 2")


def test_static_input_shape_mismatch(kit):
    c = kit.build("k", [kit.P("z", kit.OUT, "f32", [64]), kit.P("w", kit.IN, "f32", [64, -1])])
    with pytest.raises(ShapeMismatchError) as info:
        plan_launch(c, [fake(Z, 64).partition([64]), fake(X, (65, 3))])
    assert_names(info.value, "w", "[64, '*']", "[65, 3]")
    plan_launch(c, [fake(Z, 64).partition([64]), fake(X, (64, 3))])


def test_tile_shape_mismatch(add):
    args = vadd_args()
    args[0] = fake(Z).partition([256])
    with pytest.raises(TileShapeMismatchError) as info:
        plan_launch(add, args)
    assert_names(info.value, "z", "[128]", "[256]")


def test_host_array_input_rejected(add):
    args = vadd_args()
    args[1] = np.zeros(N, np.float32)
    with pytest.raises(HostArgumentError) as info:
        plan_launch(add, args)
    assert isinstance(info.value, HostArrayError)
    assert_names(info.value, "x", "GPU memory", "numpy.ndarray")


def test_host_array_output_rejected(add):
    args = vadd_args()
    args[0] = np.zeros(N, np.float32)
    with pytest.raises(HostArgumentError):
        plan_launch(add, args)


def test_unpartitioned_output_rejected(add):
    args = vadd_args()
    args[0] = fake(Z)
    with pytest.raises(ArgumentKindError) as info:
        plan_launch(add, args)
    assert_names(info.value, "z", "Partition", "partition([128])")


def test_partition_as_input_rejected(add):
    args = vadd_args()
    args[1] = fake(X).partition([128])
    with pytest.raises(ArgumentKindError) as info:
        plan_launch(add, args)
    assert info.value.param == "x"


def test_scalar_given_a_tensor_and_tensor_given_a_scalar(saxpy):
    with pytest.raises(ArgumentKindError) as info:
        plan_launch(saxpy, [fake(X), fake(X), fake(Y).partition([128])])
    assert info.value.param == "a"
    with pytest.raises(ArgumentKindError) as info:
        plan_launch(saxpy, [1.0, 3.0, fake(Y).partition([128])])
    assert info.value.param == "x"


def test_scalar_values_are_range_and_kind_checked(kit):
    c = kit.build("k", [kit.P("n", kit.SCALAR, "i32"), kit.P("z", kit.OUT, "f32", [8])])
    for bad in (2**31, 1.5, True):
        with pytest.raises(ScalarValueError) as info:
            plan_launch(c, [bad, fake(Z, 8).partition([8])])
        assert info.value.param == "n"


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32", "bool"])
@pytest.mark.parametrize(
    "value", [2**1024, -(10**400), 10**5000], ids=["2**1024", "-10**400", "10**5000"]
)
def test_an_int_beyond_every_scalar_is_a_scalar_value_error(kit, dtype, value):
    # float(value) overflows; an int of more than 4300 digits cannot even be printed
    c = kit.build("k", [kit.P("a", kit.SCALAR, dtype), kit.P("z", kit.OUT, "f32", [8])])
    with pytest.raises(ScalarValueError, match=r"parameter `a`: .*(beyond the float|of \d+ bits)"):
        plan_launch(c, [value, fake(Z, 8).partition([8])])


def test_arity(add):
    with pytest.raises(ArityError) as info:
        plan_launch(add, vadd_args()[:2])
    assert "3 arguments (z, x, y)" in str(info.value)


def test_overlapping_output_and_input_rejected(add):
    z = fake(Z).partition([128])
    x = fake(Z + 4 * 1000)  # starts inside z
    with pytest.raises(OverlapError) as info:
        plan_launch(add, [z, x, fake(Y)])
    assert_names(info.value, "z", "overlapping `x`")


def test_same_buffer_through_a_foreign_view_rejected(add):
    base = fake(Z, 2 * N)
    out = base.narrow(0, 0, N).partition([128])
    with pytest.raises(OverlapError):
        plan_launch(add, [out, base.narrow(0, N - 1, N), fake(Y)])
    # adjacent, non-overlapping halves are fine
    out2 = base.narrow(0, N, N).partition([128])
    plan_launch(add, [out2, base.narrow(0, 0, N), fake(Y)])


def test_inputs_may_alias_each_other(add):
    x = fake(X)
    plan_launch(add, [fake(Z).partition([128]), x, x])


def test_self_overlapping_output_strides_rejected(kit):
    c = kit.build("k", [kit.P("z", kit.OUT, "f32", [4, 4])])
    zero_stride = DeviceTensor(Z, (8, 8), (0, 1))
    with pytest.raises(SelfOverlapError) as info:
        plan_launch(c, [zero_stride.partition([4, 4])])
    assert info.value.param == "z"
    overlapping_rows = DeviceTensor(Z, (8, 8), (4, 1))
    with pytest.raises(SelfOverlapError):
        plan_launch(c, [overlapping_rows.partition([4, 4])])
    padded_rows = DeviceTensor(Z, (8, 8), (16, 1))
    plan_launch(c, [padded_rows.partition([4, 4])])


def test_elements_disjoint():
    assert elements_disjoint((8, 8), (8, 1))
    assert elements_disjoint((8, 8), (1, 8))  # column-major
    assert elements_disjoint((1, 8), (0, 1))  # unit axes may have any stride
    assert not elements_disjoint((8, 8), (0, 1))
    assert not elements_disjoint((8, 8), (7, 1))
    assert not elements_disjoint((2, 3), (1, 1))


def test_disagreeing_outputs_rejected(kit):
    c = kit.build("two", [kit.P("a", kit.OUT, "f32", [128]), kit.P("b", kit.OUT, "f32", [128])])
    with pytest.raises(GridMismatchError) as info:
        plan_launch(c, [fake(Z, 1024).partition([128]), fake(X, 1200).partition([128])])
    assert_names(info.value, "b", "(8, 1, 1)", "(10, 1, 1)")
    plan = plan_launch(c, [fake(Z, 1024).partition([128]), fake(X, 1020).partition([128])])
    assert plan.grid == (8, 1, 1)


def test_moved_tensor_reuse_rejected(add):
    z = fake(Z)
    part = z.partition([128])
    with pytest.raises(MovedTensorError):
        _ = z.ptr
    with pytest.raises(MovedArgumentError) as info:
        plan_launch(add, [part, z, fake(Y)])  # the moved handle passed as an input
    assert isinstance(info.value, MovedTensorError)
    assert_names(info.value, "x", "moved")
    with pytest.raises(MovedArgumentError):
        plan_launch(add, [z, fake(X), fake(Y)])  # the moved handle passed as the output
    back = part.unpartition()
    assert back is z and z.ptr == Z
    with pytest.raises(MovedArgumentError) as info:
        plan_launch(add, [part, fake(X), fake(Y)])  # a consumed partition
    assert info.value.param == "z"


def test_device_mismatch_rejected(add):
    args = vadd_args()
    args[2] = DeviceTensor(Y, N, device=1)
    with pytest.raises(DeviceMismatchError) as info:
        plan_launch(add, args)
    assert_names(info.value, "y", "device 0", "device 1")


def test_empty_output_rejected(add):
    with pytest.raises(EmptyOutputError):
        plan_launch(add, vadd_args(n=0))


def test_negative_strides_rejected(add):
    args = vadd_args()
    args[1] = DeviceTensor(X + 4 * (N - 1), N, (-1,))
    with pytest.raises(NegativeStrideError) as info:
        plan_launch(add, args)
    assert info.value.param == "x"


def test_i32_slot_overflow_rejected(add):
    big = 2**31
    with pytest.raises(SlotValueError) as info:
        plan_launch(
            add, [fake(Z, big).partition([128]), fake(X + 2**40, big), fake(Y + 2**42, big)]
        )
    assert_names(info.value, "z", "DIM axis 0", "i32")


def test_grid_limit_rejected(kit):
    c = kit.build("k", [kit.P("z", kit.OUT, "f32", [1, 1])])
    with pytest.raises(GridLimitError) as info:
        plan_launch(c, [fake(Z, (4, 70000)).partition([1, 1])])
    assert "65535" in str(info.value)


A = pb  # assumption kinds


@pytest.mark.parametrize(
    ("assumption", "tensor", "fragment"),
    [
        ((1, A.ASSUMPTION_KIND_BASE_ALIGN, 0, 16), DeviceTensor(X + 4, N), "% 16 == 0"),
        ((1, A.ASSUMPTION_KIND_DIM_DIV, 0, 16), DeviceTensor(X, N), "dim(x, 0) % 16"),
        ((1, A.ASSUMPTION_KIND_STRIDE_DIV, 0, 2), DeviceTensor(X, N, (3,)), "stride(x, 0) % 2"),
        ((1, A.ASSUMPTION_KIND_STRIDE_ONE, 0, 0), DeviceTensor(X, N, (2,)), "stride(x, 0) == 1"),
        ((1, A.ASSUMPTION_KIND_STATIC_DIM, 0, 4096), DeviceTensor(X, N), "== 4096"),
        ((1, A.ASSUMPTION_KIND_FITS_I32, 0, 0), DeviceTensor(X, 2**30, (4,)), "fit in i32"),
    ],
)
def test_failing_assumption_rejected(kit, assumption, tensor, fragment):
    c = kit.build(
        "add",
        [
            kit.P("z", kit.OUT, "f32", [128]),
            kit.P("x", kit.IN, "f32", [-1]),
            kit.P("y", kit.IN, "f32", [-1]),
        ],
        assumptions=[assumption],
    )
    with pytest.raises(AssumptionError) as info:
        plan_launch(c, [fake(Z).partition([128]), tensor, fake(Y)])
    assert_names(info.value, "x", fragment)


def test_holding_assumptions_pass(kit):
    assumptions = [
        (1, A.ASSUMPTION_KIND_BASE_ALIGN, 0, 16),
        (1, A.ASSUMPTION_KIND_DIM_DIV, 0, 8),
        (1, A.ASSUMPTION_KIND_STRIDE_ONE, 0, 0),
        (1, A.ASSUMPTION_KIND_NONNEG, 0, 0),
        (1, A.ASSUMPTION_KIND_FITS_I32, 0, 0),
        (0, A.ASSUMPTION_KIND_STATIC_DIM, 0, 1024),
    ]
    c = kit.build(
        "add",
        [
            kit.P("z", kit.OUT, "f32", [128]),
            kit.P("x", kit.IN, "f32", [-1]),
            kit.P("y", kit.IN, "f32", [-1]),
        ],
        assumptions=assumptions,
    )
    plan_launch(c, [fake(Z, 1024).partition([128]), fake(X, 1024), fake(Y, 1024)])


def test_scalar_nonneg_assumption(kit):
    c = kit.build(
        "k",
        [kit.P("n", kit.SCALAR, "i32"), kit.P("z", kit.OUT, "f32", [8])],
        assumptions=[(0, A.ASSUMPTION_KIND_NONNEG, 0, 0)],
    )
    with pytest.raises(AssumptionError) as info:
        plan_launch(c, [-1, fake(Z, 8).partition([8])])
    assert info.value.param == "n"
    plan_launch(c, [0, fake(Z, 8).partition([8])])


def test_foreign_cuda_array_interface_input_is_wrapped_without_copy(add):
    class CudaArray:
        def __init__(self, ptr: int, n: int) -> None:
            self.__cuda_array_interface__ = {
                "shape": (n,),
                "typestr": "<f4",
                "data": (ptr, False),
                "strides": None,
                "version": 3,
            }
            self.device = type("Dev", (), {"id": 0})()

    plan = plan_launch(add, [fake(Z).partition([128]), CudaArray(X, N), CudaArray(Y, N)])
    assert struct.unpack_from("<Q", plan.param_buffer, 24) == (X,)
    assert len(plan.keep_alive) == 3


def test_unknown_argument_type_rejected(add):
    args = vadd_args()
    args[1] = object()
    with pytest.raises(ArgumentKindError) as info:
        plan_launch(add, args)
    assert info.value.param == "x"


def test_precompiled_and_slot_by_slot_packing_agree(saxpy):
    from client_stubs import validate_contract

    fast = validate_contract(saxpy)
    slow = validate_contract(saxpy)
    slow.__dict__["packer"] = None  # force the slot-by-slot path
    assert fast.packer is not None and fast.packer.size == 48
    args = [-1.25, fake(X), fake(Y).partition([128])]
    assert plan_launch(fast, args).param_buffer == plan_launch(slow, args).param_buffer
