"""Lowering of raw pointers and assumptions (`lowering.intrinsics.pointers`): pointer
tiles become `offset`s of a broadcast base, raw loads and stores share one token chain in
program order (also across loops) that tokens the kernel passes join, and the bytecode
round-trips through tileirdisasm and assembles with tileiras."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from lowering.bytecode.writer import write_bytecode
from lowering.ir.core import walk
from lowering.ir.ops_control import For, If, Loop
from lowering.ir.ops_core import MakeToken
from lowering.ir.ops_memory import LoadPtrTko, Offset, StorePtrTko
from lowering.ir.printer import print_module
from lowering.pipeline import Stage
from lowering.tileiras import Tileiras
from tests.lowering.kernels import compile_example, compile_text

# the arguments of an unordered, unmasked, unhinted raw load and store
LD = "ordering::Weak, None::<scope::TileBlock>, None, None, None, Latency::<0>"
ST = "ordering::Weak, None::<scope::TileBlock>, None, None, Latency::<0>"

ROUND_TRIP = """
#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    unsafe fn f<const B: i32>(y: *mut f32, x: *mut f32, n: i32) {
        let idx: Tile<i32, { [B] }> = iota(const_shape![B]);
        let ys = pointer_to_tile(y).offset_tile(idx);
        let xs = pointer_to_tile(x).offset_tile(idx);
        let first = load_ptr_tko(xs, @LD).0;
        store_ptr_tko(ys, first, @ST);
        let again = load_ptr_tko(ys.offset(n), @LD).0;
        store_ptr_tko(xs, again + first, @ST);
    }
}
""".replace("@LD", LD).replace("@ST", ST)

LOOPED = """
#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    unsafe fn f<const B: i32>(y: *mut f32, x: *const f32, steps: i32) {
        let idx: Tile<i32, { [B] }> = iota(const_shape![B]);
        let ys = pointer_to_tile(y).offset_tile(idx);
        for step in 0i32..steps {
            let v = load_ptr_tko(pointer_to_tile(x).offset_tile(idx).offset(step * B), @LD).0;
            store_ptr_tko(ys, v, @ST);
        }
    }
}
""".replace("@LD", LD).replace("@ST", ST)


BRANCHES = """
#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    unsafe fn f<const B: i32>(y: *mut f32, n: i32) {
        let idx: Tile<i32, { [B] }> = iota(const_shape![B]);
        let ys = pointer_to_tile(y).offset_tile(idx);
        let v = load_ptr_tko(ys, @LD).0;
        if n > 3i32 {
            store_ptr_tko(ys, v, @ST);
        }
        let mut i = 0i32;
        while i < n {
            store_ptr_tko(ys.offset(i), v, @ST);
            i = i + 1i32;
        }
        store_ptr_tko(ys, v, @ST);
    }
}
""".replace("@LD", LD).replace("@ST", ST)


HELPER = """
#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn copy_tile<const N: i32>(dst: *mut f32, src: *const f32, first: i32) {
        let lanes: Tile<i32, { [N] }> = iota(const_shape![N]);
        let idx = lanes + first.broadcast(const_shape![N]);
        unsafe {
            let v = load_ptr_tko(pointer_to_tile(src).offset_tile(idx), @LD).0;
            store_ptr_tko(pointer_to_tile(dst).offset_tile(idx), v, @ST);
        }
    }

    #[cutile::entry()]
    unsafe fn f<const B: i32>(y: *mut f32, x: *const f32) {
        let block = get_tile_block_id().0;
        copy_tile::<B>(y, x, block * B);
        copy_tile::<B>(x, y, block * B);
    }
}
""".replace("@LD", LD).replace("@ST", ST)


def _ops(result, kind):  # type: ignore[no-untyped-def]
    (function,) = result.ir.functions
    return [op for op in walk(function.body) if isinstance(op, kind)]


def test_raw_accesses_are_chained_in_program_order() -> None:
    result = compile_text(ROUND_TRIP, generics={"B": "128"}, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    (start,) = _ops(result, MakeToken)
    accesses = [op for op in _ops(result, object) if isinstance(op, (LoadPtrTko, StorePtrTko))]
    assert [type(op) for op in accesses] == [LoadPtrTko, StorePtrTko, LoadPtrTko, StorePtrTko]
    token = start.result
    for op in accesses:  # each consumes the token of the access before it
        assert op.token == token
        token = op.result_token


def test_pointer_tiles_broadcast_the_base_and_offset_it() -> None:
    result = compile_text(ROUND_TRIP, generics={"B": "128"}, stop_after=Stage.IR)
    text = print_module(result.ir)  # type: ignore[arg-type]
    assert "= broadcast %" in text and ": tile<128xptr<f32>>" in text
    offsets = _ops(result, Offset)
    assert len(offsets) == 3  # two bases plus `ys.offset(n)`
    assert all(str(op.result.type) == "tile<128xptr<f32>>" for op in offsets)


def test_the_pointer_token_is_carried_through_loops() -> None:
    result = compile_text(LOOPED, generics={"B": "64"}, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    (loop,) = _ops(result, For)
    (load,) = _ops(result, LoadPtrTko)
    (store,) = _ops(result, StorePtrTko)
    carried = loop.body.blocks[0].args[-1]  # the iteration's incoming token
    assert load.token == carried and store.token == load.result_token
    assert str(loop.outputs[-1].type) == "token"


def test_the_pointer_token_flows_out_of_ifs_and_whiles() -> None:
    result = compile_text(BRANCHES, generics={"B": "64"}, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    (branch,) = [op for op in _ops(result, If) if op.outputs]
    (loop,) = _ops(result, Loop)
    stores = _ops(result, StorePtrTko)
    assert [str(v.type) for v in branch.outputs] == ["token"]
    assert loop.init_values[-1] == branch.outputs[0]  # the loop starts from the `if`'s token
    assert stores[-1].token == loop.outputs[-1]  # the last store comes after the loop


def test_pointers_pass_into_device_functions_and_stay_chained() -> None:
    """`x` is `*const` in the entry but the second call passes it as `dst: *mut`: a
    mismatch rustc would reject, so the checker does too; `*mut` coerces to `*const`."""
    bad = compile_text(HELPER, generics={"B": "64"}, stop_after=Stage.IR)
    assert [d.code.id for d in bad.diagnostics if d.is_error] == ["E0308"]
    result = compile_text(
        HELPER.replace("copy_tile::<B>(x, y, block * B);", "copy_tile::<B>(y, y, block * B);"),
        generics={"B": "64"},
        stop_after=Stage.IR,
    )
    assert result.ok, result.diagnostics
    accesses = [op for op in _ops(result, object) if isinstance(op, (LoadPtrTko, StorePtrTko))]
    assert [type(op) for op in accesses] == [LoadPtrTko, StorePtrTko] * 2
    for before, after in itertools.pairwise(accesses):  # across the inlined calls too
        assert after.token == before.result_token


def test_scale_ptr_masks_pads_and_assumes_alignment() -> None:
    result = compile_example("scale_ptr.rs", "scale_ptr", {"B": "1024"}, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    text = print_module(result.ir)  # type: ignore[arg-type]
    assert text.count("{predicate = div_by<16>} : tile<ptr<f32>>") == 2
    (load,) = _ops(result, LoadPtrTko)
    (store,) = _ops(result, StorePtrTko)
    assert load.mask is not None and load.padding is not None
    assert store.mask is load.mask and store.token == load.result_token


@pytest.mark.tileiras
def test_pointer_ops_disassemble_and_assemble(
    disassemble: Callable[[bytes], str], tileiras: Tileiras
) -> None:
    result = compile_text(ROUND_TRIP, generics={"B": "128"}, stop_after=Stage.BYTECODE)
    assert result.ok, result.diagnostics
    text = disassemble(result.bytecode)  # type: ignore[arg-type]
    assert text.count("offset ") == 3
    assert text.count("load_ptr_tko weak") == 2
    assert text.count("store_ptr_tko weak") == 2
    tileiras.assemble(write_bytecode(result.ir), arch="sm_90")  # type: ignore[arg-type]


@pytest.mark.tileiras
def test_masked_padded_scale_ptr_disassembles(
    disassemble: Callable[[bytes], str], tileiras: Tileiras
) -> None:
    result = compile_example("scale_ptr.rs", "scale_ptr", {"B": "1024"}, stop_after=Stage.CUBIN)
    assert result.ok, result.diagnostics
    text = disassemble(result.bytecode)  # type: ignore[arg-type]
    load = next(line for line in text.splitlines() if "load_ptr_tko" in line)
    store = next(line for line in text.splitlines() if "store_ptr_tko" in line)
    # operands: pointers, mask, padding (positional), then the token
    assert "tile<1024xptr<f32>>, tile<1024xi1>, tile<1024xf32> -> tile<1024xf32>, token" in load
    assert "token=%" in load and "token=%" in store, (load, store)
    assert "tile<1024xi1>" in store, store
    assert result.cubin


SAME_ELEMENTS = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    fn f<const S: [i32; 2]>(output: &mut Tensor<i64, S>) {
        let tile: Tile<i64, S> = load_tile_mut(output);
        let same: Tile<i64, S> = unsafe { assume_same_elements_2d::<_, 2, 4>(tile) };
        output.store(same + constant(1i64, output.shape()));
    }
}
"""


@pytest.mark.tileiras
def test_same_elements_is_an_assume_predicate_the_assembler_reads(
    disassemble: Callable[[bytes], str], tileiras: Tileiras
) -> None:
    """cuTile Rust's `assume_same_elements_2d::<_, 2, 4>` (control_flow_ops.rs): Tile IR's
    `same_elements<[2, 4]>` predicate, one group size per dimension."""
    result = compile_text(SAME_ELEMENTS, generics={"S": "[4, 8]"}, stop_after=Stage.BYTECODE)
    assert result.ok, result.diagnostics
    assert "{predicate = same_elements<[2, 4]>} : tile<4x8xi64>" in print_module(result.ir)  # type: ignore[arg-type]
    assert "same_elements<[2, 4]>" in disassemble(result.bytecode)  # type: ignore[arg-type]
    tileiras.assemble(result.bytecode, arch="sm_120")  # type: ignore[arg-type]
