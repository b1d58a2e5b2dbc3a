// entry: f  generics: B=128
// A device function whose parameter list binds a name twice: reported where it is called.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn pick(a: Tile<f32, { [128] }>, a: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { // ERROR[E0415]: identifier `a` is bound more than once
        a
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.load_like(z);
        z.store(pick(t, t));
    }
}
