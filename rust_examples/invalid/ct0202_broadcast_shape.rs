// entry: fill  generics: B=128
// Broadcasting to a shape with a dimension of 3.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn fill<const B: i32>(z: &mut Tensor<f32, { [B] }>, a: f32) {
        let wide = a.broadcast(const_shape![B, 3]); // ERROR[CT0202]: tile dimension 3 of the shape of `broadcast`
        z.store(a.broadcast(z.shape()));
    }
}
