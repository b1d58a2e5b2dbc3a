"""`mmaf` / `mmai`: real GEMM tiles assembled for Ampere, Hopper and Blackwell; the
shape and element-type rules; the 13.3 `fast_acc` flag."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lowering.bytecode.tables import BytecodeError
from lowering.bytecode.writer import write_bytecode
from lowering.cubin_info import function_symbols
from lowering.ir import ops_core as core
from lowering.ir.attributes import Signedness
from lowering.ir.core import Builder, Function, Module, Op
from lowering.ir.ops_matmul import MmaF, MmaI
from lowering.ir.types import ElementType, TileType
from lowering.ir.verify import verify_module
from lowering.tileiras import Tileiras
from tests.lowering.view_kernels import start_view_kernel

E = ElementType
SMS = ("sm_80", "sm_90", "sm_100")


def build_mma(
    operand: ElementType,
    acc: ElementType,
    shapes: tuple[tuple[int, ...], ...] = ((64, 32), (32, 64), (64, 64)),
    **fields: object,
) -> Module:
    """c = a @ b + 0 for one tile of each tensor (a: [M,K], b: [K,N], c: [M,N])."""
    a_shape, b_shape, c_shape = shapes
    tiles = (TileType(operand, a_shape), TileType(operand, b_shape), TileType(acc, c_shape))
    k = start_view_kernel(*tiles)
    a, b = k.load(0), k.load(1)
    zero = k.const(tiles[2], 0 if acc is E.I32 else 0.0)
    op_class: type[Op] = MmaI if acc is E.I32 else MmaF
    product = k.b.emit(op_class, result=tiles[2], lhs=a, rhs=b, acc=zero, **fields)
    k.store(2, product.results[0])
    return k.finish(f"mma_{operand}_{acc}")


@pytest.mark.tileiras
@pytest.mark.parametrize("sm", SMS)
@pytest.mark.parametrize("operand", [E.F16, E.BF16])
def test_f16_and_bf16_gemm_tiles_assemble(
    operand: ElementType, sm: str, tileiras: Tileiras, disassemble: Callable[[bytes], str]
) -> None:
    module = build_mma(operand, E.F32)
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    assert (
        f"mmaf %tile, %tile_6, %cst_0_f32 : tile<64x32x{operand}>, tile<32x64x{operand}>,"
        " tile<64x64xf32>"
    ) in text
    cubin = tileiras.assemble(write_bytecode(module), sm=sm)
    assert module.functions[0].name in function_symbols(cubin)


@pytest.mark.tileiras
@pytest.mark.parametrize(
    ("operand", "acc"),
    [(E.F16, E.F16), (E.TF32, E.F32), (E.F32, E.F32), (E.F64, E.F64)],
)
def test_other_float_combinations_assemble(
    operand: ElementType, acc: ElementType, tileiras: Tileiras
) -> None:
    module = build_mma(operand, acc)
    assert verify_module(module) == []
    for sm in SMS:
        tileiras.assemble(write_bytecode(module), sm=sm)


@pytest.mark.tileiras
def test_integer_mma(tileiras: Tileiras, disassemble: Callable[[bytes], str]) -> None:
    module = build_mma(E.I8, E.I32, signedness_rhs=Signedness.UNSIGNED)
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    assert "mmai %tile, %tile_6, %cst_0_i32_8 signed unsigned : tile<64x32xi8>" in text
    for sm in SMS:
        tileiras.assemble(write_bytecode(module), sm=sm)


@pytest.mark.tileiras
def test_batched_mma_with_fast_acc(tileiras: Tileiras, disassemble: Callable[[bytes], str]) -> None:
    shapes = ((2, 64, 32), (2, 32, 64), (2, 64, 64))
    module = build_mma(E.F16, E.F32, shapes, fast_acc=True)
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    assert (
        "mmaf %tile, %tile_6, %cst_0_f32 fast_acc : tile<2x64x32xf16>, tile<2x32x64xf16>,"
        " tile<2x64x64xf32>"
    ) in text
    tileiras.assemble(write_bytecode(module), sm="sm_90")


@pytest.mark.tileiras
def test_mmaf_before_13_3_has_no_flags(tileiras: Tileiras) -> None:
    plain = build_mma(E.F16, E.F32)
    for version in ((13, 1), (13, 2)):
        tileiras.assemble(write_bytecode(plain, version), sm="sm_90")
    with pytest.raises(BytecodeError, match=r"mmaf: fast_acc needs bytecode 13.3 or later"):
        write_bytecode(build_mma(E.F16, E.F32, fast_acc=True), (13, 2))


def _mma_errors(
    op_class: type[Op], lhs: TileType, rhs: TileType, acc: TileType, result: TileType | None = None
) -> list[str]:
    b = Builder()
    zero = 0.0 if op_class is MmaF else 0
    lhs_v, rhs_v, acc_v = (
        b.emit(core.Constant, result=t, values=(zero,)).result for t in (lhs, rhs, acc)
    )
    b.emit(op_class, result=result or acc, lhs=lhs_v, rhs=rhs_v, acc=acc_v)
    b.emit(core.Return)
    module = Module((Function("k", (), b.finish(())),))
    return [e.removeprefix(f"@k: {op_class.NAME}: ") for e in verify_module(module)]


def _t(element: ElementType, *shape: int) -> TileType:
    return TileType(element, shape)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((_t(E.F16, 64, 32), _t(E.F16, 16, 64), _t(E.F32, 64, 64)), "K of lhs (32) differs"),
        ((_t(E.F16, 64, 32), _t(E.F16, 32, 64), _t(E.F32, 32, 64)), "acc must be [64,64]"),
        ((_t(E.F16, 2, 8, 8), _t(E.F16, 4, 8, 8), _t(E.F32, 2, 8, 8)), "batch sizes differ"),
        ((_t(E.F16, 8, 8), _t(E.F16, 8, 8), _t(E.F32, 2, 8, 8)), "same rank"),
        ((_t(E.F16, 8), _t(E.F16, 8), _t(E.F32, 8)), "rank 2 ([M,K]) or rank 3"),
        ((_t(E.BF16, 8, 8), _t(E.BF16, 8, 8), _t(E.F16, 8, 8)), "bf16 operands need a f32"),
        ((_t(E.F32, 8, 8), _t(E.F32, 8, 8), _t(E.F64, 8, 8)), "f32 operands need a f32"),
        ((_t(E.F64, 8, 8), _t(E.F64, 8, 8), _t(E.F32, 8, 8)), "f64 operands need a f64"),
        ((_t(E.F16, 8, 8), _t(E.BF16, 8, 8), _t(E.F32, 8, 8)), "share one element type"),
        ((_t(E.I8, 8, 8), _t(E.I8, 8, 8), _t(E.F32, 8, 8)), "unsupported operand element"),
    ],
)
def test_mmaf_rejections(args: tuple[TileType, TileType, TileType], message: str) -> None:
    errors = _mma_errors(MmaF, *args)
    assert any(message in e for e in errors), errors


def test_result_must_match_acc() -> None:
    errors = _mma_errors(MmaF, _t(E.F16, 8, 8), _t(E.F16, 8, 8), _t(E.F32, 8, 8), _t(E.F16, 8, 8))
    assert errors == ["result must have the accumulator's type tile<8x8xf32>"]


def test_mmai_rejections() -> None:
    assert _mma_errors(MmaI, _t(E.I8, 8, 16), _t(E.I8, 16, 8), _t(E.I32, 8, 8)) == []
    assert _mma_errors(MmaI, _t(E.I16, 8, 8), _t(E.I16, 8, 8), _t(E.I32, 8, 8)) == [
        "operands must be i8, got i16"
    ]
    assert _mma_errors(MmaI, _t(E.I8, 8, 8), _t(E.I8, 8, 8), _t(E.I16, 8, 8)) == [
        "accumulator must be i32, got i16"
    ]
