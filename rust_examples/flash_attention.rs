// Flash attention forward: out = softmax(q @ k^T * scale) @ v, one [BM, D] query tile per
// block, keys and values streamed in BN blocks with an online (base-2) softmax.
// q, k, v, out: [B * H, L, D]. `qk_scale` = softmax scale * log2(e).
//
// CAUSAL is a compile-time switch: with CAUSAL = 1, key blocks entirely before the query
// tile run unmasked, only the blocks that cross the diagonal are masked, and blocks after
// it are never visited (the loop bounds do the work, not a mask on every tile).
//
//   cutile-compile rust_examples/flash_attention.rs --entry flash_attention \
//       --generics E=bf16,BM=128,BN=64,D=128,CAUSAL=1 -o build/

#[cutile::module]
mod kernel {
    use cutile::core::*;

    /// One key/value block of the online softmax; MASK = 1 hides keys after the query.
    fn attend<E: ElementType, const MASK: i32, const BM: i32, const BN: i32, const D: i32>(
        q: Tile<E, { [BM, D] }>,
        k: Tile<E, { [BN, D] }>,
        v: Tile<E, { [BN, D] }>,
        state: (Tile<f32, { [BM, 1] }>, Tile<f32, { [BM, 1] }>, Tile<f32, { [BM, D] }>),
        scale: Tile<f32, { [BM, BN] }>,
        first_row: i32,
        first_col: i32,
    ) -> (Tile<f32, { [BM, 1] }>, Tile<f32, { [BM, 1] }>, Tile<f32, { [BM, D] }>) {
        let (m_prev, l_prev, acc_prev) = state;
        let zero: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
        let mut s: Tile<f32, { [BM, BN] }> = mma(q, transpose(k), zero) * scale;
        if MASK == 1 {
            let row_ids: Tile<i32, { [BM] }> = iota(const_shape![BM]);
            let col_ids: Tile<i32, { [BN] }> = iota(const_shape![BN]);
            let rows = row_ids.reshape(const_shape![BM, 1]).broadcast(const_shape![BM, BN])
                + first_row.broadcast(const_shape![BM, BN]);
            let cols = col_ids.reshape(const_shape![1, BN]).broadcast(const_shape![BM, BN])
                + first_col.broadcast(const_shape![BM, BN]);
            let hidden: Tile<f32, { [BM, BN] }> = constant(f32::NEG_INFINITY, const_shape![BM, BN]);
            s = select(ge_tile(rows, cols), s, hidden);
        }
        let row_max: Tile<f32, { [BM] }> = reduce_max(s, 1);
        let m_new = max_tile(m_prev, row_max.reshape(const_shape![BM, 1]));
        let p = exp2(s - m_new.broadcast(const_shape![BM, BN]), ftz::Disabled);
        let row_sum: Tile<f32, { [BM] }> = reduce_sum(p, 1);
        let alpha = exp2(m_prev - m_new, ftz::Disabled);
        let l_new = l_prev * alpha + row_sum.reshape(const_shape![BM, 1]);
        let p_e: Tile<E, { [BM, BN] }> = convert_tile(p);
        let acc = mma(p_e, v, acc_prev * alpha.broadcast(const_shape![BM, D]));
        (m_new, l_new, acc)
    }

    #[cutile::entry()]
    fn flash_attention<
        E: ElementType,
        const BM: i32,
        const BN: i32,
        const D: i32,
        const CAUSAL: i32,
    >(
        out: &mut Tensor<E, { [1, BM, D] }>,
        q: &Tensor<E, { [-1, -1, D] }>,
        k: &Tensor<E, { [-1, -1, D] }>,
        v: &Tensor<E, { [-1, -1, D] }>,
        qk_scale: f32,
    ) {
        let (bh, mb, _) = get_tile_block_id();
        let part_q = q.partition(const_shape![1, BM, D]);
        let part_k = k.partition(const_shape![1, BN, D]);
        let part_v = v.partition(const_shape![1, BN, D]);
        let tq: Tile<E, { [BM, D] }> = part_q.load([bh, mb, 0i32]).reshape(const_shape![BM, D]);
        let scale: Tile<f32, { [BM, BN] }> = qk_scale.broadcast(const_shape![BM, BN]);
        let mut state = (
            constant(f32::NEG_INFINITY, const_shape![BM, 1]),
            constant(0.0f32, const_shape![BM, 1]),
            constant(0.0f32, const_shape![BM, D]),
        );
        let num_kv = num_tiles(&part_k, 1);
        let first_row = mb * BM;
        // key blocks that end at or before the first query row need no mask
        let unmasked_end = if CAUSAL == 1 { min(first_row / BN, num_kv) } else { num_kv };
        for j in 0i32..unmasked_end {
            let tk: Tile<E, { [BN, D] }> = part_k.load([bh, j, 0i32]).reshape(const_shape![BN, D]);
            let tv: Tile<E, { [BN, D] }> = part_v.load([bh, j, 0i32]).reshape(const_shape![BN, D]);
            state = attend::<E, 0>(tq, tk, tv, state, scale, first_row, j * BN);
        }
        if CAUSAL == 1 {
            let diagonal_end = min(ceil_div(first_row + BM, BN), num_kv);
            for j in unmasked_end..diagonal_end {
                let tk: Tile<E, { [BN, D] }> = part_k.load([bh, j, 0i32]).reshape(const_shape![BN, D]);
                let tv: Tile<E, { [BN, D] }> = part_v.load([bh, j, 0i32]).reshape(const_shape![BN, D]);
                state = attend::<E, 1>(tq, tk, tv, state, scale, first_row, j * BN);
            }
        }
        let (_, l_final, acc) = state;
        let normalized = true_div(acc, l_final.broadcast(const_shape![BM, D]));
        let result: Tile<E, { [BM, D] }> = convert_tile(normalized);
        out.store(result.reshape(const_shape![1, BM, D]));
    }
}
