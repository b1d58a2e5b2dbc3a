// entry: f  generics: B=128
// A device-function generic that no argument determines must be given with a turbofish;
// arguments must match the declared parameter types.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn blocks<const N: i32>(extent: i32) -> i32 {
        extent / N
    }

    fn first<E: ElementType>(x: &Tensor<E, { [-1] }>, like: &mut Tensor<E, { [128] }>) -> Tile<E, { [128] }> {
        x.load_like(like)
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let n = blocks(1024i32); // ERROR[E0282]: cannot infer generic `N` of `blocks`
        let m = blocks::<64>(1024i32);
        let t = first(x, x); // ERROR[E0308]: expected `&mut Tensor<f32, {[128]}>`, found `&Tensor<f32, {[-1]}>`
        z.store(x.load_like(z));
    }
}
