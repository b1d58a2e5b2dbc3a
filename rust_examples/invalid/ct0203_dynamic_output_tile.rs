// entry: f  generics:
// An output's tile shape must be static.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [-1] }>) { // ERROR[CT0203]: must be static
        z.store(z.load());
    }
}
