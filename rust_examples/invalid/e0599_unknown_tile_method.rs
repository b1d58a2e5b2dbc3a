// entry: f  generics: B=128
// Tiles have no `exp2` method in this prelude.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.load_like(z);
        t.exp2(); // ERROR[E0599]: no method named `exp2` found for `Tile<f32, {[128]}>`
        z.store(t);
    }
}
