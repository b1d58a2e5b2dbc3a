// Gather whole tiles: tile block b copies tile `tile_index[b]` of `x` into tile b of `z`.
// The source tile comes from data, so no rung of the bounds ladder can prove it in range:
// the check stays in the kernel, and an index past the end of `x` traps (a device-side
// assert) instead of reading memory that is not `x`.
//
//   cutile-compile rust_examples/gather.rs --entry gather_tiles --generics B=256 -o build/

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn gather_tiles<const B: i32>(
        z: &mut Tensor<f32, { [B] }>,
        x: &Tensor<f32, { [-1] }>,
        tile_index: &Tensor<i32, { [-1] }>,
    ) {
        let (b, _, _) = get_tile_block_id();
        let indices = tile_index.partition(const_shape![1]);
        let source: i32 = tile_to_scalar(indices.load([b]).reshape(const_shape![]));
        let tiles = x.partition(const_shape![B]);
        z.store(tiles.load([source]));
    }

    /// Every tile of `z` gets the sum of the first `count` tiles of `x`. The index walks a
    /// unit-step loop up to a runtime scalar, so its check is hoisted to the loop's
    /// preheader: one assert before the loop covers every iteration, and a `count` past the
    /// end of `x` traps there before the first load.
    #[cutile::entry()]
    fn sum_leading_tiles<const B: i32>(
        z: &mut Tensor<f32, { [B] }>,
        x: &Tensor<f32, { [-1] }>,
        count: i32,
    ) {
        let tiles = x.partition(const_shape![B]);
        let mut total = constant(0.0f32, const_shape![B]);
        for j in 0i32..count {
            total = total + tiles.load([j]);
        }
        z.store(total);
    }
}
