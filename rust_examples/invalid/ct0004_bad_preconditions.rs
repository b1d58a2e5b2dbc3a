// entry: f  generics:
// Preconditions are `dim(a, i) == dim(b, j)` and `dim(t, k) % d == 0` over tensor
// parameters and axes within their rank.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry(preconditions = (
        dim(x, 3) == dim(y, 0), // ERROR[CT0004]: unsupported precondition
        dim(x, 0) % 0 == 0, // ERROR[CT0004]: unsupported precondition
        dim(x, 0) == dim(y, 0),
    ))]
    fn f(z: &mut Tensor<f32, { [128] }>, x: &Tensor<f32, { [-1] }>, y: &Tensor<f32, { [-1] }>) {
        z.store(x.load_like(z));
    }
}
