// entry: f  generics:
// Two statements run together.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>) {
        let t = z.load() // ERROR[CT0001]: expected `;`
        z.store(t);
    }
}
