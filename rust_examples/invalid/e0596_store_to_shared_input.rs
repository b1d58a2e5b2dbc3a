// entry: copy  generics: B=128
// Storing into a `&Tensor` input: inputs are read-only.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn copy<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let tile = x.load_like(z);
        x.store(tile); // ERROR[E0596]: cannot store through `x`, as it is behind a `&` reference
    }
}
