// entry: f  generics:
// Host containers are not kernel types.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(
        z: &mut Tensor<f32, { [128] }>,
        v: Vec<f32>, // ERROR[CT0204]: unsupported type `Vec<f32>`
    ) {
        z.store(z.load());
    }
}
