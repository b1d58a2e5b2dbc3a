// Persistent GEMM: a fixed number of tile blocks (e.g. one per SM) walks every output tile
// in a grouped order (MAP = [GROUP_M, 1]: GROUP_M rows of tiles at a time, so tiles of y
// are reused from L2). Stores go through indices minted by `iter_indices()`, which the
// compiler knows are disjoint across blocks.
//
//   cutile-compile rust_examples/persistent_gemm.rs --entry gemm_persistent \
//       --generics E=f16,BM=128,BN=128,BK=64,MAP=[8,1] -o build/

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn gemm_persistent<
        E: ElementType,
        const BM: i32,
        const BN: i32,
        const BK: i32,
        const MAP: [i32; 2],
    >(
        mut z: MappedPartitionMut<E, { [BM, BN] }, MAP>,
        x: &Tensor<E, { [-1, -1] }>,
        y: &Tensor<E, { [-1, -1] }>,
    ) {
        let part_x = x.partition(const_shape![BM, BK]);
        let part_y = y.partition(const_shape![BK, BN]);
        for index in z.iter_indices() {
            let (m, n) = index.components();
            let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
            for k in 0i32..num_tiles(&part_x, 1) {
                acc = mma(part_x.load([m, k]), part_y.load([k, n]), acc);
            }
            let result: Tile<E, { [BM, BN] }> = convert_tile(acc);
            z.store(result, index);
        }
    }

    /// The tuned form for sm_90: every launch fact declared (so no access needs an in-kernel
    /// check and tileiras can use TMA), the K-loop loads marked with latency `LAT` so the
    /// assembler pipelines them, and the entry hints `occupancy = OCC` per SM,
    /// `num_cta_in_cga = CTA` CTAs per tile block and `num_worker_warps_per_cta = W` (4: one
    /// consumer warpgroup, whose f32 accumulators of a 128x256 tile spill; 8: two, each with
    /// half the tile, 168 registers and no spills in tileiras 13.5). Sweep BM/BN/BK, MAP, LAT,
    /// OCC, CTA and W through the generics (tests/benchmarks/configs.py,
    /// client_stubs/autotune.py).
    #[cutile::entry(
        preconditions = (
            dim(x, 1) == dim(y, 0),
            dim(x, 0) == dim(z, 0),
            dim(y, 1) == dim(z, 1),
            dim(x, 1) % 8 == 0,
            dim(y, 1) % 8 == 0,
            dim(z, 1) % 8 == 0,
            stride(x, 0) % 8 == 0,
            stride(y, 0) % 8 == 0,
            stride(z, 0) % 8 == 0,
        ),
        optimization_hints = (
            sm_90 = (num_cta_in_cga = CTA, occupancy = OCC, num_worker_warps_per_cta = W),
        ),
        deny_in_kernel_checks = true,
    )]
    fn gemm_tuned<
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
        x: &Tensor<E, { [-1, -1] }>,
        y: &Tensor<E, { [-1, -1] }>,
    ) {
        let part_x = x.partition(const_shape![BM, BK]);
        let part_y = y.partition(const_shape![BK, BN]);
        for index in z.iter_indices() {
            let (m, n) = index.components();
            let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
            for k in 0i32..num_tiles(&part_x, 1) {
                let a = part_x.load_pipelined::<LAT>([m, k]);
                let b = part_y.load_pipelined::<LAT>([k, n]);
                acc = mma(a, b, acc);
            }
            let result: Tile<E, { [BM, BN] }> = convert_tile(acc);
            z.store(result, index);
        }
    }

    /// The simplest persistent kernel: copy x into z tile by tile.
    #[cutile::entry()]
    fn copy_persistent<E: ElementType, const BM: i32, const BN: i32, const MAP: [i32; 2]>(
        mut z: MappedPartitionMut<E, { [BM, BN] }, MAP>,
        x: &Tensor<E, { [-1, -1] }>,
    ) {
        let part_x = x.partition(const_shape![BM, BN]);
        for idx in z.iter_indices() {
            let (m, n) = idx.components();
            z.store(part_x.load([m, n]), idx);
        }
    }
}
