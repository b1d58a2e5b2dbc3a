// entry: f  generics: B=128
// `&mut z` and `&z` passed to one call are alive together.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn copy_into<const N: i32>(dst: &mut Tensor<f32, { [N] }>, like: &Tensor<f32, { [N] }>) {
        let s = like.shape();
        dst.store(constant(0.0f32, s));
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        copy_into(z, z); // ERROR[E0502]: cannot borrow `*z` as immutable
    }
}
