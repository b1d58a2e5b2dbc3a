// entry: f  generics: B=128
// An implicit `z.store` while a `PartitionMut` of `z` is still used later.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let mut part = z.partition_mut(const_shape![16]);
        let t = x.load_like(z); // ERROR[E0502]: as immutable because it is also borrowed as mutable
        z.store(t); // ERROR[E0499]: more than once at a time
        let one = constant(1.0f32, const_shape![16]);
        part.store(one, [1i32]);
    }
}
