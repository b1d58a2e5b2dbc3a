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
