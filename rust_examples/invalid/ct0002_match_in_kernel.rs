// entry: f  generics:
// `match` is rejected while the module is converted to the AST.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>, n: i32) {
        let k = match n { 0 => 1, _ => 2 }; // ERROR[CT0002]: the expression `match n
        z.store(z.load());
    }
}
