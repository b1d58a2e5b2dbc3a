"""Lowering of raw views (`lowering.intrinsics.raw_views`): tensors made with
`make_tensor_view` (static extents and strides in the view type, runtime ones as
operands) whose token chain is carried through loops like an output's, also when they are
made inside a loop by a device function; partition views that wait for their token; an
input written through an unsafe view gets a chain and marks the contract unchecked."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lowering.abi import entry_abi
from lowering.contract import Quantity
from lowering.ir.core import walk
from lowering.ir.ops_control import For
from lowering.ir.ops_core import MakeToken
from lowering.ir.ops_debug import Assert
from lowering.ir.ops_memory import (
    LoadViewTko,
    MakeGatherScatterView,
    MakeStridedView,
    MakeTensorView,
    StoreViewTko,
)
from lowering.lower_kernel import KernelLowering
from lowering.pipeline import Stage
from lowering.tileiras import Tileiras
from parser import codes
from tests.lowering.kernels import compile_text

COPY = """
#[cutile::module]
mod k {
    use cutile::core::*;

    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn f<const B: i32>(dst: *mut f16, src: *mut f16, rows: i32) {
        let tok: Token = new_token_unordered();
        let shape: Shape<{ [-1, 64] }> = Shape::<{ [-1, 64] }> { dims: &[rows] };
        let strides: Array<{ [64, 1] }> = Array::<{ [64, 1] }> { dims: &[] };
        let from: Tensor<f16, { [-1, 64] }> =
            make_tensor_view(pointer_to_tile(src), shape, strides, tok);
        let to: Tensor<f16, { [-1, 64] }> =
            make_tensor_view(pointer_to_tile(dst), shape, strides, tok);
        let reads: Partition<f16, { [B, 64] }> = from.partition(const_shape![B, 64]);
        let mut writes: PartitionMut<f16, { [B, 64] }> = to.partition_full_mut(const_shape![B, 64]);
        for i in 0i32..num_tiles(&reads, 0i32) {
            let tile: Tile<f16, { [B, 64] }> = load_view_tko(&reads, [i, 0i32], ordering::Weak,
                scope::TileBlock, Some(2), tma::Disabled);
            store_view_tko_mut(&mut writes, tile, [i, 0i32], ordering::Weak, scope::TileBlock,
                None, tma::Enabled);
        }
    }
}
"""

PER_ITERATION = """
#[cutile::module]
mod k {
    use cutile::core::*;

    unsafe fn view_of(p: *mut f32, n: i32) -> Tensor<f32, { [-1] }> {
        let shape: Shape<{ [-1] }> = Shape::<{ [-1] }> { dims: &[n] };
        let strides: Array<{ [1] }> = Array::<{ [1] }> { dims: &[] };
        make_tensor_view(pointer_to_tile(p), shape, strides, new_token_unordered())
    }

    #[cutile::entry()]
    unsafe fn f(p: *mut f32, n: i32, steps: i32) {
        for step in 0i32..steps {
            let t: Tensor<f32, { [-1] }> = view_of(p, n + step);
            let mut w: PartitionMut<f32, { [16] }> = t.partition_full_mut(const_shape![16]);
            let tile: Tile<f32, { [16] }> = constant(1.0f32, const_shape![16]);
            w.store(tile, [step]);
            w.store(tile, [0i32]);
        }
    }
}
"""

WRITTEN_INPUT = """
#[cutile::module]
mod k {
    use cutile::core::*;

    #[cutile::entry()]
    unsafe fn f(acc: &Tensor<f32, { [-1, -1] }>, out: &mut Tensor<f32, { [16, 16] }>) {
        let mut whole: PartitionMut<f32, { [16, 16] }> =
            unsafe { acc.partition_full_mut(const_shape![16, 16]) };
        let tile: Tile<f32, { [16, 16] }> = constant(1.0f32, const_shape![16, 16]);
        whole.store(tile, [0i32, 0i32]);
        let token: Token = get_tensor_token(acc);
        let read: Partition<f32, { [16, 16] }> =
            make_partition_view(acc, const_shape![16, 16], padding::Zero, dim_map::Identity, token);
        out.store(read.load([0i32, 0i32]));
    }
}
"""


TABLE = """
#[cutile::module]
mod k {
    use cutile::core::*;

