"""Typed kernel → tile IR: prologue views and assumptions, implicit per-block access, tokens."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lowering.abi import entry_abi
from lowering.contract import AssumptionKind
from lowering.ir import ops_arith as arith
from lowering.ir import ops_core as core
from lowering.ir import ops_memory as memory
from lowering.ir.attributes import Bounded, DivBy, EntryHints
from lowering.ir.core import walk
from lowering.ir.types import PaddingValue, TensorViewType, TileType
from lowering.ir.verify import verify_module
from lowering.lower_kernel import KernelLowering
from lowering.pipeline import Stage
from tests.lowering.kernels import compile_example, compile_text


def _ops(result):  # type: ignore[no-untyped-def]
    assert result.ok, result.diagnostics
    (function,) = result.ir.functions
    return list(walk(function.body))


def test_add_lowers_to_views_loads_and_one_ordered_store() -> None:
    ops = _ops(compile_example("add.rs", "add", {"B": "256"}, Stage.IR))
    kinds = [type(op) for op in ops]
    assert kinds.count(memory.MakeTensorView) == 3
    loads = [op for op in ops if isinstance(op, memory.LoadViewTko)]
    stores = [op for op in ops if isinstance(op, memory.StoreViewTko)]
    assert len(loads) == 2 and len(stores) == 1
    assert all(load.token is None for load in loads)  # shared reads carry no token
    assert stores[0].token is not None  # the output's token chain
    assert all(op.tile.type == TileType(op.tile.type.element, (256,)) for op in loads)
    (add,) = [op for op in ops if isinstance(op, arith.AddF)]
    assert stores[0].tile == add.result


def test_inputs_read_with_zero_padding_and_outputs_without() -> None:
    ops = _ops(compile_example("add.rs", "add", {"B": "128"}, Stage.IR))
    parts = [op.result.type for op in ops if isinstance(op, memory.MakePartitionView)]
    assert sorted(str(p.padding) for p in parts) == [
        "None",
        str(PaddingValue.ZERO),
        str(PaddingValue.ZERO),
    ]


def test_prologue_assumes_alignment_and_nonnegative_extents() -> None:
    ops = _ops(compile_example("add.rs", "add", {"B": "128"}, Stage.IR))
    predicates = [op.predicate for op in ops if isinstance(op, core.Assume)]
    assert predicates.count(DivBy(16)) == 3
    assert predicates.count(Bounded(0, None)) == 3
    views = [op.result.type for op in ops if isinstance(op, memory.MakeTensorView)]
    assert all(isinstance(v, TensorViewType) and v.strides == (1,) for v in views)


def test_output_load_then_store_is_ordered_by_tokens() -> None:
    ops = _ops(compile_example("saxpy.rs", "saxpy", {"E": "f32", "B": "128"}, Stage.IR))
    (load_out,) = [op for op in ops if isinstance(op, memory.LoadViewTko) and op.token]
    (store,) = [op for op in ops if isinstance(op, memory.StoreViewTko)]
    (make_token,) = [op for op in ops if isinstance(op, core.MakeToken)]
    assert load_out.token == make_token.result
    assert store.token == load_out.result_token


def test_scalar_broadcast_reshapes_then_broadcasts() -> None:
    ops = _ops(compile_example("saxpy.rs", "saxpy", {"E": "f16", "B": "64"}, Stage.IR))
    reshape = next(op for op in ops if isinstance(op, core.Reshape))
    broadcast = next(op for op in ops if isinstance(op, core.Broadcast))
    assert reshape.result.type.shape == (1,)
    assert broadcast.source == reshape.result
    assert broadcast.result.type.shape == (64,)


def test_static_input_extents_become_static_views_and_assumptions() -> None:
    text = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [4, 8] }>, x: &Tensor<f32, { [-1, 8] }>) {
        z.store(load_tile_like(x, z));
    }
}
"""
    result = compile_text(text, stop_after=Stage.IR)
    ops = _ops(result)
    views = [op.result.type for op in ops if isinstance(op, memory.MakeTensorView)]
    assert views[1].shape == (None, 8)
    abi, _ = entry_abi(result.kernel.signature)
    lowered = KernelLowering(result.kernel, abi).lower("f_test")
    assert (1, AssumptionKind.STATIC_DIM, 1, 8) in {
        (a.param, a.kind, a.axis, a.value) for a in lowered.assumptions
    }
    assert verify_module(lowered.module) == []
    ids = next(op for op in ops if isinstance(op, core.GetTileBlockId))
    load = next(op for op in ops if isinstance(op, memory.LoadViewTko))
    assert load.index == (ids.x, ids.y)


def test_integer_division_is_floor_for_signed_types() -> None:
    text = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    fn f(z: &mut Tensor<i32, { [16] }>, x: &Tensor<i32, { [-1] }>) {
        let t = load_tile_like(x, z);
        z.store(t / t - t % t);
    }
}
"""
    ops = _ops(compile_text(text, stop_after=Stage.IR))
    (div,) = [op for op in ops if isinstance(op, arith.DivI)]
    assert div.rounding.name == "NEGATIVE_INF"
    assert any(isinstance(op, arith.RemI) for op in ops)


HINTED = """
#[cutile::module]
mod kernel {
    use cutile::core::*;
    #[cutile::entry(optimization_hints = (
        sm_90 = (num_cta_in_cga = 2, occupancy = OCC),
        sm_100 = (num_worker_warps_per_cta = 4),
    ))]
    fn f<const OCC: i32>(
        mut z: MappedPartitionMut<f32, { [128] }, { [1] }>,
        x: &Tensor<f32, { [-1] }>,
    ) {
        let part_x = x.partition(const_shape![128]);
        for idx in z.iter_indices() {
            let (i,) = idx.components();
            z.store(part_x.load([i]), idx);
        }
    }
}
"""


def test_optimization_hints_become_the_entry_attribute() -> None:
    result = compile_text(HINTED, generics={"OCC": "2"}, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    (function,) = result.ir.functions
    assert function.hints == (
        EntryHints("sm_90", num_cta_in_cga=2, occupancy=2),
        EntryHints("sm_100", num_worker_warps_per_cta=4),
    )


@pytest.mark.tileiras
def test_optimization_hints_reach_the_bytecode_and_assemble(
    disassemble: Callable[[bytes], str],
) -> None:
    result = compile_text(HINTED, generics={"OCC": "1"})
    assert result.ok, result.diagnostics
    text = disassemble(result.bytecode)
    assert (
        "optimization_hints=<sm_100 = {num_worker_warps_per_cta = 4}, "
        "sm_90 = {num_cta_in_cga = 2, occupancy = 1}>"
    ) in text, text
    assert result.cubin


@pytest.mark.tileiras
def test_the_contract_carries_the_targets_cluster_size() -> None:
    for target, cluster in (("sm_90", 2), ("sm_100", 1)):
        result = compile_text(HINTED, generics={"OCC": "1"}, target=target)
        assert result.ok, result.diagnostics
        assert result.contract.cluster_blocks == cluster
