// entry: f  generics: B=128
// A device function is checked with each call's types: the error is reported inside the
// callee (with the call site as a note), once per failing call.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn shift<E: ElementType, const N: i32>(t: Tile<E, { [N] }>, by: E) -> Tile<E, { [N] }> {
        t + by // ERROR[E0308]: `+` needs operands of the same type
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.load_like(z);
        z.store(shift(t, 1.0f32));
    }
}
