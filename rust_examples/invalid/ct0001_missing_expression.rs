// entry: f  generics:
// A `let` without its value expression.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>) {
        let t = ; // ERROR[CT0001]
        z.store(z.load());
    }
}
