// entry: f  generics: B=128
// A runtime `if` used as a value needs the same type in both branches (and an `else`).

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let (block, _, _) = get_tile_block_id();
        let scale = if block == 0i32 { 1i32 } else { 2.0f32 }; // ERROR[E0308]: `if` and `else` have incompatible types: `i32` and `f32`
        let other = if block == 1i32 { 3i32 }; // ERROR[E0308]: `i32` and `()`
        z.store(x.load_like(z));
    }
}
