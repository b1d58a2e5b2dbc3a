// entry: f  generics: B=128
// `break` and `continue` work in `loop` and `while`; a `for` loop can only `continue`,
// `break` outside a loop is E0268, and inclusive ranges are not supported (yet).

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let mut n = 0i32;
        for i in 0..8 {
            if i == 2 { continue; }
            n += i;
            break; // ERROR[CT0002]: `break` out of a `for` loop
        }
        while n < 10i32 {
            break;
        }
        loop {
            break;
        }
        continue; // ERROR[E0268]: outside of a loop
        for k in 0..=3 { // ERROR[CT0002]: iterating over anything but
        }
        z.store(x.load_like(z));
    }
}
