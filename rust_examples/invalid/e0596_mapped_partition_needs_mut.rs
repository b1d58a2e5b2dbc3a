// entry: copy  generics: BM=64 BN=64 MAP=[4, 1]
// `z.store(tile, idx)` borrows the mapped partition mutably: the parameter needs `mut`.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn copy<const BM: i32, const BN: i32, const MAP: [i32; 2]>(
        z: MappedPartitionMut<f32, { [BM, BN] }, MAP>,
        x: &Tensor<f32, { [-1, -1] }>,
    ) {
        let px = x.partition(const_shape![BM, BN]);
        for idx in z.iter_indices() {
            z.store(px.load(idx.coords()), idx); // ERROR[E0596]: cannot borrow `z` as mutable
        }
    }
}
