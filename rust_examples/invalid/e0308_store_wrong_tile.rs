// entry: f  generics: B=256
// The stored tile must have the output's tile type.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, w: &mut Tensor<f32, { [128] }>) {
        z.store(w.load()); // ERROR[E0308]: expected `Tile<f32, {[256]}>`, found `Tile<f32, {[128]}>`
    }
}
