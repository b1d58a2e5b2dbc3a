// Batched matrix multiply z[b] = x[b] @ y[b] for x: [B, M, K], y: [B, K, N].
// The output is partitioned [1, BM, BN]: block (b, m, n) computes one tile of batch b.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn batch_matmul<E: ElementType, const BM: i32, const BN: i32, const BK: i32>(
        z: &mut Tensor<E, { [1, BM, BN] }>,
        x: &Tensor<E, { [-1, -1, -1] }>,
        y: &Tensor<E, { [-1, -1, -1] }>,
    ) {
        let part_x = x.partition(const_shape![1, BM, BK]);
        let part_y = y.partition(const_shape![1, BK, BN]);
        let (b, m, n) = get_tile_block_id();
        let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
        for k in 0i32..num_tiles(&part_x, 2) {
            let a: Tile<E, { [BM, BK] }> = part_x.load([b, m, k]).reshape(const_shape![BM, BK]);
            let c: Tile<E, { [BK, BN] }> = part_y.load([b, k, n]).reshape(const_shape![BK, BN]);
            acc = mma(a, c, acc);
        }
        let result: Tile<E, { [BM, BN] }> = convert_tile(acc);
        z.store(result.reshape(const_shape![1, BM, BN]));
    }
}
