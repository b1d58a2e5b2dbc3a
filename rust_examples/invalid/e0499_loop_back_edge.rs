// entry: f  generics: B=128
// The `PartitionMut` is used at the top of the loop: on the next iteration it is still live
// at `z.load()`, which comes later in the body.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let mut part = z.partition_mut(const_shape![16]);
        let one = constant(1.0f32, const_shape![16]);
        for i in 0i32..8i32 {
            part.store(one, [i]);
            let t = z.load(); // ERROR[E0499]: `*z`
        }
    }
}
