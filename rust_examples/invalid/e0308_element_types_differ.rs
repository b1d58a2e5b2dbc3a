// entry: mix  generics: B=64
// f32 and f16 tiles do not mix without an explicit conversion.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn mix<const B: i32>(
        z: &mut Tensor<f32, { [B] }>,
        x: &Tensor<f32, { [-1] }>,
        h: &Tensor<f16, { [-1] }>,
    ) {
        let a = x.load_like(z);
        let b = h.load_like(z);
        z.store(a * b); // ERROR[E0308]: `Tile<f32, {[64]}>` and `Tile<f16, {[64]}>`
    }
}
