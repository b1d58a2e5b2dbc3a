// entry: f  generics:
// A call whose parenthesis is never closed.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>) {
        z.store(z.load(); // ERROR[CT0001]: expected `)`
    }
}
