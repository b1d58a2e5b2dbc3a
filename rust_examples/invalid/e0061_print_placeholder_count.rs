// entry: f  generics: B=128
// The format string has two `{}` placeholders but only one value follows it.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        cuda_tile_print!("block {} of {}\n", pid.0); // ERROR[E0061]: 2 `{}` placeholder(s) but 1 argument(s)
        z.store(x.load_like(z));
    }
}
