// Tiled matrix multiply z = x @ y for any element type E (f16, bf16, f32), accumulating
// in f32. Each tile block computes one BM x BN tile of z, walking K in BK steps.
//
//   cutile-compile rust_examples/gemm.rs --entry gemm --generics E=f16,BM=128,BN=128,BK=64 -o build/

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn gemm<E: ElementType, const BM: i32, const BN: i32, const BK: i32>(
        z: &mut Tensor<E, { [BM, BN] }>,
        x: &Tensor<E, { [-1, -1] }>,
        y: &Tensor<E, { [-1, -1] }>,
    ) {
        let part_x = x.partition(const_shape![BM, BK]);
        let part_y = y.partition(const_shape![BK, BN]);
        let (m, n, _) = get_tile_block_id();
        let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
        for k in 0i32..num_tiles(&part_x, 1) {
            let a = part_x.load([m, k]);
            let b = part_y.load([k, n]);
            acc = mma(a, b, acc);
        }
        let result: Tile<E, { [BM, BN] }> = convert_tile(acc);
        z.store(result);
    }

    // The same GEMM with its launch facts declared: K agrees between x and y (so the
    // y loads need no check) and is a multiple of 8, and every row starts 16-byte aligned
    // for 2-byte elements (8 elements), which lets tileiras use aligned vector and TMA
    // loads. The host verifies all of this before each launch and refuses arguments that
    // break it.
    #[cutile::entry(preconditions = (
        dim(x, 1) == dim(y, 0),
        dim(x, 1) % 8 == 0,
        stride(x, 0) % 8 == 0,
        stride(y, 0) % 8 == 0,
        stride(z, 0) % 8 == 0,
    ))]
    fn gemm_aligned<E: ElementType, const BM: i32, const BN: i32, const BK: i32>(
        z: &mut Tensor<E, { [BM, BN] }>,
        x: &Tensor<E, { [-1, -1] }>,
        y: &Tensor<E, { [-1, -1] }>,
    ) {
        gemm_tile::<E, BM, BN, BK>(z, x, y);
    }

    // `gemm_aligned` with the same declared facts and every tile access unchecked (the
    // bounds are the caller's promise): the baseline that measures what the checks cost.
    #[cutile::entry(
        unchecked_accesses = true,
        preconditions = (
            dim(x, 1) == dim(y, 0),
            dim(x, 1) % 8 == 0,
            stride(x, 0) % 8 == 0,
            stride(y, 0) % 8 == 0,
            stride(z, 0) % 8 == 0,
        ),
    )]
    unsafe fn gemm_unchecked<E: ElementType, const BM: i32, const BN: i32, const BK: i32>(
        z: &mut Tensor<E, { [BM, BN] }>,
        x: &Tensor<E, { [-1, -1] }>,
        y: &Tensor<E, { [-1, -1] }>,
    ) {
        gemm_tile::<E, BM, BN, BK>(z, x, y);
    }

    /// One BM x BN tile of z = x @ y, the body of `gemm_aligned` and `gemm_unchecked`.
    fn gemm_tile<E: ElementType, const BM: i32, const BN: i32, const BK: i32>(
        z: &mut Tensor<E, { [BM, BN] }>,
        x: &Tensor<E, { [-1, -1] }>,
        y: &Tensor<E, { [-1, -1] }>,
    ) {
        let part_x = x.partition(const_shape![BM, BK]);
        let part_y = y.partition(const_shape![BK, BN]);
        let (m, n, _) = get_tile_block_id();
        let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
        for k in 0i32..num_tiles(&part_x, 1) {
            acc = mma(part_x.load([m, k]), part_y.load([k, n]), acc);
        }
        let result: Tile<E, { [BM, BN] }> = convert_tile(acc);
        z.store(result);
    }
}
