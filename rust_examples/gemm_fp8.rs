// FP8 matrix multiply with per-tensor scales, the layout of torch._scaled_mm:
//
//   z[M, N] = (scale_x * x[M, K]) @ (scale_y * y[N, K])^T, accumulated in f32, stored as E
//
// x and y hold f8e4m3fn (or f8e5m2: the FP generic) and are both K-major: y is given as
// [N, K] rows (torch._scaled_mm's column-major `b`), which is the operand layout Hopper's
// fp8 wgmma reads. Each tile block computes one BM x BN tile of z, walking K in BK steps.
//
//   cutile-compile rust_examples/gemm_fp8.rs --entry gemm_fp8_aligned \
//       --generics FP=f8e4m3fn,E=bf16,BM=128,BN=128,BK=128 --arch sm_90 -o build/

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn gemm_fp8<FP: ElementType, E: ElementType, const BM: i32, const BN: i32, const BK: i32>(
        z: &mut Tensor<E, { [BM, BN] }>,
        x: &Tensor<FP, { [-1, -1] }>,
        y: &Tensor<FP, { [-1, -1] }>,
        scale_x: f32,
        scale_y: f32,
    ) {
        scaled_tile::<FP, E, BM, BN, BK>(z, x, y, scale_x * scale_y);
    }

    // The same GEMM with its launch facts declared: x and y agree on K, K is a multiple of
    // 16 and every row starts 16-byte aligned (16 fp8 elements; 8 elements of a 2-byte
    // output), so tileiras may use aligned vector and TMA loads. The host checks all of it
    // before each launch.
    #[cutile::entry(preconditions = (
        dim(x, 1) == dim(y, 1),
        dim(x, 1) % 16 == 0,
        stride(x, 0) % 16 == 0,
        stride(y, 0) % 16 == 0,
        stride(z, 0) % 8 == 0,
    ))]
    fn gemm_fp8_aligned<
        FP: ElementType,
        E: ElementType,
        const BM: i32,
        const BN: i32,
        const BK: i32,
    >(
        z: &mut Tensor<E, { [BM, BN] }>,
        x: &Tensor<FP, { [-1, -1] }>,
        y: &Tensor<FP, { [-1, -1] }>,
        scale_x: f32,
        scale_y: f32,
    ) {
        scaled_tile::<FP, E, BM, BN, BK>(z, x, y, scale_x * scale_y);
    }

    /// The tuned form for sm_90: persistent (a fixed number of tile blocks walks the output
    /// tiles in groups of MAP[0] tile rows, so tiles of y stay in L2), every launch fact
    /// declared so no access needs an in-kernel check, the K-loop loads marked with latency
    /// LAT so tileiras pipelines them, and `occupancy = OCC`, `num_cta_in_cga = CTA`,
    /// `num_worker_warps_per_cta = W` hints. The fp8 products are summed exactly as Tile IR's
    /// `mmaf` without `fast_acc` asks: tileiras starts each k-tile's wgmmas from zero and adds
    /// them to the f32 accumulator with FADDs, so with W = 4 one warpgroup holds two 64x128
    /// f32 sets for a 128x128 tile, 255 registers and spills; W = 8 halves that (168, none).
    #[cutile::entry(
        preconditions = (
            dim(x, 1) == dim(y, 1),
            dim(x, 0) == dim(z, 0),
            dim(y, 0) == dim(z, 1),
            dim(x, 1) % 16 == 0,
            stride(x, 0) % 16 == 0,
            stride(y, 0) % 16 == 0,
            dim(z, 1) % 8 == 0,
            stride(z, 0) % 8 == 0,
        ),
        optimization_hints = (
            sm_90 = (num_cta_in_cga = CTA, occupancy = OCC, num_worker_warps_per_cta = W),
        ),
        deny_in_kernel_checks = true,
    )]
    fn gemm_fp8_tuned<
        FP: ElementType,
        E: ElementType,
        const BM: i32,
        const BN: i32,
        const BK: i32,
        const MAP: [i32; 2],
        const LAT: i32,
        const OCC: i32,
        const CTA: i32,
        const W: i32,
    >(
        mut z: MappedPartitionMut<E, { [BM, BN] }, MAP>,
        x: &Tensor<FP, { [-1, -1] }>,
        y: &Tensor<FP, { [-1, -1] }>,
        scale_x: f32,
        scale_y: f32,
    ) {
        let part_x = x.partition(const_shape![BM, BK]);
        let part_y = y.partition(const_shape![BN, BK]);
        let scale = scale_x * scale_y;
        for index in z.iter_indices() {
            let (m, n) = index.components();
            let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
            for k in 0i32..num_tiles(&part_x, 1) {
                let a = part_x.load_pipelined::<LAT>([m, k]);
                let b = part_y.load_pipelined::<LAT>([n, k]).transpose();
                acc = mma(a, b, acc);
            }
            let scaled = acc * scale.broadcast(const_shape![BM, BN]);
            let result: Tile<E, { [BM, BN] }> = convert_tile(scaled);
            z.store(result, index);
        }
    }

    /// One BM x BN tile of z: the fp8 products summed in f32, scaled once at the end.
    fn scaled_tile<FP: ElementType, E: ElementType, const BM: i32, const BN: i32, const BK: i32>(
        z: &mut Tensor<E, { [BM, BN] }>,
        x: &Tensor<FP, { [-1, -1] }>,
        y: &Tensor<FP, { [-1, -1] }>,
        scale: f32,
    ) {
        let part_x = x.partition(const_shape![BM, BK]);
        let part_y = y.partition(const_shape![BN, BK]);
        let (m, n, _) = get_tile_block_id();
        let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
        for k in 0i32..num_tiles(&part_x, 1) {
            let a = part_x.load([m, k]);
            let b = part_y.load([n, k]).transpose();
            acc = mma(a, b, acc);
        }
        let scaled = acc * scale.broadcast(const_shape![BM, BN]);
        let result: Tile<E, { [BM, BN] }> = convert_tile(scaled);
        z.store(result);
    }
}
