// entry: f  generics:
// `store` takes one tile.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>) {
        let t = z.load();
        z.store(t, t); // ERROR[E0061]: takes 1 argument(s) but 2 were supplied
    }
}
