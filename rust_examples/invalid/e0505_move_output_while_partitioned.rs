// entry: f  generics: B=128
// Moving `z` while its `PartitionMut` still borrows it.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let mut part = z.partition_mut(const_shape![16]);
        let w = z; // ERROR[E0505]: cannot move out of `z` because it is borrowed
        let one = constant(1.0f32, const_shape![16]);
        part.store(one, [0i32]);
    }
}
