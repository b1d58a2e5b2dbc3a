// y = a * x + y, one tile of `y` per tile block, for any float element type `E`.
//
//   cutile-compile rust_examples/saxpy.rs --entry saxpy --generics E=f32,B=1024 -o build/

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn saxpy<E: ElementType, const B: i32>(
        a: E,
        x: &Tensor<E, { [-1] }>,
        y: &mut Tensor<E, { [B] }>,
    ) {
        // No implicit broadcasting in cuTile: the scalar becomes a tile explicitly.
        let tile_a: Tile<E, { [B] }> = a.broadcast(y.shape());
        let tile_x = load_tile_like(x, y);
        let tile_y = y.load();
        y.store(tile_a * tile_x + tile_y);
    }
}
