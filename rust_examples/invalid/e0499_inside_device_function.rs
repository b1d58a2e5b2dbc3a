// entry: f  generics: B=128
// Borrows are checked in the device function's own body (reported there, once).

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn fill<const N: i32>(out: &mut Tensor<f32, { [N] }>, t: Tile<f32, { [N] }>) {
        let mut part = out.partition_mut(const_shape![16]);
        out.store(t); // ERROR[E0499]: `*out`
        part.store(constant(0.0f32, const_shape![16]), [0i32]);
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.load_like(z);
        fill(z, t);
        fill(z, t);
    }
}
