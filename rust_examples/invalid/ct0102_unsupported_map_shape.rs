// entry: copy  generics: BM=64 BN=64 MAP=[0, 0]
// A map entry 0 marks an OWNED axis (one work item spans all of it); at least one axis
// must be streamed, or the persistent loop would have nothing to hand out.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn copy<const BM: i32, const BN: i32, const MAP: [i32; 2]>(
        mut z: MappedPartitionMut<f32, { [BM, BN] }, MAP>, // ERROR[CT0102]: needs at least one streamed (non-OWNED) axis
        x: &Tensor<f32, { [-1, -1] }>,
    ) {
        let px = x.partition(const_shape![BM, BN]);
        for idx in z.iter_indices() {
            z.store(px.load(idx.coords()), idx);
        }
    }
}
