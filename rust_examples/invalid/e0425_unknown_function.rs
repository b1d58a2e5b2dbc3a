// entry: f  generics: B=128
// A misspelled prelude function.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        z.store(load_tile_lik(x, z)); // ERROR[E0425]: cannot find function `load_tile_lik`
    }
}
