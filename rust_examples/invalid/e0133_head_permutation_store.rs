// entry: f  generics: BM=64 D=64
// The head-permutation bug: a store through a view of the whole output whose index omits
// the head coordinate, so the blocks of every head write head 0's tile. A safe
// `partition_mut` index is local to the block's own slab and cannot name another block's
// tile; only `partition_full_mut` can express this store, and it is an `unsafe fn`.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const BM: i32, const D: i32>(
        out: &mut Tensor<f32, { [1, BM, D] }>,
        x: &Tensor<f32, { [-1, -1, D] }>,
    ) {
        let (head, row, _) = get_tile_block_id();
        let px = x.partition(const_shape![1, BM, D]);
        let t = px.load([head, row, 0i32]);
        let mut whole = out.partition_full_mut(const_shape![1, BM, D]); // ERROR[E0133]: call to unsafe function `partition_full_mut` is unsafe
        whole.store(t, [0i32, row, 0i32]);
    }
}
