// entry: two  generics: B=128
// Both writes through `&` references are reported, not just the first.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn two<const B: i32>(
        z: &mut Tensor<f32, { [B] }>,
        x: &Tensor<f32, { [-1] }>,
        y: &Tensor<f32, { [-1] }>,
    ) {
        let tile = x.load_like(z);
        x.store(tile); // ERROR[E0596]: `x`
        y.store(tile); // ERROR[E0596]: `y`
        z.store(tile);
    }
}
