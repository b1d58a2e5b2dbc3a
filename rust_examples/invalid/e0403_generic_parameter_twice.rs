// entry: f  generics: B=128
// A generic parameter name declared twice: the second could never be bound.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32, const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) { // ERROR[E0403]: the name `B` is already used
        let t = x.load_like(z);
        z.store(t);
    }
}
