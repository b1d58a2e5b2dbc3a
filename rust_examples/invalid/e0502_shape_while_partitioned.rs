// entry: f  generics: B=128
// `z.shape()` takes `&self`: a shared borrow while `z` is mutably borrowed.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let mut part = z.partition_mut(const_shape![16]);
        let s = z.shape(); // ERROR[E0502]: cannot borrow `*z` as immutable because it is also borrowed as mutable
        let one = constant(1.0f32, const_shape![16]);
        part.store(one, [0i32]);
    }
}
