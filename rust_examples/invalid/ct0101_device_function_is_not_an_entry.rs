// entry: helper  generics:
// The request names a device function.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>) {
        z.store(z.load());
    }

    fn helper(a: f32) -> f32 { // ERROR[CT0101]: no entry function named `helper`
        a
    }
}
