// entry: f  generics: B=128
// A typo in a tensor method name.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        z.stroe(x.load_like(z)); // ERROR[E0599]: no method named `stroe`
    }
}
