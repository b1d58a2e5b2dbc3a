// entry: f  generics: B=128
// Device functions are inlined per call, so recursion (here mutual) is rejected; the
// error points at the recursive call inside the callee.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn ping<const N: i32>(t: Tile<f32, { [N] }>) -> Tile<f32, { [N] }> {
        pong(t + t)
    }

    fn pong<const N: i32>(t: Tile<f32, { [N] }>) -> Tile<f32, { [N] }> {
        ping(t) // ERROR[CT0002]: a recursive call of `ping`
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        z.store(ping(x.load_like(z)));
    }
}
