// entry: f  generics:
// Comparison operators work on scalars; tiles use `lt_tile` and friends.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>) {
        let t = z.load();
        let smaller = t < t; // ERROR[E0369]: cannot apply `<`
        z.store(t);
    }
}
