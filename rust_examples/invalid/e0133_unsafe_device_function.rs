// entry: f  generics: B=128
// Calling a user `unsafe fn` needs an `unsafe` block (or an `unsafe fn` caller).

#[cutile::module]
mod kernel {
    use cutile::core::*;

    unsafe fn raw_store<const N: i32>(out: &mut Tensor<f32, { [N] }>, t: Tile<f32, { [N] }>) {
        out.store(t);
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.load_like(z);
        raw_store(z, t); // ERROR[E0133]: call to unsafe function `raw_store` is unsafe
        unsafe {
            raw_store(z, t);
        }
    }
}
