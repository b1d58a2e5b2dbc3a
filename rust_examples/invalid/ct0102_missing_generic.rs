// entry: f  generics: B=128
// `S` is not given.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32,
         const S: [i32; 2]> // ERROR[CT0102]: missing generic argument `S`
    (z: &mut Tensor<f32, S>) {
        z.store(z.load());
    }
}
