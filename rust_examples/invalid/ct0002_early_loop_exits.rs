// entry: f  generics: B=128
// Only a trailing `continue;` is supported; `break`, an early `continue`, `loop` and
// inclusive ranges are not (yet).

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let mut n = 0i32;
        for i in 0..8 {
            continue; // ERROR[CT0002]: `continue` before the end of a loop body
            n += i;
        }
        while n < 10i32 {
            break; // ERROR[CT0002]: `break`
        }
        loop { // ERROR[CT0002]: `loop`
        }
        for k in 0..=3 { // ERROR[CT0002]: iterating over anything but
        }
        for k in 0..4 {
            n += k;
            continue;
        }
        z.store(x.load_like(z));
    }
}
