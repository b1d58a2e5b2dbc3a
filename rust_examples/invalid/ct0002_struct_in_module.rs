// entry: f  generics:
// Kernel modules hold functions, uses and consts only.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    struct Params { // ERROR[CT0002]: the item `struct item` is not supported
        scale: f32,
    }

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>) {
        z.store(z.load());
    }
}
