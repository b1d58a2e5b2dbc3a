// entry: f  generics: B=128
// Only the unknown method should be reported.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.load_like(z).exp2(); // ERROR[E0599]: no method named `exp2`
        z.store(t);
    }
}
