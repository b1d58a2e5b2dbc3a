"""`mmaf` / `mmai` / `mmaf_scaled`: real GEMM tiles assembled for Ampere, Hopper and
Blackwell; the shape and element-type rules; the 13.3 `fast_acc` flag; fp8 on Hopper and
block-scaled fp8/fp4 on Blackwell."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lowering.bytecode.tables import BytecodeError
from lowering.bytecode.writer import write_bytecode
from lowering.cubin_info import function_symbols
from lowering.ir import ops_core as core
from lowering.ir.attributes import Signedness
from lowering.ir.core import Builder, Function, Module, Op
from lowering.ir.ops_matmul import MmaF, MmaFScaled, MmaI
from lowering.ir.types import ElementType, TileType
from lowering.ir.verify import verify_module
from lowering.tileiras import Tileiras
from parser.prelude.mma import mma_accumulators
from parser.types import Elem
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
    cubin = tileiras.assemble(write_bytecode(module), arch=sm)
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
        tileiras.assemble(write_bytecode(module), arch=sm)


@pytest.mark.tileiras
def test_integer_mma(tileiras: Tileiras, disassemble: Callable[[bytes], str]) -> None:
    module = build_mma(E.I8, E.I32, signedness_rhs=Signedness.UNSIGNED)
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    assert "mmai %tile, %tile_6, %cst_0_i32_8 signed unsigned : tile<64x32xi8>" in text
    for sm in SMS:
        tileiras.assemble(write_bytecode(module), arch=sm)


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
    tileiras.assemble(write_bytecode(module), arch="sm_90")


@pytest.mark.tileiras
def test_mmaf_before_13_3_has_no_flags(tileiras: Tileiras) -> None:
    plain = build_mma(E.F16, E.F32)
    for version in ((13, 1), (13, 2)):
        tileiras.assemble(write_bytecode(plain, version), arch="sm_90")
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


@pytest.mark.parametrize("operand", [e for e in Elem if mma_accumulators(e)], ids=str)
def test_every_pair_the_front_end_accepts_verifies(operand: Elem) -> None:
    """The front end and the IR verifier read one accumulator table: what `mma` types, the
    op accepts (cuTile's `mma` may take less than Tile IR: fp4 goes to `mmaf_scaled`)."""
    lhs = ElementType(operand.spec.ir)
    for acc in mma_accumulators(operand):
        op_class: type[Op] = MmaF if operand.is_float else MmaI
        errors = _mma_errors(op_class, _t(lhs, 8, 8), _t(lhs, 8, 8), _t(E(acc.spec.ir), 8, 8))
        assert errors == [], (operand, acc)


def test_mmai_rejections() -> None:
    assert _mma_errors(MmaI, _t(E.I8, 8, 16), _t(E.I8, 16, 8), _t(E.I32, 8, 8)) == []
    assert _mma_errors(MmaI, _t(E.I16, 8, 8), _t(E.I16, 8, 8), _t(E.I32, 8, 8)) == [
        "operands must be i8, got i16"
    ]
    assert _mma_errors(MmaI, _t(E.I8, 8, 8), _t(E.I8, 8, 8), _t(E.I16, 8, 8)) == [
        "accumulator must be i32, got i16"
    ]


@pytest.mark.tileiras
@pytest.mark.parametrize("operand", [E.F8E4M3FN, E.F8E5M2])
@pytest.mark.parametrize("acc", [E.F32, E.F16])
def test_fp8_gemm_tiles_assemble_for_hopper(
    operand: ElementType, acc: ElementType, tileiras: Tileiras
) -> None:
    """Hopper has fp8 wgmma: e4m3/e5m2 operands with an f32 or f16 accumulator."""
    module = build_mma(operand, acc, ((128, 64), (64, 128), (128, 128)))
    assert verify_module(module) == []
    for sm in ("sm_90", "sm_100"):
        cubin = tileiras.assemble(write_bytecode(module), arch=sm)
        assert module.functions[0].name in function_symbols(cubin)


def build_mma_scaled(operand: ElementType, scale: ElementType, block: int) -> Module:
    """c = (a * sa) @ (b * sb) + 0 for [16, 128] x [128, 16] tiles."""
    m, k, n = 16, 128, 16
    tiles = (
        TileType(operand, (m, k)),
        TileType(operand, (k, n)),
        TileType(E.F32, (m, n)),
        TileType(scale, (m, k // block)),
        TileType(scale, (k // block, n)),
    )
    kernel = start_view_kernel(*tiles)
    a, b, sa, sb = (kernel.load(i) for i in (0, 1, 3, 4))
    zero = kernel.const(tiles[2], 0.0)
    product = kernel.b.emit(
        MmaFScaled, result=tiles[2], lhs=a, rhs=b, acc=zero, lhs_scale=sa, rhs_scale=sb
    )
    kernel.store(2, product.result)
    return kernel.finish(f"mma_scaled_{operand}_{scale}_{block}")


@pytest.mark.tileiras
@pytest.mark.parametrize(
    ("operand", "scale", "block"),
    [
        (E.F8E4M3FN, E.F8E8M0FNU, 32),  # MXFP8
        (E.F8E5M2, E.F8E8M0FNU, 32),
        (E.F4E2M1FN, E.F8E8M0FNU, 32),  # MXFP4
        (E.F4E2M1FN, E.F8E4M3FN, 16),  # NVFP4
    ],
)
def test_block_scaled_tiles_assemble_for_blackwell(
    operand: ElementType, scale: ElementType, block: int, tileiras: Tileiras
) -> None:
    module = build_mma_scaled(operand, scale, block)
    assert verify_module(module) == []
    for sm in ("sm_100", "sm_120"):
        cubin = tileiras.assemble(write_bytecode(module), arch=sm)
        assert module.functions[0].name in function_symbols(cubin)
    with pytest.raises(BytecodeError, match=r"(mmaf_scaled: the op|f4E2M1FN) needs bytecode 13.3"):
        write_bytecode(module, (13, 2))


def _scaled_errors(lhs: TileType, rhs: TileType, acc: TileType, sa: TileType, sb: TileType):
    b = Builder()
    values = [
        b.emit(core.Constant, result=t, values=(0.0,)).result for t in (lhs, rhs, acc, sa, sb)
    ]
    b.emit(
        MmaFScaled,
        result=acc,
        lhs=values[0],
        rhs=values[1],
        acc=values[2],
        lhs_scale=values[3],
        rhs_scale=values[4],
    )
    b.emit(core.Return)
    module = Module((Function("k", (), b.finish(())),))
    return [e.removeprefix("@k: mmaf_scaled: ") for e in verify_module(module)]


@pytest.mark.parametrize(
    ("operand", "acc", "scales", "message"),
    [
        (E.F8E4M3FN, E.F32, ((16, 2), (2, 16), E.F8E8M0FNU), None),
        (E.F8E4M3FN, E.F16, ((16, 2), (2, 16), E.F8E8M0FNU), "the accumulator must be f32"),
        (E.F8E4M3FN, E.F32, ((16, 4), (4, 16), E.F8E8M0FNU), "covers 32 K elements"),
        (E.F8E4M3FN, E.F32, ((16, 2), (2, 16), E.F8E4M3FN), "do not scale f8E4M3FN"),
        (E.F8E4M3FN, E.F32, ((16, 2), (16, 2), E.F8E8M0FNU), "scales must be [16, 2] and"),
        (E.F4E2M1FN, E.F32, ((16, 4), (4, 16), E.F8E4M3FN), None),
        (E.F4E2M1FN, E.F32, ((16, 2), (2, 16), E.F8E4M3FN), "covers 16 K elements"),
        (E.F16, E.F32, ((16, 2), (2, 16), E.F8E8M0FNU), "do not scale f16"),
    ],
)
def test_mmaf_scaled_rules(operand, acc, scales, message) -> None:
    sa, sb, scale = scales
    errors = _scaled_errors(
        _t(operand, 16, 64), _t(operand, 64, 16), _t(acc, 16, 16), _t(scale, *sa), _t(scale, *sb)
    )
    if message is None:
        assert errors == []
    else:
        assert any(message in e for e in errors), errors
