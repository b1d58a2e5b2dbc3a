"""Lowering of atomics and module globals (`lowering.intrinsics.atomics`): the pointer
atomics with their mode, ordering and scope on the raw-memory chain, reductions into a
partition view on its tensor's chain; a `static` global
as a module `global` read and written through `get_global`; the bytecode (with its
Global section) round-trips through tileirdisasm and assembles; such kernels' contracts
are marked unchecked."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lowering.ir.attributes import AtomicMode, MemoryOrdering, MemoryScope
from lowering.ir.core import walk
from lowering.ir.ops_core import GetTileBlockId
from lowering.ir.ops_memory import LoadPtrTko, StorePtrTko
from lowering.ir.ops_pointer import (
    AtomicCasTko,
    AtomicRedViewTko,
    AtomicRmwTko,
    GetGlobal,
    GlobalVar,
)
from lowering.ir.printer import print_module
from lowering.ir.types import ElementType
from lowering.pipeline import Stage
from lowering.tileiras import Tileiras
from tests.lowering.kernels import compile_text

ATOMICS = """
#[cutile::module]
mod k {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(out: &mut Tensor<i64, { [64] }>, sums: &mut Tensor<f32, { [64] }>) {
        let seed: Tile<i64, { [64] }> = constant(0i64, const_shape![64]);
        let counts: PointerTile<*mut i64, { [64] }> = int_to_ptr(seed);
        let floats: PointerTile<*mut f32, { [64] }> = ptr_to_ptr(counts);
        let ones: Tile<f32, { [64] }> = constant(1.0f32, const_shape![64]);
        let mask: Tile<bool, { [64] }> = constant(true, const_shape![64]);
        let (old, t) = atomic_rmw_tko(floats, ones, atomic::AddF, ordering::Relaxed,
            scope::Device, None, None);
        let (was, u) = atomic_cas_tko(counts, seed, seed, ordering::AcqRel, scope::System,
            Some(mask), Some(t));
        let (maxed, _v) = atomic_rmw_tko(counts, was, atomic::Umax, ordering::Acquire,
            scope::TileBlock, None, Some(u));
        out.store(maxed);
        sums.store(old);
    }
}
"""

GLOBALS = """
#[cutile::module]
mod counters {
    use cutile::core::*;
    const START: i32 = 7;
    static COUNTER: Global<i32, { [] }> = Global::new(START);
    static TOTAL: Global<f32, { [] }> = Global::new(0.0f32);
    static UNUSED: Global<i64, { [] }> = Global::new(1);

    #[cutile::entry()]
    fn f(out: &mut Tensor<i32, { [1] }>) {
        let (old, _load) = COUNTER.load(ordering::Acquire, scope::Device);
        let _store = COUNTER.store(old + constant(1i32, const_shape![]), ordering::Release,
            scope::Device);
        let (_sum, _add) = TOTAL.atomic_add(constant(2.0f32, const_shape![]), ordering::AcqRel,
            scope::Device);
        out.store(old.reshape(const_shape![1]));
    }
}
"""


REDUCED = """
#[cutile::module]
mod k {
    use cutile::core::*;
    use cutile::tileir::*;

