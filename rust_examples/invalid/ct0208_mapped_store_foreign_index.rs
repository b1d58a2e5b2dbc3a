// entry: f  generics: BM=64 BN=64 MAP=[4, 1]
// A mapped store only accepts an index minted by that partition's `iter_indices()` (or by
// `z.iter_indices_with(&w)`, which mints indices both accept).

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const BM: i32, const BN: i32, const MAP: [i32; 2]>(
        mut z: MappedPartitionMut<f32, { [BM, BN] }, MAP>,
        mut w: MappedPartitionMut<f32, { [BM, BN] }, MAP>,
        x: &Tensor<f32, { [-1, -1] }>,
    ) {
        let px = x.partition(const_shape![BM, BN]);
        for idx in z.iter_indices() {
            let tile = px.load(idx.coords());
            z.store(tile, idx);
            w.store(tile, idx); // ERROR[CT0208]: index was produced by a different mapped partition
        }
    }
}
