// entry: f  generics:
// Malformed optimization hints: a cluster size that is not a power of two, a per-load hint
// given as an entry hint, and an architecture tileiras does not know.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry(optimization_hints = (
        sm_90 = (num_cta_in_cga = 3), // ERROR[CT0004]: `sm_90.num_cta_in_cga` must be a power of two up to 16, found 3
        sm_100 = (latency = 4), // ERROR[CT0004]: `latency` is a per-load hint, not an entry hint
        sm_99 = (occupancy = 2), // ERROR[CT0004]: unknown architecture `sm_99`
    ))]
    fn f(z: &mut Tensor<f32, { [128] }>, x: &Tensor<f32, { [-1] }>) {
        z.store(x.load_like(z));
    }
}
