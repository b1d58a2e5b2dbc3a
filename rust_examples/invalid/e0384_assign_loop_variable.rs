// entry: f  generics: B=128
// A `for` loop variable is immutable, like a Rust loop binding.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let mut total = 0i32;
        for i in 0..4 {
            i += 1i32; // ERROR[E0384]: cannot assign twice to immutable variable `i`
            total += i;
        }
        z.store(x.load_like(z));
    }
}
