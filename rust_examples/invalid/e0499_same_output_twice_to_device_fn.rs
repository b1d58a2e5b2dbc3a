// entry: f  generics: B=128
// Both arguments are `&mut` borrows of the same output, alive together during the call.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn write_both<const N: i32>(a: &mut Tensor<f32, { [N] }>, b: &mut Tensor<f32, { [N] }>, t: Tile<f32, { [N] }>) {
        a.store(t);
        b.store(t);
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.load_like(z);
        write_both(z, z, t); // ERROR[E0499]: cannot borrow `*z` as mutable more than once at a time
    }
}
