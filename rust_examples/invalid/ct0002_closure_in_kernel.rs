// entry: f  generics:
// Closures parse but are not supported in kernels.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>) {
        let twice = |v: i32| v * 2; // ERROR[CT0002]: a closure is not supported
        z.store(z.load());
    }
}
