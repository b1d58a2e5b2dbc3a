// entry: f  generics: B=128
// get_tile_block_id returns three ids.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>) {
        let (bx, by) = get_tile_block_id(); // ERROR[E0308]: cannot match `(i32, i32, i32)`
        z.store(z.load());
    }
}
