// entry: mat  generics:
// An output's tile may have any extents (a `partition_mut` cuts it into tiles), but one
// loaded or stored whole is a Tile IR tile: every dimension a power of two.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn mat(z: &mut Tensor<f32, { [64, 48] }>, x: &Tensor<f32, { [-1, -1] }>) {
        let t = x.partition(const_shape![64, 16]).load([0i32, 0i32]);
        z.store(t); // ERROR[CT0202]: tile dimension 48 of output `z`
    }
}
