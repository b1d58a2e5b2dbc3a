// entry: f  generics: B=128
// A tile type written in the body is checked too.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let odd: Tile<f32, { [12] }> = x.load_like(z); // ERROR[CT0202]: tile dimension 12 of this tile
        z.store(x.load_like(z));
    }
}
