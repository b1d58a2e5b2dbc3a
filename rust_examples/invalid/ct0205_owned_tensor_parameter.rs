// entry: f  generics:
// Tensors are passed by reference.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(
        z: &mut Tensor<f32, { [128] }>,
        x: Tensor<f32, { [-1] }>, // ERROR[CT0205]: is not a supported entry parameter type
    ) {
        z.store(z.load());
    }
}
