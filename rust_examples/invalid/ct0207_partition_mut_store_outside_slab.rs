// entry: f  generics: BM=64 BN=64
// `partition_mut` indices are local to the block's slab: a constant index outside it
// would write another block's tiles.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const BM: i32, const BN: i32>(z: &mut Tensor<f32, { [BM, BN] }>, x: &Tensor<f32, { [-1, -1] }>) {
        let px = x.partition(const_shape![32, 32]);
        let mut pz = z.partition_mut(const_shape![32, 32]);
        let t = px.load([0i32, 0i32]);
        pz.store(t, [1, 1]);
        pz.store(t, [2, 0]); // ERROR[CT0207]: index 2 on axis 0 is outside this block's 2 tiles
        pz.store(t, [0, -1]); // ERROR[CT0207]: index -1 on axis 1
    }
}
