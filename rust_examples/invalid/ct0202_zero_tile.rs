// entry: zero  generics: B=0
// Zero is not a positive power of two.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn zero<const B: i32>(z: &mut Tensor<i32, { [B] }>) { // ERROR[CT0202]: tile dimension 0
        z.store(z.load());
    }
}
