// entry: f  generics: BM=64 BN=64
// `partition_mut` cuts the block's output tile into sub-tiles of its own rank.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const BM: i32, const BN: i32>(z: &mut Tensor<f32, { [BM, BN] }>, x: &Tensor<f32, { [-1, -1] }>) {
        let mut qz = z.partition_mut(const_shape![64]); // ERROR[E0308]: needs a rank-2 tile shape
    }
}
