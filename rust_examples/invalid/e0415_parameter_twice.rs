// entry: f  generics: B=128
// A parameter name bound twice in the entry's list.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>, x: &Tensor<f32, { [-1] }>) { // ERROR[E0415]: identifier `x` is bound more than once
        let t = x.load_like(z);
        z.store(t);
    }
}
