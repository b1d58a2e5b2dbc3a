"""`lowering.block_order`: a GEMM-shaped kernel (an mma, and loads in a loop that follow x
alone and y alone) gets its tile blocks renumbered in row groups, and the renumbering is a
bijection of every grid (checked by running its ops); kernels whose loads follow one block
coordinate, or that multiply nothing, keep their order."""

from __future__ import annotations

import itertools

import pytest

from lowering.block_order import GROUP_ROWS
from lowering.ir.core import Function, Op, walk
from lowering.ir.ops_arith import AddI, DivI, MulI, RemI, SubI
from lowering.ir.ops_convert import ExtI, TruncI
from lowering.ir.ops_core import Constant, GetNumTileBlocks, GetTileBlockId
from lowering.ir.ops_math import MinI
from lowering.ir.verify import verify_module
from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser.render import render
from parser.spans import SourceFile

GEMM = """
    fn f(
        z: &mut Tensor<f16, { [64, 64] }>,
        a: &Tensor<f16, { [-1, -1] }>,
        b: &Tensor<f16, { [-1, -1] }>,
    ) {
        let pa = a.partition(const_shape![64, 32]);
        let pb = b.partition(const_shape![32, 64]);
        let pid: (i32, i32, i32) = get_tile_block_id();
        let mut acc = load_tile_mut(z);
        for k in 0i32..num_tiles(&pa, 1) {
            acc = mma(pa.load([pid.0, k]), pb.load([k, pid.1]), acc);
        }
        z.store(acc);
    }
"""

# keys by head (y) only: the order x-fastest already shares them between neighbours
ATTENTION_LIKE = """
    fn f(
        z: &mut Tensor<f16, { [64, 64] }>,
        q: &Tensor<f16, { [-1, -1] }>,
        k: &Tensor<f16, { [-1, -1] }>,
    ) {
        let pq = q.partition(const_shape![64, 64]);
        let pk = k.partition(const_shape![64, 64]);
        let pid: (i32, i32, i32) = get_tile_block_id();
        let qt = pq.load([pid.0, pid.1]);
        let mut acc = load_tile_mut(z);
        for j in 0i32..num_tiles(&pk, 0) {
            acc = mma(qt, pk.load([j, pid.1]), acc);
        }
        z.store(acc);
    }
"""

# the GEMM's loads, summed instead of multiplied
NO_MMA = """
    fn f(
        z: &mut Tensor<f16, { [64, 64] }>,
        a: &Tensor<f16, { [-1, -1] }>,
        b: &Tensor<f16, { [-1, -1] }>,
    ) {
        let pa = a.partition(const_shape![64, 64]);
        let pb = b.partition(const_shape![64, 64]);
        let pid: (i32, i32, i32) = get_tile_block_id();
        let mut acc = load_tile_mut(z);
        for k in 0i32..num_tiles(&pa, 1) {
            acc = acc + pa.load([pid.0, k]) + pb.load([k, pid.1]);
        }
        z.store(acc);
    }
"""


def lowered(entry: str, attribute: str = "#[cutile::entry()]") -> Function:
    source = f"#[cutile::module]\nmod m {{\n    use cutile::core::*;\n    {attribute}{entry}}}\n"
    result = compile_kernel(
        CompileRequest((SourceFile("m.rs", source),), "f", ()), stop_after=Stage.IR
    )
    assert result.ok, [render(d) for d in result.diagnostics]
    assert result.ir is not None and not verify_module(result.ir)
    return result.ir.functions[0]


def renumbered(function: Function) -> bool:
    return any(isinstance(op, GetNumTileBlocks) for op in walk(function.body))


def test_a_gemm_is_renumbered_into_the_old_ids() -> None:
    function = lowered(GEMM)
    assert renumbered(function)
    ops = function.body.ops
    hardware = next(op for op in ops if isinstance(op, GetTileBlockId))
    truncs = [op for op in ops if isinstance(op, TruncI)]
    # the hardware ids are fresh values; the renumbered ones carry on as the old x and y,
    # which the loads and the output tile's store still use
    assert {t.source.id for t in truncs}.isdisjoint({hardware.x.id, hardware.y.id})
    used = {v.id for op in walk(function.body) for v in op.operand_values}
    assert len(truncs) == 2 and all(t.result.id in used for t in truncs)
    readers = [
        op for op in walk(function.body) if {hardware.x, hardware.y} & set(op.operand_values)
    ]
    assert readers and all(isinstance(op, ExtI) for op in readers)  # only the renumbering


CLUSTERS = "#[cutile::entry(optimization_hints = (sm_90 = (num_cta_in_cga = 2)))]"


@pytest.mark.parametrize(
    ("source", "attribute"),
    [(ATTENTION_LIKE, None), (NO_MMA, None), (GEMM, CLUSTERS)],
    ids=["one-coordinate", "no-mma", "clusters"],
)
def test_other_kernels_keep_their_order(source: str, attribute: str | None) -> None:
    assert not renumbered(lowered(source, *([attribute] if attribute else [])))


def _run(ops: tuple[Op, ...], block: tuple[int, int], grid: tuple[int, int]) -> tuple[int, int]:
    """Evaluate the renumbering's integer ops for one block of `grid`."""
    values: dict[int, int] = {}
    arithmetic = {
        AddI: lambda a, b: a + b,
        SubI: lambda a, b: a - b,
        MulI: lambda a, b: a * b,
        DivI: lambda a, b: a // b,
        RemI: lambda a, b: a % b,
        MinI: min,
    }
    out: list[int] = []
    for op in ops:
        if isinstance(op, GetTileBlockId):
            values[op.x.id], values[op.y.id], values[op.z.id] = (*block, 0)
        elif isinstance(op, GetNumTileBlocks):
            values[op.x.id], values[op.y.id], values[op.z.id] = (*grid, 1)
        elif isinstance(op, Constant):
            values[op.result.id] = int(op.values[0])
        elif isinstance(op, ExtI):
            values[op.result.id] = values[op.source.id]
        elif isinstance(op, TruncI):
            values[op.result.id] = values[op.source.id]
            out.append(values[op.result.id])
            if len(out) == 2:
                return out[0], out[1]
        elif type(op) in arithmetic:
            lhs, rhs = values[op.lhs.id], values[op.rhs.id]  # type: ignore[attr-defined]
            values[op.result.id] = arithmetic[type(op)](lhs, rhs)  # type: ignore[attr-defined]
    raise AssertionError("the renumbering ended before both ids")


@pytest.mark.parametrize(
    "grid", [(1, 1), (1, 7), (7, 1), (8, 8), (32, 32), (13, 5), (GROUP_ROWS + 3, 9), (50, 3)]
)
def test_the_renumbering_is_a_bijection_of_the_grid(grid: tuple[int, int]) -> None:
    ops = lowered(GEMM).body.ops
    start = next(i for i, op in enumerate(ops) if isinstance(op, GetTileBlockId))
    prologue = ops[start:]
    blocks = list(itertools.product(range(grid[0]), range(grid[1])))
    mapped = [_run(prologue, block, grid) for block in blocks]
    assert sorted(mapped) == sorted(blocks)
    # hardware order (x fastest): consecutive blocks walk at most GROUP_ROWS rows of x
    order = sorted(blocks, key=lambda b: (b[1], b[0]))
    first_wave = {_run(prologue, b, grid)[0] for b in order[: GROUP_ROWS * 2]}
    assert len(first_wave) <= GROUP_ROWS
