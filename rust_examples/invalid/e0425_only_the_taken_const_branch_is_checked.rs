// entry: f  generics: B=128 CAUSAL=0
// `if CAUSAL == 1` on a const generic is folded: only the taken branch is checked, so
// errors in the branch not taken (here the `then` branch) are not reported.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32, const CAUSAL: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.load_like(z);
        if CAUSAL == 1i32 {
            z.store(undefined_mask);
            z.store(t + 1i32);
        } else if CAUSAL == 0i32 {
            z.store(maks); // ERROR[E0425]: cannot find value `maks` in this scope
        } else {
            let broken: i64 = t;
        }
    }
}
