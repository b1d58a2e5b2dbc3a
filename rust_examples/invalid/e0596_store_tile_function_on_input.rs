// entry: copy  generics: B=256
// The free-function spelling of a store is checked the same way.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn copy<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let tile = load_tile_like(x, z);
        store_tile(z, tile);
        store_tile(x, tile); // ERROR[E0596]: cannot store through `x`
    }
}
