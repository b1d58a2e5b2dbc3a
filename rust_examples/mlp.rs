// A fused MLP layer: z = relu(x @ w + bias), one BM x BN tile of z per block.
// The bias row is loaded once per block and broadcast down the tile's rows.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn relu<const BM: i32, const BN: i32>(t: Tile<f32, { [BM, BN] }>) -> Tile<f32, { [BM, BN] }> {
        let zero: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
        max_tile(t, zero)
    }

    #[cutile::entry()]
    fn mlp<E: ElementType, const BM: i32, const BN: i32, const BK: i32>(
        z: &mut Tensor<E, { [BM, BN] }>,
        x: &Tensor<E, { [-1, -1] }>,
        w: &Tensor<E, { [-1, -1] }>,
        bias: &Tensor<E, { [-1] }>,
    ) {
        let part_x = x.partition(const_shape![BM, BK]);
        let part_w = w.partition(const_shape![BK, BN]);
        let part_b = bias.partition(const_shape![BN]);
        let (m, n, _) = get_tile_block_id();
        let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
        for k in 0i32..num_tiles(&part_x, 1) {
            acc = mma(part_x.load([m, k]), part_w.load([k, n]), acc);
        }
        let b: Tile<f32, { [BN] }> = convert_tile(part_b.load([n]));
        let rows: Tile<f32, { [BM, BN] }> = b.reshape(const_shape![1, BN]).broadcast(const_shape![BM, BN]);
        let result: Tile<E, { [BM, BN] }> = convert_tile(relu(acc + rows));
        z.store(result);
    }
}
