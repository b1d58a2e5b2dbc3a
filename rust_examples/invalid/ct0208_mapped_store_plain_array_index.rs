// entry: f  generics: BM=64 BN=64 MAP=[1, 4]
// A plain `[m, n]` array is not a minted index, even when its values came from one.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const BM: i32, const BN: i32, const MAP: [i32; 2]>(
        mut z: MappedPartitionMut<f32, { [BM, BN] }, MAP>,
        x: &Tensor<f32, { [-1, -1] }>,
    ) {
        let px = x.partition(const_shape![BM, BN]);
        for idx in z.iter_indices() {
            let (m, n) = idx.components();
            z.store(px.load([m, n]), [m, n]); // ERROR[CT0208]: requires an index produced by this partition
        }
    }
}
