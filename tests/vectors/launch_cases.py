"""The cases of the shared launch vectors, one builder per check family (file).

Each builder takes `case(name, about, contract, args, grid=None)` and returns its cases; the
contracts come from the client tests' builders (tests/client_stubs/conftest.py), edited where
a case needs a malformed or unusual one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client_stubs.dtypes import ctype_size
from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from tests.client_stubs.conftest import (
    IN,
    MAPPED,
    OUT,
    POINTER,
    SCALAR,
    P,
    add_contract,
    build_contract,
    copy_persistent_contract,
    saxpy_contract,
    scale_ptr_contract,
)
from tests.vectors.args import mapped, partition, scalar, tensor

Case = dict[str, Any]
MakeCase = Callable[..., Case]

N = 1_000_003
Z, X, Y = 0x7F00_0000_0000, 0x7F10_0000_0000, 0x7F20_0000_0000
FAR = (0x1000_0000_0000, 0x8000_0000_0000, 0xC000_0000_0000)  # for tensors of terabytes


def add_args(n: int = N, tile: int = 128, dtype: str = "f32") -> list[dict[str, Any]]:
    return [partition(tensor(Z, [n], dtype), [tile]), tensor(X, [n], dtype), tensor(Y, [n], dtype)]


def gemm_contract(index_ctype: str = "i32") -> pb.LaunchContract:
    """`gemm(z: &mut Tensor<f32, {[128, 64]}>, x: &Tensor<f32, {[-1, -1]}>,
    y: &Tensor<f32, {[-1, -1]}>, k: i32)`."""
    return build_contract(
        "gemm",
        [
            P("z", OUT, "f32", [128, 64], index_ctype),
            P("x", IN, "f32", [-1, -1], index_ctype),
            P("y", IN, "f32", [-1, -1], index_ctype),
            P("k", SCALAR, "i32"),
        ],
    )


def gemm_args(m: int = 512, n: int = 256, x_rows: int = 512, k: int = 64) -> list[dict]:
    return [
        partition(tensor(Z, [m, n]), [128, 64]),
        tensor(X, [x_rows, k]),
        tensor(Y, [k, n]),
        scalar(k),
    ]


# ---- accepted launches and their exact bytes ------------------------------------------------


def accepted(case: MakeCase) -> list[Case]:
    two_outputs = build_contract(
        "split", [P("a", OUT, "f32", [64]), P("b", OUT, "f16", [32]), P("x", IN, "f32", [-1])]
    )
    three_d = build_contract(
        "cube", [P("z", OUT, "f32", [4, 8, 16]), P("x", IN, "f32", [-1, -1, -1])]
    )
    return [
        case("add", "vector add: grid ceil(N / 128), 11 slots", add_contract(), add_args()),
        case("add_f16", "the same in f16", add_contract("f16"), add_args(dtype="f16")),
        case("add_exact_tiles", "N a multiple of the tile", add_contract(), add_args(n=1 << 20)),
        case(
            "saxpy",
            "a scalar first",
            saxpy_contract(),
            [scalar(2.5), *add_args()[1:2], partition(tensor(Y, [N]), [128])],
        ),
        case("gemm", "a 2-d output: grid (m / 128, n / 64, 1)", gemm_contract(), gemm_args()),
        case(
            "gemm_i64_index",
            "i64 index slots carry dims past i32",
            gemm_contract("i64"),
            [
                partition(tensor(FAR[0], [2**31, 256]), [128, 64]),
                tensor(FAR[1], [2**31, 64]),
                tensor(FAR[2], [64, 256]),
                scalar(64),
            ],
        ),
        case(
            "strided_input",
            "an input view with a row stride of 3000 (a column block of a wider matrix)",
            gemm_contract(),
            [
                partition(tensor(Z, [512, 256]), [128, 64]),
                tensor(X, [512, 64], strides=[3000, 1]),
                tensor(Y, [64, 256]),
                scalar(64),
            ],
        ),
        case(
            "two_outputs",
            "two outputs that agree on the grid",
            two_outputs,
            [
                partition(tensor(Z, [640]), [64]),
                partition(tensor(Y, [320], "f16"), [32]),
                tensor(X, [640]),
            ],
        ),
        case(
            "rank3",
            "a 3-d output uses all three grid axes",
            three_d,
            [partition(tensor(Z, [9, 17, 33]), [4, 8, 16]), tensor(X, [9, 17, 33])],
        ),
        case(
            "early_launch",
            "a kernel that waits for prior grids: bytecode 13.4 for sm_90",
            _edited(_waits_for_prior_grids("13.4", "sm_90")),
            add_args(),
        ),
        case(
            "zero_size_input",
            "an empty input is fine (only outputs must have extents)",
            add_contract(),
            [partition(tensor(Z, [256]), [128]), tensor(X, [0]), tensor(Y, [256])],
        ),
    ]


# ---- argument count, kinds and ownership ----------------------------------------------------


def binding(case: MakeCase) -> list[Case]:
    z, x, y = add_args()
    moved_ok = "the Rust host rules this out by its types; the planner still names it"
    return [
        case("too_few", "two arguments for three params", add_contract(), [z, x]),
        case("too_many", "four arguments", add_contract(), [z, x, y, y]),
        case(
            "output_unpartitioned",
            "an output given a tensor",
            add_contract(),
            [tensor(Z, [N]), x, y],
        ),
        case(
            "output_mapped",
            "a partitioned output given a mapped partition",
            add_contract(),
            [mapped(tensor(Z, [N]), [128], [1], 4), x, y],
        ),
        case("output_scalar", "an output given a number", add_contract(), [scalar(3), x, y]),
        case("input_partition", "an input given a partition", add_contract(), [z, z, y]),
        case("input_scalar", "an input given a number", add_contract(), [z, scalar(1.0), y]),
        case("input_other", "an input given a string", add_contract(), [z, {"other": "str"}, y]),
        case("moved_input", moved_ok, add_contract(), [z, {"moved": "tensor"}, y]),
        case("moved_output", moved_ok, add_contract(), [{"moved": "tensor"}, x, y]),
        case("consumed_partition", moved_ok, add_contract(), [{"moved": "partition"}, x, y]),
        case(
            "consumed_mapped_as_output",
            "a consumed mapped partition is still the wrong kind for a partitioned output",
            add_contract(),
            [{"moved": "mapped"}, x, y],
        ),
        case(
            "moved_partition_as_input",
            "partitions are never inputs, moved or not",
            add_contract(),
            [z, {"moved": "partition"}, y],
        ),
        case(
            "scalar_tensor",
            "a scalar given a tensor",
            saxpy_contract(),
            [x, x, partition(tensor(Y, [N]), [128])],
        ),
    ]


# ---- dtype, rank, shape, strides, device ----------------------------------------------------


def tensors(case: MakeCase) -> list[Case]:
    z, x, y = add_args()
    static = build_contract("rows", [P("z", OUT, "f32", [128]), P("x", IN, "f32", [1024])])
    return [
        case(
            "dtype_input",
            "x in f16 for an f32 kernel",
            add_contract(),
            [z, tensor(X, [N], "f16"), y],
        ),
        case(
            "dtype_output",
            "z in bf16",
            add_contract(),
            [partition(tensor(Z, [N], "bf16"), [128]), x, y],
        ),
        case("rank_input", "x of rank 2", add_contract(), [z, tensor(X, [N, 1]), y]),
        case(
            "rank_output",
            "z of rank 2 (its tile has rank 2 too)",
            add_contract(),
            [partition(tensor(Z, [N, 1]), [128, 1]), x, y],
        ),
        case(
            "negative_stride",
            "a reversed input view",
            add_contract(),
            [z, tensor(X + 4 * (N - 1), [N], strides=[-1]), y],
        ),
        case(
            "static_shape_ok",
            "a declared static extent met",
            static,
            [partition(tensor(Z, [1024]), [128]), tensor(X, [1024])],
        ),
        case(
            "static_shape",
            "a declared static extent not met",
            static,
            [partition(tensor(Z, [1024]), [128]), tensor(X, [1000])],
        ),
        case(
            "tile_shape",
            "z partitioned by 64 for a kernel compiled for 128",
            add_contract(),
            [partition(tensor(Z, [N]), [64]), x, y],
        ),
        case(
            "empty_output",
            "an output with no elements",
            add_contract(),
            [partition(tensor(Z, [0]), [128]), x, y],
        ),
        case(
            "device",
            "y on device 1",
            add_contract(),
            [z, x, tensor(Y, [N], device=1)],
        ),
    ]


# ---- scalars and their packing ---------------------------------------------------------------


def scalar_contract() -> pb.LaunchContract:
    names = ["bool", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "f16", "bf16", "f32"]
    params = [P("z", OUT, "f32", [128])] + [P(f"s_{n}", SCALAR, n) for n in names]
    return build_contract("scalars", [*params, P("s_f64", SCALAR, "f64")])


def scalar_args(**values: object) -> list[dict[str, Any]]:
    base: dict[str, object] = {
        "bool": True,
        "i8": -128,
        "u8": 255,
        "i16": -32768,
        "u16": 65535,
        "i32": -(2**31),
        "u32": 2**32 - 1,
        "i64": -(2**63),
        "u64": 2**64 - 1,
        "f16": 65504.0,
        "bf16": 1.0 + 1.0 / 256.0,
        "f32": 0.1,
        "f64": -0.0,
    }
    base.update(values)
    return [partition(tensor(Z, [256]), [128])] + [scalar(v) for v in base.values()]  # type: ignore[arg-type]


MINI = ("f8e4m3fn", "f8e5m2", "f8e8m0fnu", "f4e2m1fnx2")


def minifloat_contract() -> pb.LaunchContract:
    """An fp8 output and a scalar of each 8-bit element type (fp8, the e8m0 scale, fp4 pairs)."""
    params = [P("z", OUT, "f8e4m3fn", [128]), P("x", IN, "f8e5m2", [-1])]
    return build_contract("mini", params + [P(f"s_{n}", SCALAR, n) for n in MINI])


def tf32_contract() -> pb.LaunchContract:
    params = [P("z", OUT, "tf32", [128]), P("x", IN, "tf32", [-1]), P("s", SCALAR, "tf32")]
    return build_contract("tf32", params)


def minifloat_args(**values: object) -> list[dict[str, Any]]:
    base: dict[str, object] = {
        "f8e4m3fn": 1.0,
        "f8e5m2": -0.5,
        "f8e8m0fnu": 0.25,
        "f4e2m1fnx2": 0xAB,
    }
    base.update(values)
    whole = [partition(tensor(Z, [256], "f8e4m3fn"), [128]), tensor(X, [256], "f8e5m2")]
    return whole + [scalar(v) for v in base.values()]  # type: ignore[arg-type]


def scalars(case: MakeCase) -> list[Case]:
    c = scalar_contract()
    x = tensor(X, [N])
    mini = minifloat_contract()
    return [
        case(
            "minifloats",
            "fp8 and e8m0 scalars as their codes, fp4 pairs as a byte",
            mini,
            minifloat_args(),
        ),
        case(
            "minifloat_ties",
            "halfway between two e4m3 values: the even code; e5m2 takes infinity",
            mini,
            minifloat_args(f8e4m3fn=1.0625, f8e5m2=float("inf")),
        ),
        case(
            "minifloat_nan",
            "NaN packs as each format's NaN",
            mini,
            minifloat_args(f8e4m3fn=float("nan"), f8e5m2=float("nan"), f8e8m0fnu=float("nan")),
        ),
        case(
            "e4m3_overflow",
            "480 is past e4m3's 448 by more than rounding",
            mini,
            minifloat_args(f8e4m3fn=480.0),
        ),
        case("e4m3_rounds_down", "463 rounds to 448", mini, minifloat_args(f8e4m3fn=463.0)),
        case("e8m0_negative", "the e8m0 scale has no sign", mini, minifloat_args(f8e8m0fnu=-1.0)),
        case(
            "fp4_pair_range",
            "a byte of two fp4 codes given 256",
            mini,
            minifloat_args(f4e2m1fnx2=256),
        ),
        case(
            "fp4_pair_float",
            "a byte of two fp4 codes given 1.5",
            mini,
            minifloat_args(f4e2m1fnx2=1.5),
        ),
        case(
            "tf32",
            "tf32 tensors (f32 bit patterns) and a tf32 scalar, packed as f32",
            tf32_contract(),
            [partition(tensor(Z, [256], "tf32"), [128]), tensor(X, [256], "tf32"), scalar(1.5)],
        ),
        case(
            "tf32_for_f32",
            "an f32 tensor for a tf32 parameter",
            tf32_contract(),
            [partition(tensor(Z, [256], "tf32"), [128]), tensor(X, [256], "f32"), scalar(1.5)],
        ),
        case(
            "fp8_tensor_dtype",
            "an e5m2 tensor for the e4m3 output",
            mini,
            [partition(tensor(Z, [256], "f8e5m2"), [128]), *minifloat_args()[1:]],
        ),
        case("extremes", "every scalar dtype at the edge of its range", c, scalar_args()),
        case(
            "rounding",
            "f16 and bf16 round to nearest even; ints given to float params; inf passes",
            c,
            scalar_args(f16=1.0 + 2.0**-11, bf16=3, f32=float("inf"), f64=1e300, bool=0),
        ),
        case(
            "nan", "NaN packs as the canonical quiet NaN in bf16", c, scalar_args(bf16=float("nan"))
        ),
        case("bool_two", "a bool param given 2", c, scalar_args(bool=2)),
        case("bool_float", "a bool param given 1.0", c, scalar_args(bool=1.0)),
        case("int_bool", "an int param given True", c, scalar_args(i32=True)),
        case("int_float", "an int param given 2.5", c, scalar_args(i32=2.5)),
        case("int_range_high", "i8 given 128", c, scalar_args(i8=128)),
        case("int_range_low", "u64 given -1", c, scalar_args(u64=-1)),
        case("u64_past", "u64 given 2^64", c, scalar_args(u64=2**64)),
        case("float_bool", "a float param given False", c, scalar_args(f32=False)),
        case("f16_overflow", "1e6 does not fit f16: the slot refuses it", c, scalar_args(f16=1e6)),
        case("f32_overflow", "1e300 does not fit f32", c, scalar_args(f32=1e300)),
        case(
            "bf16_overflow",
            "1e39 does not fit the f32 it rounds through",
            c,
            scalar_args(bf16=1e39),
        ),
        case(
            "saxpy_int",
            "an int for an f32 scalar",
            saxpy_contract(),
            [scalar(3), x, partition(tensor(Y, [N]), [128])],
        ),
    ]


# ---- assumptions ---------------------------------------------------------------------------


def assumed(kind: int, axis: int = 0, value: int = 0, param: int = 1) -> pb.LaunchContract:
    c = build_contract(
        "scale",
        [P("z", OUT, "f32", [64, 64]), P("x", IN, "f32", [-1, -1]), P("n", SCALAR, "i64")],
    )
    c.assumptions.add(param=param, kind=kind, axis=axis, value=value)
    return c


def scale_args(
    ptr: int = X, shape: list[int] | None = None, strides: list[int] | None = None, n: int = 7
) -> list[dict]:
    shape = shape or [512, 256]
    return [
        partition(tensor(Z, [512, 256]), [64, 64]),
        tensor(ptr, shape, strides=strides),
        scalar(n),
    ]


def assumptions(case: MakeCase) -> list[Case]:
    A = pb
    big = [2**31, 1]
    return [
        case(
            "base_align_ok",
            "16-byte aligned",
            assumed(A.ASSUMPTION_KIND_BASE_ALIGN, value=16),
            scale_args(),
        ),
        case(
            "base_align",
            "4 bytes past a 16-byte boundary",
            assumed(A.ASSUMPTION_KIND_BASE_ALIGN, value=16),
            scale_args(ptr=X + 4),
        ),
        case("dim_div_ok", "256 % 8", assumed(A.ASSUMPTION_KIND_DIM_DIV, 1, 8), scale_args()),
        case(
            "dim_div",
            "250 % 8",
            assumed(A.ASSUMPTION_KIND_DIM_DIV, 1, 8),
            scale_args(shape=[512, 250]),
        ),
        case(
            "stride_div",
            "row stride 250 % 8",
            assumed(A.ASSUMPTION_KIND_STRIDE_DIV, 0, 8),
            scale_args(shape=[512, 250]),
        ),
        case(
            "stride_div_ok",
            "row stride 256 % 8",
            assumed(A.ASSUMPTION_KIND_STRIDE_DIV, 0, 8),
            scale_args(),
        ),
        case(
            "stride_one",
            "a strided last axis",
            assumed(A.ASSUMPTION_KIND_STRIDE_ONE, 1, 1),
            scale_args(strides=[512, 2]),
        ),
        case(
            "stride_one_ok",
            "a unit last stride",
            assumed(A.ASSUMPTION_KIND_STRIDE_ONE, 1, 1),
            scale_args(),
        ),
        case(
            "static_dim",
            "dim 1 must be 256",
            assumed(A.ASSUMPTION_KIND_STATIC_DIM, 1, 256),
            scale_args(shape=[512, 128]),
        ),
        case(
            "static_dim_ok",
            "dim 1 is 256",
            assumed(A.ASSUMPTION_KIND_STATIC_DIM, 1, 256),
            scale_args(),
        ),
        case("nonneg_ok", "non-negative tensor", assumed(A.ASSUMPTION_KIND_NONNEG), scale_args()),
        case(
            "fits_i32",
            "a dim of 2^31",
            assumed(A.ASSUMPTION_KIND_FITS_I32),
            scale_args(shape=big, strides=[1, 1]),
        ),
        case(
            "fits_i32_span",
            "dims fit but the element span does not",
            assumed(A.ASSUMPTION_KIND_FITS_I32),
            scale_args(shape=[2, 2], strides=[2**31 - 1, 1]),
        ),
        case("fits_i32_ok", "everything fits", assumed(A.ASSUMPTION_KIND_FITS_I32), scale_args()),
        case(
            "scalar_nonneg", "n = -1", assumed(A.ASSUMPTION_KIND_NONNEG, param=2), scale_args(n=-1)
        ),
        case(
            "scalar_nonneg_ok", "n = 0", assumed(A.ASSUMPTION_KIND_NONNEG, param=2), scale_args(n=0)
        ),
        case(
            "scalar_fits_i32",
            "n = 2^31",
            assumed(A.ASSUMPTION_KIND_FITS_I32, param=2),
            scale_args(n=2**31),
        ),
        case(
            "scalar_fits_i32_low",
            "n = -2^31 fits",
            assumed(A.ASSUMPTION_KIND_FITS_I32, param=2),
            scale_args(n=-(2**31)),
        ),
        case(
            "output_assumption",
            "an assumption on the output",
            assumed(A.ASSUMPTION_KIND_BASE_ALIGN, value=256, param=0),
            [partition(tensor(Z + 16, [512, 256]), [64, 64]), tensor(X, [512, 256]), scalar(1)],
        ),
    ]


# ---- aliasing --------------------------------------------------------------------------------


def aliasing(case: MakeCase) -> list[Case]:
    z, x, y = add_args()
    return [
        case(
            "output_is_input", "z and x are the same memory", add_contract(), [z, tensor(Z, [N]), y]
        ),
        case(
            "partial_overlap",
            "x starts inside z",
            add_contract(),
            [z, tensor(Z + 4 * (N - 1), [N]), y],
        ),
        case(
            "adjacent",
            "x starts right after z: no overlap",
            add_contract(),
            [z, tensor(Z + 4 * N, [N]), y],
        ),
        case(
            "inputs_may_alias",
            "x and y the same memory: inputs only read",
            add_contract(),
            [z, x, tensor(X, [N])],
        ),
        case(
            "self_overlap",
            "an output with stride 0",
            add_contract(),
            [partition(tensor(Z, [N], strides=[0]), [128]), x, y],
        ),
        case(
            "self_overlap_2d",
            "rows that overlap each other",
            gemm_contract(),
            [
                partition(tensor(Z, [512, 256], strides=[100, 1]), [128, 64]),
                tensor(X, [512, 64]),
                tensor(Y, [64, 256]),
                scalar(64),
            ],
        ),
        case(
            "column_major_output",
            "a transposed output is disjoint",
            gemm_contract(),
            [
                partition(tensor(Z, [512, 256], strides=[1, 512]), [128, 64]),
                tensor(X, [512, 64]),
                tensor(Y, [64, 256]),
                scalar(64),
            ],
        ),
        *past_i128(case),
    ]


def past_i128(case: MakeCase) -> list[Case]:
    """Element counts past i128 are exact, as Python's ints are (a wrapped count of 0 once made
    the Rust host skip an input aliasing the output); byte extents and element spans past i128
    are outside the 64-bit address space, refused (the Rust host's checked sums overflow)."""
    big = 2**63 - 1
    wide = build_contract(
        "add64", [P("z", OUT, "f32", [128], "i64"), P("x", IN, "f32", [-1], "i64")]
    )
    cube = build_contract(
        "cube", [P("z", OUT, "f32", [4, 8, 16], "i64"), P("x", IN, "f32", [-1] * 3, "i64")]
    )
    fits = build_contract("cube", [P("z", OUT, "f32", [4, 8, 16]), P("x", IN, "f32", [-1] * 3)])
    fits.assumptions.add(param=1, kind=pb.ASSUMPTION_KIND_FITS_I32)
    pointee = build_contract("ptr_out", [P("z", OUT, "f32", [128]), P("p", POINTER)])
    z = partition(tensor(Z, [1024]), [128])
    z3 = partition(tensor(Z, [4, 8, 16]), [4, 8, 16])
    return [
        case(
            "input_elements_past_i128",
            "x of 2^128 elements (strides 0) at z's address: not empty, it overlaps z",
            build_contract("alias", [P("z", OUT, "f32", [128]), P("x", IN, "f32", [-1] * 4)]),
            [z, tensor(Z, [2**32] * 4, strides=[0] * 4)],
        ),
        case(
            "input_count_past_i128",
            "x of shape [2^62] * 3 (numel 2^186) with strides 0, far from z: accepted",
            cube,
            [z3, tensor(X, [2**62] * 3, strides=[0] * 3)],
        ),
        case(
            "input_count_past_address_space",
            "x of shape [2^62] * 3 with unit strides: 2^64 bytes from X, past 2^64",
            cube,
            [z3, tensor(X, [2**62] * 3, strides=[1] * 3)],
        ),
        case(
            "input_bytes_past_i128",
            "x of shape [2^63 - 1], stride 2^63 - 1: bytes past i128, refused",
            wide,
            [z, tensor(X, [big], strides=[big])],
        ),
        case(
            "output_bytes_past_i128",
            "z of shape [2^63 - 1], stride 2^63 - 1: bytes past i128, refused",
            wide,
            [partition(tensor(Z, [big], strides=[big]), [128]), tensor(X, [1024])],
        ),
        case(
            "pointee_below_zero",
            "a raw pointer's tensor with a negative stride, from below address 0: refused",
            pointee,
            [partition(tensor(0x40, [128]), [128]), tensor(0x100, [1000], strides=[-1])],
        ),
        case(
            "fits_i32_span_past_i128",
            "x of shape and strides [2^63 - 1] * 3 (FITS_I32: a span past i128): refused",
            fits,
            [z3, tensor(X, [big] * 3, strides=[big] * 3)],
        ),
    ]


# ---- grids: outputs, persistent, host, cluster ----------------------------------------------


def split_contract() -> pb.LaunchContract:
    """Two partitioned outputs and an input."""
    return build_contract(
        "split", [P("a", OUT, "f32", [64]), P("b", OUT, "f32", [64]), P("x", IN, "f32", [-1])]
    )


def persistent_contract(outputs: int = 1, map_shape: list[int] | None = None) -> pb.LaunchContract:
    groups = map_shape or [4, 1]
    params = [
        P(f"z{i}", MAPPED, "f32", [64, 64], extra={"map_shape": groups}) for i in range(outputs)
    ]
    return build_contract("persist", [*params, P("x", IN, "f32", [-1, -1])])


def grids(case: MakeCase) -> list[Case]:
    two = split_contract()
    wide = build_contract("wide", [P("z", OUT, "f32", [1, 1])])
    clustered = add_contract()
    clustered.launch.cluster_blocks = 2
    long_clustered = build_contract("long", [P("z", OUT, "f32", [1])])
    long_clustered.launch.cluster_blocks = 2
    clustered_persistent = persistent_contract()
    clustered_persistent.launch.cluster_blocks = 2
    x = tensor(X, [N])
    tiles_80 = tensor(Z, [1000, 300])
    return [
        case(
            "outputs_disagree",
            "two outputs with different grids",
            two,
            [
                partition(tensor(Z, [640]), [64]),
                partition(tensor(Y, [704]), [64]),
                tensor(X, [640]),
            ],
        ),
        case(
            "axis1_limit",
            "grid axis 1 past 65535",
            wide,
            [partition(tensor(Z, [1, 70000]), [1, 1])],
        ),
        case(
            "axis0_limit",
            "grid axis 0 past 2^31 - 1",
            build_contract("long", [P("z", OUT, "f32", [1])]),
            [partition(tensor(Z, [2**31]), [1])],
        ),
        case(
            "cluster_ok",
            "7814 tiles in clusters of 2: 15628 CTAs",
            clustered,
            add_args(n=7814 * 128),
        ),
        case(
            "cluster",
            "7813 tiles in clusters of 2: 15626 CTAs (a tile block is a cluster, any count)",
            clustered,
            add_args(),
        ),
        case(
            "cluster_limit",
            "2^30 tiles in clusters of 2: 2^31 CTAs, past the grid limit",
            long_clustered,
            [partition(tensor(FAR[0], [2**30]), [1])],
        ),
        case(
            "persistent",
            "(num_tile_blocks, 1, 1)",
            copy_persistent_contract(),
            [mapped(tiles_80, [64, 64], [4, 1], 16), tensor(X, [1000, 300])],
        ),
        case(
            "persistent_all_tiles",
            "one block per tile",
            persistent_contract(),
            [mapped(tiles_80, [64, 64], [4, 1], 80), tensor(X, [1000, 300])],
        ),
        case(
            "persistent_too_many",
            "more blocks than tiles",
            persistent_contract(),
            [mapped(tiles_80, [64, 64], [4, 1], 81), tensor(X, [1000, 300])],
        ),
        case(
            "persistent_owned",
            "an OWNED axis 0: one work item per column of tiles (5)",
            persistent_contract(map_shape=[0, 1]),
            [mapped(tiles_80, [64, 64], [0, 1], 5), tensor(X, [1000, 300])],
        ),
        case(
            "persistent_owned_too_many",
            "an OWNED axis 0: more blocks than work items",
            persistent_contract(map_shape=[0, 1]),
            [mapped(tiles_80, [64, 64], [0, 1], 6), tensor(X, [1000, 300])],
        ),
        case(
            "persistent_cluster",
            "a persistent grid of 15 in clusters of 2",
            clustered_persistent,
            [mapped(tiles_80, [64, 64], [4, 1], 15), tensor(X, [1000, 300])],
        ),
        case(
            "map_shape",
            "the wrong MAP",
            persistent_contract(),
            [mapped(tiles_80, [64, 64], [8, 1], 16), tensor(X, [1000, 300])],
        ),
        case(
            "mapped_tile",
            "the wrong tile",
            persistent_contract(),
            [mapped(tiles_80, [32, 64], [4, 1], 16), tensor(X, [1000, 300])],
        ),
        case(
            "mapped_given_partition",
            "a partition without a map",
            persistent_contract(),
            [partition(tiles_80, [64, 64]), tensor(X, [1000, 300])],
        ),
        case(
            "mapped_given_tensor",
            "a bare tensor",
            persistent_contract(),
            [tiles_80, tensor(X, [1000, 300])],
        ),
        case(
            "mapped_moved",
            "a consumed mapped partition",
            persistent_contract(),
            [{"moved": "mapped"}, tensor(X, [1000, 300])],
        ),
        case(
            "persistent_disagree",
            "two mapped outputs asking for different grids",
            persistent_contract(2),
            [
                mapped(tiles_80, [64, 64], [4, 1], 16),
                mapped(tensor(Y, [1000, 300]), [64, 64], [4, 1], 8),
                tensor(X, [1000, 300]),
            ],
        ),
        case(
            "persistent_limit",
            "2^31 blocks for 2^32 tiles",
            persistent_contract(),
            [
                mapped(tensor(FAR[0], [2**38, 64]), [64, 64], [4, 1], 2**31),
                tensor(FAR[2], [1000, 300]),
            ],
        ),
        case(
            "grid_for_outputs",
            "a grid given to a kernel whose outputs define it",
            add_contract(),
            add_args(),
            [4, 1, 1],
        ),
        case(
            "unused_x",
            "the add contract with x unused",
            add_contract(),
            [partition(tensor(Z, [N]), [128]), x, x],
        ),
        case(
            "mapped_work_items_past_i128",
            "a mapped z of 2^186 one-element tiles (strides 0: overlapping itself)",
            build_contract("mp", [P("z", MAPPED, "f32", [1, 1, 1], "i64")]),
            [mapped(tensor(Z, [2**62] * 3, strides=[0] * 3), [1, 1, 1], [1, 1, 1], 8)],
        ),
        case(
            "mapped_past_address_space",
            "a mapped z whose last rows lie past 2^64",
            persistent_contract(),
            [
                mapped(tensor(2**64 - 4 * 64 * 64, [128, 64]), [64, 64], [4, 1], 2),
                tensor(X, [1000, 300]),
            ],
        ),
        case(
            "outputs_listed_backwards",
            "output_params [1, 0]: the grid is the listed first's",
            _edited(_grid_params(1, 0), split_contract),
            [
                partition(tensor(Z, [640]), [64]),
                partition(tensor(Y, [704]), [64]),
                tensor(X, [640]),
            ],
        ),
    ]


# ---- raw pointers and host grids -------------------------------------------------------------


def pointers(case: MakeCase) -> list[Case]:
    c = scale_ptr_contract()
    good = [scalar(Y), scalar(X), scalar(2.0), scalar(4096)]
    # an entry without a partitioned output takes the host's grid, pointer or not
    scalars_only = build_contract("s", [P("n", SCALAR, "i32")])
    scalars_only.grid.mode = pb.GridRule.MODE_HOST
    clustered = scale_ptr_contract()
    clustered.launch.cluster_blocks = 2
    return [
        case("addresses", "two addresses, a scalar and a length", c, good, [4, 1, 1]),
        case(
            "tensors",
            "tensors as pointers: their base addresses",
            c,
            [tensor(Y, [4096]), tensor(X, [4096]), scalar(2.0), scalar(4096)],
            [4, 1, 1],
        ),
        case("no_grid", "a host-grid kernel without a grid", c, good),
        case("short_grid", "two grid axes", c, good, [4, 1]),
        case("zero_grid", "grid axis 0 of 0", c, good, [0, 1, 1]),
        case("grid_axis2", "grid axis 2 past 65535", c, good, [1, 1, 65536]),
        case("null_address", "address 0", c, [scalar(0), *good[1:]], [4, 1, 1]),
        case("huge_address", "address 2^64", c, [scalar(2**64), *good[1:]], [4, 1, 1]),
        case(
            "pointee_ends_at_2_64",
            "a pointee whose last byte is 2^64 - 1: accepted",
            c,
            [tensor(2**64 - 4 * 4096, [4096]), *good[1:]],
            [4, 1, 1],
        ),
        case(
            "pointee_past_2_64",
            "a pointee of 4096 floats from 2^64 - 4 * 4095: its last float past 2^64",
            c,
            [tensor(2**64 - 4 * 4095, [4096]), *good[1:]],
            [4, 1, 1],
        ),
        case(
            "pointee_down_to_0",
            "a pointee with stride -1 whose first byte is address 0: accepted",
            c,
            [*good[:1], tensor(4 * 4095, [4096], strides=[-1]), *good[2:]],
            [4, 1, 1],
        ),
        case(
            "pointee_below_0",
            "a pointee with stride -1 reaching 4 bytes below address 0",
            c,
            [*good[:1], tensor(4 * 4094, [4096], strides=[-1]), *good[2:]],
            [4, 1, 1],
        ),
        case(
            "input_past_2_64",
            "an input of N floats starting 4 KiB below 2^64",
            add_contract(),
            [add_args()[0], tensor(2**64 - 0x1000, [N]), add_args()[2]],
        ),
        case("pointer_bool", "True as an address", c, [scalar(True), *good[1:]], [4, 1, 1]),
        case("pointer_float", "a float as an address", c, [scalar(1.5), *good[1:]], [4, 1, 1]),
        case(
            "pointer_dtype",
            "an f16 tensor for an f32 pointer",
            c,
            [tensor(Y, [4096], "f16"), *good[1:]],
            [4, 1, 1],
        ),
        case(
            "pointer_partition",
            "a partition as a pointer",
            c,
            [partition(tensor(Y, [4096]), [128]), *good[1:]],
            [4, 1, 1],
        ),
        case(
            "pointer_moved",
            "a moved tensor as a pointer",
            c,
            [{"moved": "tensor"}, *good[1:]],
            [4, 1, 1],
        ),
        case(
            "pointer_devices",
            "pointees on two devices",
            c,
            [tensor(Y, [4096]), tensor(X, [4096], device=1), scalar(2.0), scalar(4096)],
            [4, 1, 1],
        ),
        case("host_no_pointer", "a host grid for scalars", scalars_only, [scalar(3)], [2, 1, 1]),
        case("host_no_pointer_no_grid", "the same without a grid", scalars_only, [scalar(3)]),
        case("host_cluster_ok", "a host grid of 4 in clusters of 2", clustered, good, [4, 1, 1]),
        case("host_cluster", "a host grid of 3 in clusters of 2", clustered, good, [3, 1, 1]),
    ]


# ---- hoisted launch checks ------------------------------------------------------------------


def q_const(value: int) -> pb.Quantity:
    return pb.Quantity(constant=value)


def q_dim(param: int, axis: int) -> pb.Quantity:
    return pb.Quantity(dim=pb.ParamAxis(param=param, axis=axis))


def q_tiles(param: int, axis: int, tile: int) -> pb.Quantity:
    return pb.Quantity(tile_count=pb.TileCount(param=param, axis=axis, tile=tile))


def q_grid(axis: int) -> pb.Quantity:
    return pb.Quantity(grid_axis=axis)


def checked(*checks: tuple[pb.Quantity, pb.Quantity, str]) -> pb.LaunchContract:
    c = gemm_contract()
    for lhs, rhs, cause in checks:
        c.launch_checks.add(lhs=lhs, rhs=rhs, cause=cause)
    return c


def launch_checks(case: MakeCase) -> list[Case]:
    cause = "part_x.load index on axis 0"
    rows = checked((q_grid(0), q_tiles(1, 0, 128), cause))
    return [
        case("tile_count_ok", "x has as many row tiles as the grid", rows, gemm_args()),
        case(
            "tile_count_round_up",
            "385 rows: both sides ceil to 4",
            rows,
            gemm_args(m=385, x_rows=385),
        ),
        case(
            "tile_count", "x one row short of the grid's tiles", rows, gemm_args(m=385, x_rows=384)
        ),
        case(
            "dim", "dim(x, 1) <= dim(y, 0)", checked((q_dim(1, 1), q_dim(2, 0), "k")), gemm_args()
        ),
        case(
            "dim_fails",
            "x wider than y is tall",
            checked((q_dim(1, 1), q_dim(2, 0), "k")),
            [
                partition(tensor(Z, [512, 256]), [128, 64]),
                tensor(X, [512, 65]),
                tensor(Y, [64, 256]),
                scalar(64),
            ],
        ),
        case(
            "constants",
            "0 <= 1 holds; 1 <= 0 does not",
            checked((q_const(0), q_const(1), "ok"), (q_const(1), q_const(0), "")),
            gemm_args(),
        ),
        case(
            "first_failing",
            "the first failing check is reported",
            checked(
                (q_const(0), q_const(1), "ok"),
                (q_const(2), q_const(1), "first"),
                (q_const(3), q_const(1), "second"),
            ),
            gemm_args(),
        ),
        case(
            "grid_axes",
            "axis 1 = 4 and axis 2 = 1",
            checked(
                (q_grid(1), q_const(4), "cols"),
                (q_grid(2), q_const(1), "layers"),
                (q_const(5), q_grid(1), "needs 5 column blocks"),
            ),
            gemm_args(),
        ),
        case(
            "before_packing",
            "a failing check is reported before a slot that cannot pack",
            checked((q_dim(1, 0), q_const(10), "x rows")),
            gemm_args(x_rows=2**31),
        ),
        case(
            "slot_range",
            "without the check, packing refuses a dim past i32",
            gemm_contract(),
            gemm_args(x_rows=2**31),
        ),
        case(
            "persistent_grid",
            "checks see (num_tile_blocks, 1, 1)",
            _persistent_checked(),
            [mapped(tensor(Z, [1000, 300]), [64, 64], [4, 1], 17), tensor(X, [1000, 300])],
        ),
    ]


def q_slab(param: int, axis: int, tile: int) -> pb.Quantity:
    return pb.Quantity(slab_tiles=pb.TileCount(param=param, axis=axis, tile=tile))


def slab_contract(with_check: bool = True) -> pb.LaunchContract:
    """`rows(z: &mut Tensor<f32, {[-1, 64]}>, x: &Tensor<f32, {[-1, -1]}>)` cutting z's
    slab into [32, 64] sub-tiles: the slab extent divides by 32 (SLAB_DIV) and, with the
    check, holds at least 2 of them."""
    c = build_contract(
        "rows",
        [P("z", OUT, "f32", [-1, 64]), P("x", IN, "f32", [-1, -1])],
        assumptions=[(0, pb.ASSUMPTION_KIND_SLAB_DIV, 0, 32)],
    )
    if with_check:
        c.launch_checks.add(lhs=q_const(2), rhs=q_slab(0, 0, 32), cause="two sub-tiles")
    return c


def slabs(case: MakeCase) -> list[Case]:
    def args(rows: int) -> list[dict[str, Any]]:
        return [partition(tensor(Z, [1024, 64]), [rows, 64]), tensor(X, [1024, 64])]

    return [
        case("slab_ok", "a slab of 64 rows: two sub-tiles of 32", slab_contract(), args(64)),
        case("slab_div", "a slab of 48 rows: 32 does not divide it", slab_contract(), args(48)),
        case("slab_check", "a slab of 32 rows: one sub-tile, not two", slab_contract(), args(32)),
        case(
            "slab_any_tile",
            "any partition tile extent where the contract says -1",
            slab_contract(with_check=False),
            args(96),
        ),
        case(
            "slab_fixed_axis",
            "axis 1 is still fixed at 64",
            slab_contract(with_check=False),
            [partition(tensor(Z, [1024, 64]), [64, 32]), tensor(X, [1024, 64])],
        ),
    ]


def _persistent_checked() -> pb.LaunchContract:
    c = copy_persistent_contract()
    c.launch_checks.add(lhs=q_grid(0), rhs=q_tiles(1, 0, 64), cause="x row tiles")
    c.launch_checks.add(lhs=q_grid(1), rhs=q_const(1), cause="one row of blocks")
    return c


# ---- malformed contracts -------------------------------------------------------------------


def _edited(
    edit: Callable[[pb.LaunchContract], object],
    base: Callable[[], pb.LaunchContract] = add_contract,
) -> pb.LaunchContract:
    c = base()
    edit(c)
    return c


def _set(path: str, value: object) -> Callable[[pb.LaunchContract], None]:
    def edit(c: pb.LaunchContract) -> None:
        *parents, leaf = path.split(".")
        target: Any = c
        for part in parents:
            target = target[int(part)] if part.isdigit() else getattr(target, part)
        setattr(target, leaf, value)

    return edit


def _slot_type(slot: int, ctype: str) -> Callable[[pb.LaunchContract], None]:
    def edit(c: pb.LaunchContract) -> None:
        c.abi[slot].ctype = ctype
        c.abi[slot].size = ctype_size(ctype)

    return edit


def _grid_params(*listed: int) -> Callable[[pb.LaunchContract], None]:
    def edit(c: pb.LaunchContract) -> None:
        c.grid.output_params[:] = listed

    return edit


def _waits_for_prior_grids(bytecode: str, sm: str) -> Callable[[pb.LaunchContract], None]:
    def edit(c: pb.LaunchContract) -> None:
        c.launch.waits_for_prior_grids = True
        c.target.bytecode_version = bytecode
        c.target.sm = sm

    return edit


def contracts(case: MakeCase) -> list[Case]:
    add = add_args()
    bad: list[tuple[str, str, pb.LaunchContract]] = [
        ("schema", "an unknown schema_version", _edited(_set("schema_version", 2))),
        ("entry_symbol", "no entry symbol", _edited(_set("kernel.entry_symbol", ""))),
        ("param_index", "a param index off its position", _edited(_set("params.1.index", 5))),
        ("param_kind", "an unknown param kind", _edited(_set("params.1.kind", 9))),
        ("param_dtype", "an unknown dtype", _edited(_set("params.1.dtype", "f8e4m3"))),
        (
            "output_rank",
            "an output of rank 4",
            _edited(
                lambda c: (
                    setattr(c.params[0], "rank", 4),
                    c.params[0].tile_shape.extend([1, 1, 1]),
                )
            ),
        ),
        (
            "tile_rank",
            "a tile shape of the wrong rank",
            _edited(lambda c: c.params[0].tile_shape.append(2)),
        ),
        ("tile_zero", "a zero tile", _edited(lambda c: c.params[0].tile_shape.__setitem__(0, 0))),
        (
            "declared_shape",
            "a declared extent of -2",
            _edited(lambda c: c.params[1].declared_shape.__setitem__(0, -2)),
        ),
        ("scalar_rank", "a scalar with a rank", _edited(_set("params.0.rank", 1), saxpy_contract)),
        (
            "map_shape",
            "a map shape on a partitioned output",
            _edited(lambda c: c.params[0].map_shape.append(1)),
        ),
        (
            "mapped_map_rank",
            "a map shape of the wrong rank",
            _edited(lambda c: c.params[0].map_shape.append(1), copy_persistent_contract),
        ),
        ("slot_param", "a slot of a missing param", _edited(_set("abi.10.param", 7))),
        ("slot_role", "an unknown slot role", _edited(_set("abi.10.role", 0))),
        (
            "slot_role_kind",
            "a VALUE slot of a tensor",
            _edited(_set("abi.10.role", pb.SLOT_ROLE_VALUE)),
        ),
        (
            "slot_part_role",
            "a PART_DIM slot of an input",
            _edited(_set("abi.10.role", pb.SLOT_ROLE_PART_DIM)),
        ),
        ("slot_axis", "a DIM slot past the rank", _edited(_set("abi.9.axis", 1))),
        ("slot_ctype", "an unknown ctype", _edited(_set("abi.10.ctype", "c64"))),
        ("slot_size", "a size that is not the ctype's", _edited(_set("abi.10.size", 8))),
        ("slot_align", "an i32 slot at an odd offset", _edited(_set("abi.10.offset", 53))),
        (
            "ptr_size",
            "a 4-byte pointer slot",
            _edited(lambda c: (setattr(c.abi[0], "ctype", "u32"), setattr(c.abi[0], "size", 4))),
        ),
        ("ptr_float", "a PTR slot typed f64", _edited(_slot_type(0, "f64"))),
        ("ptr_signed", "a PTR slot typed i64", _edited(_slot_type(0, "i64"))),
        (
            "dim_float",
            "a DIM slot typed f32 (the kernel reads a float's bits as the extent)",
            _edited(_slot_type(1, "f32")),
        ),
        ("stride_unsigned", "a STRIDE slot typed u32", _edited(_slot_type(2, "u32"))),
        ("part_dim_float", "a PART_DIM slot typed f32", _edited(_slot_type(3, "f32"))),
        ("part_stride_short", "a PART_STRIDE slot typed i16", _edited(_slot_type(4, "i16"))),
        (
            "value_class",
            "an f32 scalar's VALUE slot typed i32",
            _edited(_slot_type(0, "i32"), saxpy_contract),
        ),
        (
            "value_width",
            "an f32 scalar's VALUE slot typed f64",
            _edited(_slot_type(0, "f64"), saxpy_contract),
        ),
        ("slot_overlap", "two slots at one offset", _edited(_set("abi.10.offset", 48))),
        (
            "buffer_bytes",
            "a parameter buffer smaller than its slots",
            _edited(_set("launch.param_buffer_bytes", 40)),
        ),
        ("grid_mode", "no grid mode", _edited(_set("grid.mode", 0))),
        (
            "grid_mixed",
            "a partitioned output under PERSISTENT",
            _edited(_set("grid.mode", pb.GridRule.MODE_PERSISTENT)),
        ),
        (
            "grid_param",
            "a grid param that is an input",
            _edited(lambda c: c.grid.output_params.append(1)),
        ),
        (
            "grid_no_output",
            "FROM_OUTPUTS without an output",
            build_contract("noout", [P("x", IN, "f32", [-1])]),
        ),
        ("host_outputs", "HOST with an output", _edited(_set("grid.mode", pb.GridRule.MODE_HOST))),
        (
            "grid_output_subset",
            "output_params naming one of two outputs (the other's grid never compared)",
            _edited(_grid_params(0), split_contract),
        ),
        (
            "grid_output_twice",
            "output_params naming the output twice",
            _edited(_grid_params(0, 0)),
        ),
        (
            "grid_mapped_subset",
            "output_params naming one of two mapped outputs",
            _edited(_grid_params(1), lambda: persistent_contract(2)),
        ),
        ("block", "a block of two dims", _edited(lambda c: c.launch.block.__delitem__(2))),
        (
            "assumption_param",
            "an assumption on a missing param",
            _edited(lambda c: c.assumptions.add(param=9, kind=pb.ASSUMPTION_KIND_NONNEG)),
        ),
        (
            "assumption_kind",
            "an unknown assumption kind",
            _edited(lambda c: c.assumptions.add(param=1, kind=42)),
        ),
        (
            "assumption_pointer",
            "an assumption on a raw pointer",
            _edited(
                lambda c: c.assumptions.add(param=0, kind=pb.ASSUMPTION_KIND_BASE_ALIGN, value=16),
                scale_ptr_contract,
            ),
        ),
        (
            "assumption_scalar",
            "DIM_DIV on a scalar",
            _edited(
                lambda c: c.assumptions.add(param=0, kind=pb.ASSUMPTION_KIND_DIM_DIV, value=2),
                saxpy_contract,
            ),
        ),
        (
            "assumption_axis",
            "STRIDE_ONE past the rank",
            _edited(
                lambda c: c.assumptions.add(
                    param=1, kind=pb.ASSUMPTION_KIND_STRIDE_ONE, axis=1, value=1
                )
            ),
        ),
        (
            "assumption_value",
            "BASE_ALIGN of 0",
            _edited(
                lambda c: c.assumptions.add(param=1, kind=pb.ASSUMPTION_KIND_BASE_ALIGN, value=0)
            ),
        ),
        (
            "check_empty",
            "a launch check with no lhs",
            _edited(lambda c: c.launch_checks.add(rhs=q_const(1), cause="no lhs")),
        ),
        (
            "check_grid_axis",
            "grid axis 3",
            _edited(lambda c: c.launch_checks.add(lhs=q_grid(3), rhs=q_const(1))),
        ),
        (
            "check_param",
            "a dim of a missing param",
            _edited(lambda c: c.launch_checks.add(lhs=q_dim(7, 0), rhs=q_const(1))),
        ),
        (
            "check_scalar",
            "a dim of a scalar",
            _edited(lambda c: c.launch_checks.add(lhs=q_dim(0, 0), rhs=q_const(1)), saxpy_contract),
        ),
        (
            "check_axis",
            "a dim past the rank",
            _edited(lambda c: c.launch_checks.add(lhs=q_dim(1, 1), rhs=q_const(1))),
        ),
        (
            "check_tile",
            "a tile count of tile 0",
            _edited(lambda c: c.launch_checks.add(lhs=q_tiles(1, 0, 0), rhs=q_const(1))),
        ),
        (
            "check_slab_input",
            "slab tiles of an input",
            _edited(lambda c: c.launch_checks.add(lhs=q_slab(1, 0, 32), rhs=q_const(1))),
        ),
        (
            "check_slab_tile",
            "slab tiles of tile 0",
            _edited(lambda c: c.launch_checks.add(lhs=q_slab(0, 0, 0), rhs=q_const(1))),
        ),
        (
            "assumption_slab_input",
            "SLAB_DIV on an input",
            _edited(
                lambda c: c.assumptions.add(param=1, kind=pb.ASSUMPTION_KIND_SLAB_DIV, value=32)
            ),
        ),
        (
            "prior_grids_bytecode",
            "waits for prior grids, from bytecode 13.3 (no wait there)",
            _edited(_waits_for_prior_grids("13.3", "sm_90")),
        ),
        (
            "prior_grids_sm",
            "waits for prior grids, for sm_80 (tileiras drops the wait)",
            _edited(_waits_for_prior_grids("13.4", "sm_80")),
        ),
        (
            "prior_grids_unknown",
            "waits for prior grids, no bytecode version",
            _edited(_waits_for_prior_grids("", "sm_90")),
        ),
        (
            "prior_grids_superscript",
            "waits for prior grids, bytecode 13.\u00b2 (a digit to str.isdigit, not to int)",
            _edited(_waits_for_prior_grids("13.\u00b2", "sm_90")),
        ),
        (
            "prior_grids_arabic_digits",
            "waits for prior grids, bytecode 13.4 in Arabic-Indic digits (ASCII digits only)",
            _edited(_waits_for_prior_grids("\u0661\u0663.\u0664", "sm_90")),
        ),
        (
            "prior_grids_arabic_sm",
            "waits for prior grids, sm_90 in Arabic-Indic digits",
            _edited(_waits_for_prior_grids("13.4", "sm_\u0669\u0660")),
        ),
        (
            "buffer_limit",
            "a parameter buffer past the driver's 32764 bytes",
            _edited(_set("launch.param_buffer_bytes", 2**32 - 1)),
        ),
        (
            "slot_far",
            "a slot at offset 40000: the buffer it implies is past the limit",
            _edited(
                lambda c: (
                    setattr(c.abi[10], "offset", 40000)
                    or setattr(c.launch, "param_buffer_bytes", 0)
                )
            ),
        ),
        (
            "slot_missing",
            "a tensor input without its stride slot",
            _edited(lambda c: c.abi.__delitem__(10)),
        ),
        (
            "slot_twice",
            "a DIM slot given twice",
            _edited(lambda c: (c.abi[10].CopyFrom(c.abi[9]), setattr(c.abi[10], "offset", 52))),
        ),
        (
            "value_missing",
            "a scalar without its VALUE slot",
            _edited(lambda c: c.abi.__delitem__(0), saxpy_contract),
        ),
        (
            "ctype_escaped",
            "a ctype with control characters and quotes, quoted as Python's ascii()",
            _edited(_set("abi.10.ctype", "it's\x1b[2J\u00e9")),
        ),
        (
            "mapped_any_tile",
            "a -1 tile on a mapped output (only a partitioned one takes any extent)",
            _edited(lambda c: c.params[0].tile_shape.__setitem__(0, -1), copy_persistent_contract),
        ),
        (
            "mapped_tile_zero",
            "a 0 tile on a mapped output",
            _edited(lambda c: c.params[0].tile_shape.__setitem__(0, 0), copy_persistent_contract),
        ),
        (
            "mapped_all_owned",
            "a map with no group (every axis OWNED)",
            _edited(
                lambda c: c.params[0].map_shape.__setitem__(1, 0),
                lambda: copy_persistent_contract(map_shape=(0, 1)),
            ),
        ),
    ]
    return [case(name, about, contract, add) for name, about, contract in bad]


# ---- fuzzed: a seeded sample of the launch-contract fuzzer's inputs ---------------------------

# inputs of tests/fuzz/contract_inputs.py kept as vectors (the long run, and a fresh sample in
# every pytest run: tests/fuzz/launch_contracts.py)
FUZZED = 40


def fuzzed(case: MakeCase) -> list[Case]:
    from tests.fuzz.contract_inputs import describe, make_input
    from tests.fuzz.launch_contracts import planner_verdict

    inputs = (make_input("vectors", i) for i in range(FUZZED))
    return [
        case(f"input_{i}", describe(x), x.contract, x.args, x.grid)
        for i, x in enumerate(inputs)
        if "unbuildable" not in planner_verdict(x)  # no host holds such arguments
    ]


FAMILIES: dict[str, Callable[[MakeCase], list[Case]]] = {
    "accepted": accepted,
    "binding": binding,
    "tensors": tensors,
    "scalars": scalars,
    "assumptions": assumptions,
    "aliasing": aliasing,
    "grids": grids,
    "pointers": pointers,
    "launch_checks": launch_checks,
    "slabs": slabs,
    "contracts": contracts,
    "fuzzed": fuzzed,
}
