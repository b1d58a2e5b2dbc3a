// entry: scale  generics: B=128
// Two modules define an entry `scale`: the request must say which.

#[cutile::module]
mod first {
    use cutile::core::*;

    #[cutile::entry()]
    fn scale<const B: i32>(z: &mut Tensor<f32, { [B] }>) {
        z.store(z.load());
    }
}

#[cutile::module]
mod second {
    use cutile::core::*;

    #[cutile::entry()]
    fn scale<const B: i32>(z: &mut Tensor<f32, { [B] }>) { // ERROR[CT0103]: is ambiguous
        z.store(z.load());
    }
}
