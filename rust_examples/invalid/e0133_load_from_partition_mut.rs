// entry: f  generics: BM=64 BN=64
// Reading an output through its `PartitionMut` could race with other blocks: `unsafe fn`.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const BM: i32, const BN: i32>(z: &mut Tensor<f32, { [BM, BN] }>, x: &Tensor<f32, { [-1, -1] }>) {
        let mut pz = z.partition_mut(const_shape![32, 32]);
        let t = pz.load([0, 0]); // ERROR[E0133]: call to unsafe function `load` is unsafe
        pz.store(t, [0, 0]);
    }
}
