// entry: part  generics: B=64
// Mutably partitioning a shared input.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn part<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let parts = x.partition_mut(const_shape![B]); // ERROR[E0596]: cannot mutably partition `x`
        z.store(x.load_like(z));
    }
}