    #[cutile::entry()]
    unsafe fn f(acc: &Tensor<f32, { [-1, -1] }>, out: &mut Tensor<f32, { [16, 16] }>) {
        let mut whole: PartitionMut<f32, { [16, 16] }> =
            unsafe { acc.partition_full_mut(const_shape![16, 16]) };
        let tile: Tile<f32, { [16, 16] }> = constant(1.0f32, const_shape![16, 16]);
        let pid: (i32, i32, i32) = get_tile_block_id();
        let first: Token = unsafe {
            atomic_red_view_tko(&mut whole, tile, [pid.0, 0i32], atomic::AddF,
                ordering::Relaxed, scope::Device)
        };
        let second: Token = unsafe {
            atomic_red_view_tko(&mut whole, tile, [0i32, 0i32], atomic::AddF,
                ordering::Relaxed, scope::TileBlock)
        };
        out.store(tile);
    }
}
"""


def _ops(result, kind):  # type: ignore[no-untyped-def]
    (function,) = result.ir.functions
    return [op for op in walk(function.body) if isinstance(op, kind)]


def test_atomics_carry_mode_ordering_scope_and_the_chain() -> None:
    result = compile_text(ATOMICS, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    add, umax = _ops(result, AtomicRmwTko)
    (cas,) = _ops(result, AtomicCasTko)
    assert (add.mode, add.ordering, add.scope) == (
        AtomicMode.ADDF,
        MemoryOrdering.RELAXED,
        MemoryScope.DEVICE,
    )
    assert (cas.ordering, cas.scope, cas.mask is not None) == (
        MemoryOrdering.ACQ_REL,
        MemoryScope.SYSTEM,
        True,
    )
    assert (umax.mode, umax.scope) == (AtomicMode.UMAX, MemoryScope.TILE_BLOCK)
    # one chain in program order; the tokens passed are already on it
    assert cas.token == add.result_token and umax.token == cas.result_token
    text = print_module(result.ir)  # type: ignore[arg-type]
    assert "{ordering = acq_rel, scope = system}" in text
    assert "{ordering = relaxed, scope = device, mode = addf}" in text


def test_globals_become_module_globals_read_through_get_global() -> None:
    result = compile_text(GLOBALS, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    assert result.ir.globals == (  # type: ignore[union-attr]
        GlobalVar("counters_COUNTER", ElementType.I32, 7, 4),
        GlobalVar("counters_TOTAL", ElementType.F32, 0.0, 4),
    )
    names = [op.name for op in _ops(result, GetGlobal)]
    assert names == ["counters_COUNTER", "counters_COUNTER", "counters_TOTAL"]
    (load,) = _ops(result, LoadPtrTko)
    (store,) = _ops(result, StorePtrTko)
    (add,) = _ops(result, AtomicRmwTko)
    assert (load.ordering, store.ordering, add.mode) == (
        MemoryOrdering.ACQUIRE,
        MemoryOrdering.RELEASE,
        AtomicMode.ADDF,
    )
    assert store.token == load.result_token and add.token == store.result_token
    text = print_module(result.ir)  # type: ignore[arg-type]
    assert text.startswith("global @counters_COUNTER <i32: 7> : tile<1xi32>\n")


def test_reductions_into_a_view_follow_its_tensor_chain() -> None:
    result = compile_text(REDUCED, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    first, second = _ops(result, AtomicRedViewTko)
    assert (first.mode, first.scope, second.scope) == (
        AtomicMode.ADDF,
        MemoryScope.DEVICE,
        MemoryScope.TILE_BLOCK,
    )
    assert second.token == first.result_token
    assert first.index[0] == _ops(result, GetTileBlockId)[0].x


@pytest.mark.tileiras
def test_atomics_and_globals_disassemble_and_assemble(
    disassemble: Callable[[bytes], str], tileiras: Tileiras
) -> None:
    atomics = compile_text(ATOMICS, stop_after=Stage.CUBIN)
    assert atomics.ok and atomics.cubin, atomics.diagnostics
    text = disassemble(atomics.bytecode)  # type: ignore[arg-type]
    assert "atomic_rmw_tko relaxed device %" in text and ", addf," in text
    assert "atomic_cas_tko acq_rel sys" in text and ", umax," in text
    globals_ = compile_text(GLOBALS, stop_after=Stage.CUBIN)
    assert globals_.ok and globals_.cubin, globals_.diagnostics
    text = disassemble(globals_.bytecode)  # type: ignore[arg-type]
    assert "global  @counters_COUNTER alignment = 4 <i32: 7> : tile<1xi32>" in text
    assert "get_global @counters_TOTAL : tile<ptr<f32>>" in text
    assert "load_ptr_tko acquire device" in text and "store_ptr_tko release device" in text
    assert "atomic_rmw_tko acq_rel device" in text
    # raw memory through `int_to_ptr` marks the contract; ordered globals do not
    assert atomics.contract.safety.unchecked_accesses  # type: ignore[union-attr]
    assert not globals_.contract.safety.unchecked_accesses  # type: ignore[union-attr]
    reduced = compile_text(REDUCED, stop_after=Stage.CUBIN)
    assert reduced.ok and reduced.cubin, reduced.diagnostics
    text = disassemble(reduced.bytecode)  # type: ignore[arg-type]
    assert "atomic_red_view_tko relaxed device %" in text and "], addf, %" in text
