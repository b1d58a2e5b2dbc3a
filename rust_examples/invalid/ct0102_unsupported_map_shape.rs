// entry: copy  generics: BM=64 BN=64 MAP=[2, 2]
// The persistent schedule groups rows ([G, 1]) or columns ([1, G]), not both.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn copy<const BM: i32, const BN: i32, const MAP: [i32; 2]>(
        mut z: MappedPartitionMut<f32, { [BM, BN] }, MAP>, // ERROR[CT0102]: map shape [2, 2] is not supported
        x: &Tensor<f32, { [-1, -1] }>,
    ) {
        let px = x.partition(const_shape![BM, BN]);
        for idx in z.iter_indices() {
            z.store(px.load(idx.coords()), idx);
        }
    }
}
