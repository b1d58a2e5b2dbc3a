// entry: f  generics: B=128

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, a: f32) {
        let scale: f32 = 2; // ERROR[E0308]
        z.store(z.load());
    }
}
