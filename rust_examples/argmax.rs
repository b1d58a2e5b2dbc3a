// Row-wise argmax: out[i] = the first column holding the maximum of x[i, :].
// Each tile block handles BM whole rows (N, the row length, is a power of two).

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn argmax_rows<E: ElementType, const BM: i32, const N: i32>(
        out: &mut Tensor<i32, { [BM] }>,
        x: &Tensor<E, { [-1, N] }>,
    ) {
        let (m, _, _) = get_tile_block_id();
        let rows = x.partition(const_shape![BM, N]);
        let t: Tile<f32, { [BM, N] }> = convert_tile(rows.load([m, 0i32]));
        let row_max: Tile<f32, { [BM, 1] }> = reduce_max(t, 1i32);
        let is_max = eq_tile(t, row_max.broadcast(const_shape![BM, N]));
        let col_ids: Tile<i32, { [N] }> = iota(const_shape![N]);
        let cols = col_ids.reshape(const_shape![1, N]).broadcast(const_shape![BM, N]);
        let past_end: Tile<i32, { [BM, N] }> = constant(N, const_shape![BM, N]);
        let first: Tile<i32, { [BM] }> = reduce_min(select(is_max, cols, past_end), 1i32);
        out.store(first);
    }
}
