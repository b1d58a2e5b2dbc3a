// entry: f  generics: B=128 TILE=64
// `TILE` is not a generic parameter of `f`.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>) { // ERROR[CT0102]: has no generic parameter `TILE`
        z.store(z.load());
    }
}
