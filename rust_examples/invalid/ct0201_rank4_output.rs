// entry: big  generics:
// A partitioned output is spread over the 3-D grid: rank 4 is too many.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn big(
        z: &mut Tensor<f32, { [2, 2, 2, 2] }>, // ERROR[CT0201]: partitioned output `z` has rank 4
        x: &Tensor<f32, { [-1, -1, -1, -1] }>,
    ) {
        z.store(x.load_like(z));
    }
}
