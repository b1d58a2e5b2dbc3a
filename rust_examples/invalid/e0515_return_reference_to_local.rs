// entry: f  generics: B=128
// A device function cannot return a reference to its own local.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn view(t: &Tensor<f32, { [-1] }>) -> Partition<f32, { [16] }> {
        let p = t.partition(const_shape![16]);
        &p // ERROR[E0515]: cannot return reference to local variable `p`
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.load_like(z);
        let p = view(x);
    }
}
