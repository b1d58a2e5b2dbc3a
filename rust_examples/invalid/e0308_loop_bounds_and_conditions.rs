// entry: f  generics: B=128
// Range bounds are i32, `step_by` takes an integer, and conditions are bool.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        for i in 0i64..4i64 { // ERROR[E0308]: expected `i32`, found `i64`
        }
        for j in (0..B).step_by(0.5f32) { // ERROR[E0308]: expected `i32`, found `f32`
        }
        let mut n = 0i32;
        while n { // ERROR[E0308]: expected `bool`, found `i32`
            n += 1i32;
        }
        if n + 1i32 { // ERROR[E0308]: expected `bool`, found `i32`
        }
        z.store(x.load_like(z));
    }
}
