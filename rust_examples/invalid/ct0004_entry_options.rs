// entry: f  generics:
// An unknown option, and unchecked accesses on a safe fn.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry(fast_math = true, unchecked_accesses = true)] // ERROR[CT0004]: unknown entry option `fast_math`
    fn f(z: &mut Tensor<f32, { [128] }>) { // ERROR[CT0004]: requires an `unsafe fn` entry
        z.store(z.load());
    }
}
