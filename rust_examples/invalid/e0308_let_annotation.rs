// entry: f  generics: B=128
// The annotation says f16, the load gives f32.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t: Tile<f16, { [B] }> = x.load_like(z); // ERROR[E0308]: expected `Tile<f16, {[128]}>`
        z.store(x.load_like(z));
    }
}
