// entry: shift  generics: B=128
// No implicit broadcasting: a tile plus a scalar is a type error.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn shift<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>, a: f32) {
        let tile = x.load_like(z);
        z.store(tile + a); // ERROR[E0308]: found `Tile<f32, {[128]}>` and `f32`
    }
}
