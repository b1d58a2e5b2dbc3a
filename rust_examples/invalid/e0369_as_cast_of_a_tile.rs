// entry: f  generics: B=128
// `as` converts scalar numbers only; tiles are converted with `convert_tile`.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.load_like(z);
        let half = t as f16; // ERROR[E0369]: cannot cast `Tile<f32, {[128]}>` as `f16`
        let wide = (B as i64) as f64;
        let ptr = x as u64; // ERROR[E0369]: cannot cast
        z.store(t);
    }
}
