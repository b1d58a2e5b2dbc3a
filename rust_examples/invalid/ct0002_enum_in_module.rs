// entry: f  generics:
// Kernel modules hold functions, consts, structs, traits, impls and type aliases; an enum
// has no kernel meaning.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    enum Mode { // ERROR[CT0002]: the item `enum item` is not supported
        Fast,
        Exact,
    }

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>) {
        z.store(z.load());
    }
}
