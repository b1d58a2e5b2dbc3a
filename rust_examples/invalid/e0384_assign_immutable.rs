// entry: f  generics: B=128
// Plain and compound assignment to a binding without `mut` are both reported.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let scale = 1i32;
        scale = 2i32; // ERROR[E0384]: cannot assign twice to immutable variable `scale`
        scale *= 2i32; // ERROR[E0384]: `scale`
        let mut fine = scale;
        fine += 1i32;
        z.store(x.load_like(z));
    }
}
