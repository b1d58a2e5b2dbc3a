// entry: f  generics: B=128
// `&mut Tensor` is not `Copy`: `let w = z;` moves the reference.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let w = z;
        let t = x.load_like(w);
        z.store(t); // ERROR[E0382]: borrow of moved value: `z`
    }
}
