// entry: two_tiles  generics: B=128
// Tiles of two outputs with different tile shapes.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn two_tiles<const B: i32>(z: &mut Tensor<f32, { [B] }>, w: &mut Tensor<f32, { [64] }>) {
        let sum = z.load() + w.load(); // ERROR[E0308]: `Tile<f32, {[128]}>` and `Tile<f32, {[64]}>`
        w.store(w.load());
    }
}
