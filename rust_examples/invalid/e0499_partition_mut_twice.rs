// entry: f  generics: B=128
// `partition_mut` keeps `z` mutably borrowed while the first `PartitionMut` is live.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let mut first = z.partition_mut(const_shape![16]);
        let mut second = z.partition_mut(const_shape![32]); // ERROR[E0499]: cannot borrow `*z` as mutable more than once at a time
        let one = constant(1.0f32, const_shape![16]);
        first.store(one, [0i32]);
        second.store(constant(2.0f32, const_shape![32]), [0i32]);
    }
}