    unsafe fn store_through(table: &Tensor<i64, { [-1] }>, dims: &[i32], slot: [i32; 1],
        tile: Tile<f32, { [4, 8] }>, at: [i32; 2]) {
        let ptr_part: Partition<i64, { [1] }> = table.partition(const_shape![1]);
        let address: Tile<i64, { [] }> = ptr_part.load(slot).reshape(const_shape![]);
        let base: PointerTile<*mut f32, { [] }> = int_to_ptr(address);
        let shape: Shape<{ [-1, -1] }> = Shape::<{ [-1, -1] }> { dims: &[dims[0], dims[1]] };
        let strides: Array<{ [-1, 1] }> = Array::<{ [-1, 1] }> { dims: &[dims[1]] };
        let mut tensor: Tensor<f32, { [-1, -1] }> =
            make_tensor_view(base, shape, strides, new_token_unordered());
        let mut parts: PartitionMut<f32, { [4, 8] }> = tensor.partition_mut(const_shape![4, 8]);
        parts.store(tile, at);
    }

    #[cutile::entry()]
    unsafe fn f(table: &Tensor<i64, { [-1] }>, out: &mut Tensor<f32, { [4, 8] }>, n: i32) {
        let tile: Tile<f32, { [4, 8] }> = constant(2.0f32, const_shape![4, 8]);
        let at: [i32; 2] = permute_array([n, 0i32], const_array![1, 0]);
        let dims: &[i32] = &[n, 64i32];
        store_through(table, dims, [0i32], tile, at);
        out.store(tile);
    }
}
"""


TILEIR_VIEWS = """#[cutile::module]
mod k {
    use cutile::core::*;
    use cutile::tileir::*;

