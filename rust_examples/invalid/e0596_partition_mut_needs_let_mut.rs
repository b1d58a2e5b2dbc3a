// entry: f  generics: BM=64 BN=64
// Storing through a `PartitionMut` borrows it mutably, so it needs `let mut`; input
// partitions are read-only.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const BM: i32, const BN: i32>(z: &mut Tensor<f32, { [BM, BN] }>, x: &Tensor<f32, { [-1, -1] }>) {
        let px = x.partition(const_shape![32, 32]);
        let pz = z.partition_mut(const_shape![32, 32]);
        let t = px.load([0i32, 0i32]);
        pz.store(t, [0, 0]); // ERROR[E0596]: cannot borrow `pz` as mutable
        px.store(t, [0, 0]); // ERROR[E0596]: cannot store through a read-only `Partition`
    }
}
