// Rotary positional embedding (the half-split form): with x = [x1 | x2] along the head
// dimension D, out = [x1 * cos - x2 * sin | x2 * cos + x1 * sin]. cos and sin hold one
// row of D / 2 angles per row of x. Each block rotates BT rows; it writes its output tile
// as two halves through `partition_mut`.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn rope<E: ElementType, const BT: i32, const D: i32>(
        out: &mut Tensor<E, { [BT, D] }>,
        x: &Tensor<E, { [-1, D] }>,
        cos: &Tensor<E, { [-1, -1] }>,
        sin: &Tensor<E, { [-1, -1] }>,
    ) {
        let (t, _, _) = get_tile_block_id();
        let half = const_shape![BT, D / 2];
        let x_halves = x.partition(half);
        let x1: Tile<f32, { [BT, D / 2] }> = convert_tile(x_halves.load([t, 0i32]));
        let x2: Tile<f32, { [BT, D / 2] }> = convert_tile(x_halves.load([t, 1i32]));
        let c: Tile<f32, { [BT, D / 2] }> = convert_tile(cos.partition(half).load([t, 0i32]));
        let s: Tile<f32, { [BT, D / 2] }> = convert_tile(sin.partition(half).load([t, 0i32]));
        let first: Tile<E, { [BT, D / 2] }> = convert_tile(x1 * c - x2 * s);
        let second: Tile<E, { [BT, D / 2] }> = convert_tile(x2 * c + x1 * s);
        let mut halves = out.partition_mut(half);
        halves.store(first, [0i32, 0i32]);
        halves.store(second, [0i32, 1i32]);
    }
}
