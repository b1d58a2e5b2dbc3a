// entry: f  generics:
// Entries write results into outputs; they cannot return them.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>)
        -> f32 // ERROR[CT0205]: cannot return a value
    {
        z.store(z.load());
        1.0f32
    }
}
