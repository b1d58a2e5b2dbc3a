// entry: mat  generics:
// Every tile dimension must be a power of two, not just the first.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn mat(
        z: &mut Tensor<f32, { [64, 48] }>, // ERROR[CT0202]: tile dimension 48
        x: &Tensor<f32, { [-1, -1] }>,
    ) {
        z.store(x.load_like(z));
    }
}
