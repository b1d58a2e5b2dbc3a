// entry: f  generics: S=[64, 32] B=128
// Indices into arrays and shapes are compile-time constants within bounds.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const S: [i32; 2], const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let rows = S[0];
        let depth = S[2]; // ERROR[E0308]: index 2 is out of bounds for length 2
        let (block, _, _) = get_tile_block_id();
        let pick = S[block]; // ERROR[CT0002]: the index must be a compile-time constant
        let n = 4i32;
        let bad = n[0]; // ERROR[CT0002]: indexing a value of type `i32`
        z.store(x.load_like(z));
    }
}
