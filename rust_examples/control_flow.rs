// A tour of kernel control flow driven by scalars: an early-return guard, `loop` with
// `break` and `continue`, `while` with `break`, and a value-producing `if`. Mutable locals
// assigned inside them become loop-carried and branch-yielded values.
//
// For block b < limit: z = x * (1 + ceil(n / 2) - 3) * (2 if b is even else 0.5);
// blocks b >= limit return before writing anything.

#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn control_flow<const B: i32>(
        z: &mut Tensor<f32, { [B] }>,
        x: &Tensor<f32, { [-1] }>,
        n: i32,
        limit: i32,
    ) {
        let (b, _, _) = get_tile_block_id();
        if b >= limit {
            return;
        }
        let t = load_tile_like(x, z);
        let mut acc = t;
        let mut i: i32 = 0;
        loop {
            i += 1;
            if i > n {
                break;
            }
            if i % 2 == 0 {
                continue;
            }
            acc = acc + t; // once for every odd i in 1..=n
        }
        let mut j: i32 = 0;
        while j < 10 {
            j += 1;
            if j == 4 {
                break;
            }
            acc = acc - t; // j = 1, 2, 3
        }
        let scale = if b % 2 == 0 { 2.0f32 } else { 0.5f32 };
        z.store(acc * scale.broadcast(z.shape()));
    }
}
