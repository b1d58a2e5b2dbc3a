"""`lowering.widen_accumulators`: f16 mma accumulators of loops inside loops are carried in
f32 and rounded once after the loop, unless the request asks for exact accumulators; every
other loop is left as it was."""

from __future__ import annotations

import pytest

from lowering.ir.core import Function, walk
from lowering.ir.ops_control import For
from lowering.ir.ops_convert import FToF
from lowering.ir.ops_core import Constant
from lowering.ir.ops_matmul import MmaF
from lowering.ir.printer import print_module
from lowering.ir.types import ElementType, TileType
from lowering.pipeline import CompileRequest, CompileResult, Stage, compile_kernel
from parser.render import render
from parser.spans import SourceFile

F16, F32 = ElementType.F16, ElementType.F32
GENERICS = (("BM", "64"), ("BN", "64"), ("BK", "32"))


def gemm(accumulator: str, init: str, update: str = "acc = mma(a, b, acc);") -> str:
    """A persistent GEMM over output tiles (the loop over k inside the loop over tiles)."""
    return f"""
#[cutile::module]
mod k {{
    use cutile::core::*;
    #[cutile::entry()]
    fn f<const BM: i32, const BN: i32, const BK: i32>(
        mut z: MappedPartitionMut<f16, {{ [BM, BN] }}, {{ [4, 1] }}>,
        x: &Tensor<f16, {{ [-1, -1] }}>,
        y: &Tensor<f16, {{ [-1, -1] }}>,
    ) {{
        let px = x.partition(const_shape![BM, BK]);
        let py = y.partition(const_shape![BK, BN]);
        for index in z.iter_indices() {{
            let (m, n) = index.components();
            let mut acc: Tile<{accumulator}, {{ [BM, BN] }}> = {init};
            for kt in 0i32..num_tiles(&px, 1) {{
                let a = px.load([m, kt]);
                let b = py.load([kt, n]);
                {update}
            }}
            let out: Tile<f16, {{ [BM, BN] }}> = convert_tile(acc);
            z.store(out, index);
        }}
    }}
}}
"""


TOP_LEVEL = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    fn f<const BM: i32, const BN: i32, const BK: i32>(
        z: &mut Tensor<f16, { [BM, BN] }>,
        x: &Tensor<f16, { [-1, -1] }>,
        y: &Tensor<f16, { [-1, -1] }>,
    ) {
        let px = x.partition(const_shape![BM, BK]);
        let py = y.partition(const_shape![BK, BN]);
        let (m, n, _) = get_tile_block_id();
        let mut acc: Tile<f16, { [BM, BN] }> = constant(0.0f16, const_shape![BM, BN]);
        for kt in 0i32..num_tiles(&px, 1) {
            acc = mma(px.load([m, kt]), py.load([kt, n]), acc);
        }
        z.store(acc);
    }
}
"""

ZERO = "constant(0.0f16, const_shape![BM, BN])"


def lower(text: str, stop_after: Stage = Stage.IR, exact: bool = False) -> CompileResult:
    request = CompileRequest((SourceFile("k.rs", text),), "f", GENERICS, exact_accumulators=exact)
    result = compile_kernel(request, stop_after=stop_after)
    assert result.ok, [render(d) for d in result.diagnostics]
    return result


def function(result: CompileResult) -> Function:
    assert result.ir is not None
    return result.ir.functions[0]


def accumulators(result: CompileResult) -> list[TileType]:
    """The accumulator type of every mmaf, in stream order."""
    return [op.acc.type for op in walk(function(result).body) if isinstance(op, MmaF)]  # type: ignore[misc]


def _has_mma(loop: For) -> bool:
    return any(isinstance(op, MmaF) for op in loop.body.block.ops)


def test_a_nested_f16_accumulator_is_carried_in_f32_and_rounded_after_the_loop() -> None:
    result = lower(gemm("f16", ZERO))
    assert accumulators(result) == [TileType(F32, (64, 64))]
    ops = list(walk(function(result).body))
    inner = next(op for op in ops if isinstance(op, For) and _has_mma(op))
    (wide_output,) = [v for v in inner.outputs if v.type == TileType(F32, (64, 64))]
    rounding = [op for op in ops if isinstance(op, FToF) and op.source == wide_output]
    assert len(rounding) == 1 and rounding[0].result.type == TileType(F16, (64, 64))
    # the zero start stays a constant (tileiras starts the first wgmma from zero registers)
    (init,) = [v for v in inner.init_values if v.type == TileType(F32, (64, 64))]
    assert any(isinstance(op, Constant) and op.result == init for op in ops)


def test_exact_accumulators_keep_f16() -> None:
    assert accumulators(lower(gemm("f16", ZERO), exact=True)) == [TileType(F16, (64, 64))]


def test_a_loop_at_the_top_level_is_left_alone() -> None:
    assert accumulators(lower(TOP_LEVEL)) == [TileType(F16, (64, 64))]


def test_an_f32_accumulator_and_a_top_level_loop_are_untouched() -> None:
    for text in (gemm("f32", "constant(0.0f32, const_shape![BM, BN])"), TOP_LEVEL):
        wide, exact = lower(text), lower(text, exact=True)
        assert wide.ir is not None and exact.ir is not None
        assert print_module(wide.ir) == print_module(exact.ir)


@pytest.mark.parametrize(
    "update",
    [
        # the accumulator is read for something else than the mma
        "acc = mma(a, b, acc); let _probe = acc + acc;",
        # the loop-carried value is not the mma's product
        "acc = mma(a, b, acc) + acc;",
    ],
)
def test_an_accumulator_with_other_uses_is_left_alone(update: str) -> None:
    assert TileType(F16, (64, 64)) in accumulators(lower(gemm("f16", ZERO, update)))


def test_a_loaded_start_is_converted_before_the_loop() -> None:
    start = "convert_tile(constant(1.0f32, const_shape![BM, BN]))"
    result = lower(gemm("f16", start))
    assert accumulators(result) == [TileType(F32, (64, 64))]
    ops = list(walk(function(result).body))
    inner = next(op for op in ops if isinstance(op, For) and _has_mma(op))
    (init,) = [v for v in inner.init_values if v.type == TileType(F32, (64, 64))]
    (widening,) = [op for op in ops if isinstance(op, FToF) and op.result == init]
    assert widening.source.type == TileType(F16, (64, 64))


def test_the_widened_ir_verifies_and_writes_bytecode() -> None:
    narrow = lower(gemm("f16", ZERO), Stage.BYTECODE, exact=True)
    wide = lower(gemm("f16", ZERO), Stage.BYTECODE)
    assert narrow.bytecode and wide.bytecode and narrow.bytecode != wide.bytecode


@pytest.mark.tileiras
def test_tileiras_assembles_the_widened_gemm() -> None:
    result = lower(gemm("f16", ZERO), Stage.CUBIN)
    assert result.cubin