    #[cutile::entry()]
    unsafe fn f(data: &Tensor<f32, { [-1, -1] }>, out: &mut Tensor<f32, { [16, 16] }>) {
        let tok: Token = new_token_unordered();
        let gsv: GatherScatterView<f32, { [8, 64] }, 0> =
            unsafe { make_gather_scatter_view(data, const_shape![8, 64], padding::None) };
        let sparse_idx: Tile<i32, { [8] }> = constant(0i32, const_shape![8]);
        let pid: (i32, i32, i32) = get_tile_block_id();
        let (_tile, _tok): (Tile<f32, { [8, 64] }>, Token) = unsafe {
            load_gather_scatter_view_tko(&gsv, sparse_idx, pid.1, tok, ordering::Relaxed,
                scope::TileBlock)
        };
        let sv: StridedView<f32, { [16, 16] }, { [2, 1] }, { [1, 0] }> =
            unsafe { make_strided_view(data, const_shape![16, 16], padding::None) };
        let (tile, _t2): (Tile<f32, { [16, 16] }>, Token) = unsafe {
            load_strided_view_tko(&sv, [pid.0, pid.1], tok, ordering::Relaxed,
                scope::TileBlock)
        };
        out.store(tile);
    }
}
"""


def _ops(result, kind):  # type: ignore[no-untyped-def]
    (function,) = result.ir.functions
    return [op for op in walk(function.body) if isinstance(op, kind)]


def test_made_tensors_have_typed_views_and_carried_chains() -> None:
    result = compile_text(COPY, generics={"B": "16"}, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    source, target = _ops(result, MakeTensorView)
    assert str(source.result.type) == str(target.result.type)
    assert str(source.result.type) == "tensor_view<?x64xf16, strides=[64,1]>"
    assert len(source.dynamic_shape) == 1 and not source.dynamic_strides
    (user,) = [op.result for op in _ops(result, MakeToken)][-1:]
    (loop,) = _ops(result, For)
    (load,) = _ops(result, LoadViewTko)
    (store,) = _ops(result, StoreViewTko)
    # both tensors start their chains at `tok` and carry them through the loop
    assert [v.id for v in loop.init_values[-2:]] == [user.id, user.id]
    carried_from, carried_to = loop.body.blocks[0].args[-2:]
    assert load.token == carried_from and store.token == carried_to
    assert load.hints[0].latency == 2 and load.hints[0].allow_tma is False


def test_tensors_made_per_iteration_stay_inside_it() -> None:
    result = compile_text(PER_ITERATION, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    (loop,) = _ops(result, For)
    assert len(loop.init_values) == 1  # only the raw-pointer chain is carried
    first, second = _ops(result, StoreViewTko)
    assert second.token == first.result_token
    # the host does not know a made tensor's extent: its checks stay in the kernel
    assert len(_ops(result, Assert)) == 2


def test_an_input_written_through_an_unsafe_view_is_chained() -> None:
    result = compile_text(WRITTEN_INPUT, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    written, block_store = _ops(result, StoreViewTko)
    (read,) = _ops(result, LoadViewTko)
    assert read.token == written.result_token  # the read waits for the write
    assert block_store.token != written.result_token  # the output has its own chain


def test_tensors_made_from_a_pointer_table_are_written_whole() -> None:
    """A dynamic-shaped made tensor's `partition_mut` covers the whole tensor (no
    per-block offset), as in cuTile Rust; the index is `permute_array`'s reordering."""
    result = compile_text(TABLE, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    made = _ops(result, MakeTensorView)[-1]  # after the parameters' views
    assert str(made.result.type) == "tensor_view<?x?xf32, strides=[?,1]>"
    raw_store, _ = _ops(result, StoreViewTko)
    (function,) = result.ir.functions  # type: ignore[union-attr]
    n = function.params[-1]
    assert raw_store.index[0] != n and raw_store.index[1] == n


def test_gather_scatter_and_strided_views_load_through_load_view_tko() -> None:
    result = compile_text(TILEIR_VIEWS, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    (gather,) = _ops(result, MakeGatherScatterView)
    (strided,) = _ops(result, MakeStridedView)
    assert str(gather.result.type).startswith("gather_scatter_view<tile=(8x64), ")
    assert str(strided.result.type).endswith(", dim_map=[1,0]>")
    from_gather, from_strided = _ops(result, LoadViewTko)
    assert from_gather.view == gather.result and from_strided.view == strided.result
    assert str(from_gather.index[0].type) == "tile<8xi32>"
    assert from_gather.token == from_strided.token  # the same token, not ordered: reads


PERMUTED_VIEW = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [16, 16] }>, a: &Tensor<f32, { [-1, 64] }>) {
        let token: Token = new_token_unordered();
        let read: Partition<f32, { [16, 16] }> =
            make_partition_view(a, const_shape![16, 16], padding::Zero, const_array![1, 0], token);
        z.store(read.load([ROW, 0i32]));
    }
}
"""


def test_a_permuted_raw_view_checks_each_index_on_the_tensor_axis_it_walks() -> None:
    """With dim_map [1, 0] index axis 0 walks the tensor's axis 1 (64 wide: 4 tiles of 16)
    and index axis 1 walks its axis 0 (known at launch)."""
    result = compile_text(PERMUTED_VIEW.replace("ROW", "5i32"), stop_after=Stage.IR)
    (diagnostic,) = [d for d in result.diagnostics if d.is_error]
    assert diagnostic.code is codes.PARTITION_OUT_OF_BOUNDS
    assert diagnostic.notes == ("Bounds check failed: 0 <= index < 4",)
    inside = compile_text(PERMUTED_VIEW.replace("ROW", "3i32"), stop_after=Stage.IR)
    assert inside.ok, inside.diagnostics
    kernel = inside.kernel
    a = kernel.signature.params[1].index  # type: ignore[union-attr]
    abi, _ = entry_abi(kernel.signature)  # type: ignore[union-attr]
    checks = KernelLowering(kernel, abi).lower("f").bounds.launch_checks  # type: ignore[arg-type]
    assert [(c.rhs, c.cause) for c in checks] == [
        (Quantity(tile_count=(a, 0, 16)), "partition load index on axis 1")
    ]


@pytest.mark.tileiras
def test_raw_views_assemble_and_mark_the_contract(
    disassemble: Callable[[bytes], str], tileiras: Tileiras
) -> None:
    copy = compile_text(COPY, generics={"B": "16"}, stop_after=Stage.CUBIN)
    assert copy.ok and copy.cubin, copy.diagnostics
    text = disassemble(copy.bytecode)  # type: ignore[arg-type]
    assert "tensor_view<?x64xf16, strides=[64,1]>" in text
    table = compile_text(TABLE, stop_after=Stage.CUBIN)
    assert table.ok and table.cubin, table.diagnostics
    assert "int_to_ptr" in disassemble(table.bytecode)  # type: ignore[arg-type]
    views = compile_text(TILEIR_VIEWS, stop_after=Stage.CUBIN)
    assert views.ok and views.cubin, views.diagnostics
    text = disassemble(views.bytecode)  # type: ignore[arg-type]
    assert "load_view_tko relaxed tl_blk %gsview[" in text and "traversal_strides=[2,1]" in text
    written = compile_text(WRITTEN_INPUT, stop_after=Stage.CUBIN)
    assert written.ok and written.cubin, written.diagnostics
    assert written.contract.safety.unchecked_accesses  # type: ignore[union-attr]
