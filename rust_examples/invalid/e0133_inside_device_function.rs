// entry: f  generics: B=128
// A safe device function calling an `unsafe fn` without a block: reported in its body.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    unsafe fn raw_store<const N: i32>(out: &mut Tensor<f32, { [N] }>, t: Tile<f32, { [N] }>) {
        out.store(t);
    }

    fn wrapper<const N: i32>(out: &mut Tensor<f32, { [N] }>, t: Tile<f32, { [N] }>) {
        raw_store(out, t); // ERROR[E0133]: `raw_store`
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.load_like(z);
        wrapper(z, t);
    }
}
