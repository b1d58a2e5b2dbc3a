// entry: f  generics:
// An output's `-1` tile extent is the host partition's, known only at launch: the output
// can be cut with `partition_mut`, but not stored as one (static-shaped) tile.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [-1] }>) {
        let t = z.load(); // ERROR[CT0203]: the tile shape of output `z` is only known at launch
    }
}
