// entry: f  generics: B=128
// A check hoisted to a loop preheader still runs in the kernel, so
// `deny_in_kernel_checks` rejects it (as the reference rejects its whole rung 5).

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry(deny_in_kernel_checks = true)]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>, n: i32) {
        let p = x.partition(const_shape![B]);
        let mut acc = constant(0.0f32, const_shape![B]);
        for j in 0..n {
            acc = acc + p.load([j]); // ERROR[CT0209]: partition load index on axis 0
        }
        z.store(acc);
    }
}
