// entry: add  generics: B=100
// B is only known after specialization: 100 is not a power of two, so the whole output
// tile cannot be loaded like `z` (cut it with `partition_mut` instead).

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn add<const B: i32>(
        z: &mut Tensor<f32, { [B] }>,
        x: &Tensor<f32, { [-1] }>,
    ) {
        let t = x.load_like(z); // ERROR[CT0202]: tile dimension 100 of output `z`
    }
}
