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
from lowering.ir.ops_math import RemF
from lowering.ir.printer import print_module
from lowering.ir.types import PaddingValue, TensorViewType, TileType
from lowering.ir.verify import verify_module
from lowering.lower_kernel import KernelLowering
from lowering.pipeline import Stage
from parser.specialization import TensorFacts
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


# x (param 1) is a `x[1:]` view of f32 data with a strided last axis: 4-byte aligned, stride 2
RELAXED_X = TensorFacts("x", (), (2,), base_align=4, unit_last_stride=False)


def test_relaxed_facts_assume_only_what_they_say() -> None:
    result = compile_example("add.rs", "add", {"B": "128"}, Stage.IR, specialization=(RELAXED_X,))
    ops = _ops(result)
    z_view, x_view, y_view = [op for op in ops if isinstance(op, memory.MakeTensorView)]
    assert z_view.result.type.strides == y_view.result.type.strides == (1,)
    assert x_view.result.type.strides == (None,)  # read from x's stride slot at launch
    assumes = {op.result: op for op in ops if isinstance(op, core.Assume)}
    (x_stride,) = x_view.dynamic_strides
    assert assumes[x_stride].predicate == DivBy(2)
    x_stride_slot = result.ir.functions[0].params[7]  # z: ptr, dim, stride, part dim/stride
    assert assumes[assumes[x_stride].value].value is x_stride_slot
    assert assumes[x_view.base].predicate == DivBy(4)
    assert assumes[z_view.base].predicate == assumes[y_view.base].predicate == DivBy(16)
    printed = print_module(result.ir)
    assert "{predicate = div_by<4>} : tile<ptr<f32>>" in printed
    assert "tensor_view<?xf32, strides=[?]>" in printed


@pytest.mark.tileiras
def test_a_relaxed_variant_assembles_and_its_contract_says_exactly_that(
    disassemble: Callable[[bytes], str],
) -> None:
    plain = compile_example("add.rs", "add", {"B": "128"})
    relaxed = compile_example("add.rs", "add", {"B": "128"}, specialization=(RELAXED_X,))
    assert plain.ok and relaxed.ok, relaxed.diagnostics
    text = disassemble(relaxed.bytecode)
    assert "assume div_by<4>" in text, text
    assert "strides=[?]" in text, text
    assert relaxed.cubin and relaxed.cubin != plain.cubin

    def facts(result) -> set[tuple[int, AssumptionKind, int, int]]:  # type: ignore[no-untyped-def]
        return {(a.param, a.kind, a.axis, a.value) for a in result.contract.assumptions}

    x = 1
    assert (x, AssumptionKind.BASE_ALIGN, 0, 4) in facts(relaxed)
    assert (x, AssumptionKind.STRIDE_DIV, 0, 2) in facts(relaxed)
    assert {f for f in facts(relaxed) if f[0] == x} - {f for f in facts(plain) if f[0] == x} == {
        (x, AssumptionKind.BASE_ALIGN, 0, 4),
        (x, AssumptionKind.STRIDE_DIV, 0, 2),
    }
    assert {f for f in facts(plain) if f[0] == x} - {f for f in facts(relaxed) if f[0] == x} == {
        (x, AssumptionKind.BASE_ALIGN, 0, 16),
        (x, AssumptionKind.STRIDE_ONE, 0, 1),
    }
    assert {f for f in facts(relaxed) if f[0] != x} == {f for f in facts(plain) if f[0] != x}


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


def test_float_remainder_lowers_to_remf() -> None:
    """`%` on float tiles type-checked but had no lowering: an internal error (found by
    tests/fuzz)."""
    text = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    fn f(z: &mut Tensor<f64, { [16] }>, x: &Tensor<f64, { [-1] }>) {
        let t = load_tile_like(x, z);
        let mut u = t % t;
        u %= t;
        z.store(u);
    }
}
"""
    result = compile_text(text, stop_after=Stage.BYTECODE)
    assert result.bytecode
    remainders = [op for op in _ops(result) if isinstance(op, RemF)]
    assert len(remainders) == 2


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
    for arch, cluster in (("sm_90", 2), ("sm_100", 1)):
        result = compile_text(HINTED, generics={"OCC": "1"}, arch=arch)
        assert result.ok, result.diagnostics
        assert result.contract.cluster_blocks == cluster


HELPER_IN_PERSISTENT_LOOP = """
#[cutile::module]
mod kernel {
    use cutile::core::*;
    fn row_tile(x: &Tensor<f32, { [-1, 64] }>, i: i32) -> Tile<f32, { [16, 64] }> {
        x.partition(const_shape![16, 64]).load([i, 0i32])
    }
    #[cutile::entry()]
    fn f(mut z: MappedPartitionMut<f32, { [16, 64] }, { [1, 1] }>, x: &Tensor<f32, { [-1, 64] }>) {
        for idx in z.iter_indices() {
            let (i, _) = idx.components();
            z.store(row_tile(x, i), idx);
        }
        let again = x.partition(const_shape![16, 64]);
    }
}
"""


def test_a_helper_taking_a_tensor_inside_a_persistent_loop_lowers() -> None:
    """The helper's tensor parameter is bound inside the loop's region: its partition views
    must not outlive the region (they used to crash the region bookkeeping)."""
    result = compile_text(HELPER_IN_PERSISTENT_LOOP, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    views = [op for op in _ops(result) if isinstance(op, memory.MakePartitionView)]
    assert len(views) >= 2
