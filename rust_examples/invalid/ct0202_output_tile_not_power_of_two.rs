// entry: add  generics: B=100
// B is only known after specialization: 100 is not a power of two.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn add<const B: i32>(
        z: &mut Tensor<f32, { [B] }>, // ERROR[CT0202]: tile dimension 100 of output `z`
        x: &Tensor<f32, { [-1] }>,
        y: &Tensor<f32, { [-1] }>,
    ) {
        z.store(x.load_like(z) + y.load_like(z));
    }
}
