"""`lowering.default_occupancy`: an occupancy variant gives an entry that names no occupancy
for its target the hint (keeping its other hints for the target), leaves entries that
name one or multiply tiles as they are, and its contract asks hosts to take it only for
launches of MIN_TILE_BLOCKS or more; a request without `occupancy` is the plain kernel."""

from __future__ import annotations

import dataclasses

from client_stubs.occupancy import MIN_TILE_BLOCKS
from lowering.default_occupancy import takes_default_occupancy, with_default_occupancy
from lowering.ir.attributes import EntryHints
from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser.spans import SourceFile
from tests.fake_cubin import StandInAssembler

KERNEL = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry(HINTS)]
    fn f(out: &mut Tensor<f32, { [1, 64] }>, x: &Tensor<f32, { [-1, 64] }>) {
        let t: Tile<f32, { [1, 64] }> = x.partition(const_shape![1, 64]).load([0i32, 0i32]);
        out.store(t * t);
    }
}
"""

MMA = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    fn f(out: &mut Tensor<f32, { [16, 16] }>, x: &Tensor<f32, { [16, 16] }>) {
        let t: Tile<f32, { [16, 16] }> = x.partition(const_shape![16, 16]).load([0i32, 0i32]);
        let zero: Tile<f32, { [16, 16] }> = constant(0.0f32, const_shape![16, 16]);
        out.store(mma(t, t, zero));
    }
}
"""


def _request(hints: str = "", occupancy: int = 0, text: str = KERNEL) -> CompileRequest:
    source = SourceFile("k.rs", text.replace("HINTS", hints))
    return CompileRequest(sources=(source,), entry="f", occupancy=occupancy)


def _entry_hints(request: CompileRequest) -> tuple[EntryHints, ...]:
    module = compile_kernel(request, stop_after=Stage.IR).ir
    assert module is not None
    (function,) = module.functions
    return tuple(function.hints)


def _launches(request: CompileRequest) -> tuple[int, bool]:
    """The contract's `min_tile_blocks` and `takes_occupancy_variant`."""
    result = compile_kernel(request, assembler=StandInAssembler())
    assert result.ok and result.contract is not None, result.diagnostics
    return result.contract.min_tile_blocks, result.contract.takes_occupancy_variant


def test_an_entry_without_hints_gets_the_targets_occupancy_and_a_contract_for_many_blocks():
    assert _entry_hints(_request()) == ()
    assert _entry_hints(_request(occupancy=4)) == (EntryHints("sm_90", occupancy=4),)
    assert _launches(_request(occupancy=4)) == (MIN_TILE_BLOCKS, True)
    assert _launches(_request()) == (0, True)  # the general kernel says it takes one


def test_an_entry_that_names_its_occupancy_or_multiplies_tiles_keeps_its_own():
    for hints in (
        "optimization_hints = (sm_90 = (occupancy = 2))",
        "optimization_hints = (sm_90 = (occupancy = 1, num_cta_in_cga = 2))",
    ):
        assert _entry_hints(_request(hints, 4)) == _entry_hints(_request(hints))
        assert _launches(_request(hints, 4)) == _launches(_request(hints)) == (0, False)
    assert _entry_hints(_request(occupancy=4, text=MMA)) == ()
    assert _launches(_request(occupancy=4, text=MMA)) == (0, False)


def test_a_targets_own_hints_keep_their_other_keys():
    module = compile_kernel(
        _request("optimization_hints = (sm_90 = (num_cta_in_cga = 2))"), stop_after=Stage.IR
    ).ir
    assert module is not None
    (function,) = module.functions
    assert takes_default_occupancy(function, "sm_90")
    assert takes_default_occupancy(function, "sm_100")  # no occupancy named for any target
    (hinted,) = with_default_occupancy(module, "sm_90", 8).functions
    assert hinted.hints == (EntryHints("sm_90", num_cta_in_cga=2, occupancy=8),)
    untouched = dataclasses.replace(function, is_entry=False)
    assert not takes_default_occupancy(untouched, "sm_90")
