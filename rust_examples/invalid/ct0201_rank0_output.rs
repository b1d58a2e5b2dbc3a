// entry: scalar_out  generics:
// A rank-0 output cannot be partitioned either.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn scalar_out(
        z: &mut Tensor<f32, { [] }>, // ERROR[CT0201]: has rank 0
    ) {
        z.store(z.load());
    }
}
