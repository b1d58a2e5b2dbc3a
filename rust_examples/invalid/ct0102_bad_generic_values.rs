// entry: f  generics: E=f17 B=4.5
// Both values are ill-typed; both are reported at their declarations.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<
        E: ElementType, // ERROR[CT0102]: invalid value `f17` for generic parameter `E`
        const B: i32, // ERROR[CT0102]: invalid value `4.5` for generic parameter `B`
    >(z: &mut Tensor<E, { [B] }>) {
        z.store(z.load());
    }
}
