// entry: f  generics: B=128
// A parameter declared `&Tensor` is shared even when the caller passes a `&mut`.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    fn write<const N: i32>(out: &Tensor<f32, { [N] }>, t: Tile<f32, { [N] }>) {
        out.store(t); // ERROR[E0596]: behind a `&` reference
    }

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.load_like(z);
        write(z, t);
    }
}
