"""Lowering of the unsafe output views: the head-permutation store compiles inside
`unsafe`, full views are bounds-checked against the whole tensor, `store_unchecked` is not,
and every access through a `&mut` view is ordered by the output's token."""

from __future__ import annotations

import re

from lowering.contract import Quantity
from lowering.ir.core import walk
from lowering.ir.ops_core import Constant
from lowering.ir.ops_debug import Assert
from lowering.ir.ops_memory import StoreViewTko
from lowering.ir.printer import print_module
from lowering.pipeline import Stage
from tests.lowering.kernels import compile_text

GENERICS = {"BM": "64", "D": "64"}
HEADS = """
#[cutile::module]
mod kernel {{
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const BM: i32, const D: i32>(
        out: &mut Tensor<f32, {{ [1, BM, D] }}>,
        x: &Tensor<f32, {{ [-1, -1, D] }}>,
    ) {{
        let (head, row, _) = get_tile_block_id();
        let px = x.partition(const_shape![1, BM, D]);
        let t = px.load([head, row, 0i32]);
        {store}
    }}
}}
"""
# the paper's bug: the head coordinate is missing, every head's blocks write head 0
BUGGY_STORE = """
        let mut whole = unsafe { out.partition_full_mut(const_shape![1, BM, D]) };
        whole.store(t, [0i32, row, 0i32]);
"""
SAFE_STORE = """
        let mut slab = out.partition_mut(const_shape![1, BM, D]);
        slab.store(t, [0i32, row, 0i32]);
"""


def _asserts(result) -> list[Assert]:  # type: ignore[no-untyped-def]
    (function,) = result.ir.functions
    return [op for op in walk(function.body) if isinstance(op, Assert)]


def test_the_head_permutation_store_compiles_inside_unsafe_to_bytecode() -> None:
    result = compile_text(
        HEADS.format(store=BUGGY_STORE), generics=GENERICS, stop_after=Stage.BYTECODE
    )
    assert result.ok and not result.diagnostics, result.diagnostics
    assert result.bytecode
    (function,) = result.ir.functions
    definitions = {r.id: op for op in walk(function.body) for r in op.results}
    (store,) = [op for op in walk(function.body) if isinstance(op, StoreViewTko)]
    head = definitions[store.index[0].id]  # no block offset: the tensor's own tile index
    assert isinstance(head, Constant) and head.values == (0,)


def test_the_head_permutation_store_assembles_to_a_cubin(tileiras) -> None:  # type: ignore[no-untyped-def]
    result = compile_text(HEADS.format(store=BUGGY_STORE), generics=GENERICS)
    assert result.ok, result.diagnostics
    assert result.cubin
    # the whole-tensor index is still bounds-checked: rows against out's row tiles
    checks = {(c.lhs, c.rhs) for c in result.contract.launch_checks}
    assert (Quantity(grid_axis=1), Quantity(tile_count=(0, 1, 64))) in checks


def test_the_same_store_through_a_safe_slab_can_never_launch(tileiras) -> None:  # type: ignore[no-untyped-def]
    """A slab index is local: `row` must be below the slab's one tile, so the launch is
    refused whenever there is more than one row block (it would otherwise race)."""
    result = compile_text(HEADS.format(store=SAFE_STORE), generics=GENERICS)
    assert result.ok, result.diagnostics
    checks = {(c.lhs, c.rhs) for c in result.contract.launch_checks}
    assert (Quantity(grid_axis=1), Quantity(constant=1)) in checks


def test_a_full_view_checks_a_runtime_index_and_store_unchecked_does_not() -> None:
    text = """
#[cutile::module]
mod kernel {
    use cutile::core::*;
    #[cutile::entry()]
    fn f(out: &mut Tensor<f32, { [128] }>, x: &Tensor<f32, { [-1] }>, i: i32) {
        let t = x.load_like(out);
        let mut whole = unsafe { out.partition_full_mut(const_shape![128]) };
        STORE;
    }
}
"""
    checked = compile_text(text.replace("STORE", "whole.store(t, [i])"), stop_after=Stage.IR)
    (check,) = _asserts(checked)
    assert "partition_mut store index on axis 0" in check.message
    unchecked = text.replace("STORE", "unsafe { whole.store_unchecked(t, [i]) }")
    assert _asserts(compile_text(unchecked, stop_after=Stage.IR)) == []


def test_printed_ir_orders_accesses_through_a_mut_view_by_its_token() -> None:
    """store, then `unsafe` load, then store through one `PartitionMut`: each consumes
    the token the previous one produced; the shared input's read carries no token."""
    text = """
#[cutile::module]
mod kernel {
    use cutile::core::*;
    #[cutile::entry()]
    fn f(out: &mut Tensor<f32, { [256] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.partition(const_shape![128]).load([0i32]);
        let mut pz = out.partition_mut(const_shape![128]);
        pz.store(t, [0i32]);
        let back = unsafe { pz.load([0i32]) };
        pz.store(back, [1i32]);
    }
}
"""
    result = compile_text(text, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    printed = print_module(result.ir)
    access = re.compile(
        r"%(\d+)(?:, %(\d+))? = (load_view_tko|store_view_tko) .*?(?:token\(%(\d+)\))?"
        r" \{ordering"
    )
    found = [m.groups() for m in access.finditer(printed)]
    (shared, first, load, second) = found
    assert shared[2] == "load_view_tko" and shared[3] is None  # shared read: no token
    assert first[2] == "store_view_tko" and re.search(rf"%{first[3]} = make_token", printed)
    assert load[2] == "load_view_tko" and load[3] == first[0]  # after the store
    assert second[2] == "store_view_tko" and second[3] == load[1]  # after the load
