"""A partition assigned in a runtime `if` (`lowering.partition_choice`): the `if` carries a
tag, and each use runs once per candidate with that candidate's own view and checks."""

from __future__ import annotations

from lowering.contract import Quantity
from lowering.ir.core import walk
from lowering.ir.ops_control import If
from lowering.ir.ops_memory import LoadViewTko
from lowering.ir.types import I32
from lowering.pipeline import Stage
from parser import codes
from parser.render import render
from tests.lowering.kernels import compile_text

KERNEL = """
#[cutile::module]
mod k {{
    use cutile::core::*;
    #[cutile::entry()]
    fn f(
        z: &mut Tensor<f32, {{ [16] }}>,
        a: &Tensor<f32, {{ [-1] }}>,
        b: &Tensor<f32, {{ [-1] }}>,
        flag: i32,
    ) {{
        let mut p = a.partition(const_shape![16]);
        {assign}
        let pid = get_tile_block_id().0;
        z.store(p.load([pid]) + p.load([0i32]));
    }}
}}
"""
CHOSEN = "if flag > 0i32 { p = b.partition(const_shape![16]); }"


def test_each_use_runs_once_per_candidate_with_its_own_checks(tileiras) -> None:  # type: ignore[no-untyped-def]
    result = compile_text(KERNEL.format(assign=CHOSEN))
    assert result.ok, [render(d) for d in result.diagnostics]
    ops = list(walk(result.ir.functions[0].body))
    ifs = [op for op in ops if isinstance(op, If)]
    (chooser,) = [op for op in ifs if op.outputs and op.outputs[0].type == I32]
    dispatches = [op for op in ifs if op is not chooser]
    assert len(dispatches) == 2  # one per load, each with a branch per candidate
    for dispatch in dispatches:
        loads = [op for op in walk(dispatch.then_region.block) if isinstance(op, LoadViewTko)]
        loads += [op for op in walk(dispatch.else_region.block) if isinstance(op, LoadViewTko)]
        assert len(loads) == 2
    # the block id indexes either tensor: both are checked against the grid at launch
    checks = {(c.lhs, c.rhs) for c in result.contract.launch_checks}
    for param in (1, 2):
        assert (Quantity(grid_axis=0), Quantity(tile_count=(param, 0, 16))) in checks


def test_a_partition_is_not_reassigned_in_a_loop() -> None:
    assign = "for i in 0i32..flag { p = b.partition(const_shape![16]); }"
    result = compile_text(KERNEL.format(assign=assign), stop_after=Stage.CHECK)
    (diagnostic,) = [d for d in result.diagnostics if d.is_error]
    assert diagnostic.code is codes.UNSUPPORTED_SYNTAX
    assert "assigning a `Partition<f32, {[16]}>` inside a loop" in diagnostic.message


def test_a_chosen_partition_cannot_be_bounded() -> None:
    text = KERNEL.format(assign=CHOSEN).replace(
        "let pid = get_tile_block_id().0;",
        "let pid = get_tile_block_id().0;\n        let q = p.with_bounds((1i32, 1i32));",
    )
    text = text.replace("[16]", "[16, 16]").replace("[-1]", "[-1, -1]")
    text = text.replace("p.load([pid]) + p.load([0i32])", "constant(0.0f32, const_shape![16, 16])")
    result = compile_text(text, stop_after=Stage.IR)
    (diagnostic,) = [d for d in result.diagnostics if d.is_error]
    assert diagnostic.code is codes.UNSUPPORTED_SYNTAX
    assert "on a partition chosen at run time is not supported yet" in diagnostic.message


MADE = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    unsafe fn f(z: &mut Tensor<f32, { [16] }>, p: *mut f32, n: i32, flag: i32) {
        let shape: Shape<{ [-1] }> = Shape::<{ [-1] }> { dims: &[n] };
        let strides: Array<{ [1] }> = Array::<{ [1] }> { dims: &[] };
        let t: Tensor<f32, { [-1] }> =
            make_tensor_view(pointer_to_tile(p), shape, strides, new_token_unordered());
        let u: Tensor<f32, { [-1] }> =
            make_tensor_view(pointer_to_tile(p), shape, strides, new_token_unordered());
        let mut q = t.partition(const_shape![16]);
        if flag > 0i32 { q = u.partition(const_shape![16]); }
        let first = q.load([0i32]);
        z.store(first + q.load([1i32]));
    }
}
"""


def test_reads_through_a_chosen_partition_of_a_made_tensor_carry_its_token() -> None:
    """A made tensor's loads move its token chain on: each candidate branch starts from
    the same tokens and the dispatch yields where they end, so the second read is ordered
    after whichever first read ran."""
    result = compile_text(MADE, stop_after=Stage.IR)
    assert result.ok, [render(d) for d in result.diagnostics]
    ops = list(walk(result.ir.functions[0].body))
    dispatches = [op for op in ops if isinstance(op, If) and op.outputs[0].type != I32]
    first, second = dispatches
    # the loaded tile, then the tokens of z, the raw-pointer chain, t and u
    assert [str(v.type) for v in first.outputs] == ["tile<16xf32>"] + ["token"] * 4
    second_loads = [op for op in walk(second.then_region.block) if isinstance(op, LoadViewTko)]
    second_loads += [op for op in walk(second.else_region.block) if isinstance(op, LoadViewTko)]
    tokens_after_first = {v.id for v in first.outputs[1:]}
    assert len(second_loads) == 2
    assert all(load.token.id in tokens_after_first for load in second_loads)
