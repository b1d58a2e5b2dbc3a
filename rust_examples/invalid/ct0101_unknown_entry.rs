// entry: missing  generics:
// GLOBAL-ERROR[CT0101]: no entry function named `missing`

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn present(z: &mut Tensor<f32, { [128] }>) {
        z.store(z.load());
    }
}
