// entry: f  generics: B=128
// A name that was never bound, and one bound only inside a block.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        {
            let inner = x.load_like(z);
        }
        z.store(inner); // ERROR[E0425]: cannot find value `inner`
        z.store(tile); // ERROR[E0425]: cannot find value `tile`
    }
}
