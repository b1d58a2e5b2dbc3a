// Flash attention forward: out = softmax(q @ k^T * scale) @ v, one [BM, D] query tile per
// block, keys and values streamed in BN blocks with an online (base-2) softmax.
//
// q, k, v, out: [L, B * H, D], sequence-major. A [B, H, L, D] (or [B * H, L, D]) tensor is
// passed as the view `x.view(B * H, L, D).transpose(0, 1)`, no copy. The layout puts the
// query blocks on grid axis x, the one the GPU walks first: the L / BM query tiles of one
// head run side by side and read that head's keys and values from L2, instead of every
// resident block streaming a different head from memory (on the H200 at L = 4096 that is
// 612 against 297 TFLOP/s for the same BM = 64 tile).
//
// `qk_scale` = softmax scale * log2(e), positive: the running
// row maximum is taken on the raw q . k scores and scaled afterwards, and the exponent
// `s * qk_scale - m` is one fused multiply-add (exp2 flushes subnormals to zero).
//
// CAUSAL is a compile-time switch: with CAUSAL = 1, key blocks entirely before the query
// tile run unmasked, only the blocks that cross the diagonal are masked, and blocks after
// it are never visited (the loop bounds do the work, not a mask on every tile). A last,
// partial key block (L not a multiple of BN) is masked too: padded keys get no weight.
//
//   cutile-compile rust_examples/flash_attention.rs --entry flash_attention \
//       --generics E=bf16,BM=128,BN=64,D=128,CAUSAL=1 -o build/

#[cutile::module]
mod kernel {
    use cutile::core::*;

    /// One key/value block of the online softmax. MASK = 1 hides keys at or past `kv_len`
    /// and, when CAUSAL = 1, keys after the query row.
    fn attend<
        E: ElementType,
        const MASK: i32,
        const CAUSAL: i32,
        const BM: i32,
        const BN: i32,
        const D: i32,
    >(
        q: Tile<E, { [BM, D] }>,
        k: Tile<E, { [BN, D] }>,
        v: Tile<E, { [BN, D] }>,
        state: (Tile<f32, { [BM, 1] }>, Tile<f32, { [BM, 1] }>, Tile<f32, { [BM, D] }>),
        qk_scale: f32,
        first_row: i32,
        first_col: i32,
        kv_len: i32,
    ) -> (Tile<f32, { [BM, 1] }>, Tile<f32, { [BM, 1] }>, Tile<f32, { [BM, D] }>) {
        let (m_prev, l_prev, acc_prev) = state;
        let zero: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
        let mut s: Tile<f32, { [BM, BN] }> = mma(q, transpose(k), zero);
        if MASK == 1 {
            let row_ids: Tile<i32, { [BM] }> = iota(const_shape![BM]);
            let col_ids: Tile<i32, { [BN] }> = iota(const_shape![BN]);
            let rows = row_ids.reshape(const_shape![BM, 1]).broadcast(const_shape![BM, BN])
                + first_row.broadcast(const_shape![BM, BN]);
            let cols = col_ids.reshape(const_shape![1, BN]).broadcast(const_shape![BM, BN])
                + first_col.broadcast(const_shape![BM, BN]);
            let hidden: Tile<f32, { [BM, BN] }> = constant(f32::NEG_INFINITY, const_shape![BM, BN]);
            let real_key = lt_tile(cols, kv_len.broadcast(const_shape![BM, BN]));
            let visible = if CAUSAL == 1 { ge_tile(rows, cols) & real_key } else { real_key };
            s = select(visible, s, hidden);
        }
        // the maximum of the raw scores, scaled: the same as the maximum of the scaled ones
        let row_max: Tile<f32, { [BM] }> = reduce_max(s, 1);
        let scaled_max =
            row_max.reshape(const_shape![BM, 1]) * qk_scale.broadcast(const_shape![BM, 1]);
        let m_new = max_tile(m_prev, scaled_max);
        let exponent = fma(
            s,
            qk_scale.broadcast(const_shape![BM, BN]),
            negf(m_new).broadcast(const_shape![BM, BN]),
            rounding::NearestEven,
            ftz::Enabled,
        );
        let p = exp2(exponent, ftz::Enabled);
        let row_sum: Tile<f32, { [BM] }> = reduce_sum(p, 1);
        let alpha = exp2(m_prev - m_new, ftz::Enabled);
        let l_new = l_prev * alpha + row_sum.reshape(const_shape![BM, 1]);
        let p_e: Tile<E, { [BM, BN] }> = convert_tile(p);
        let acc = mma(p_e, v, acc_prev * alpha.broadcast(const_shape![BM, D]));
        (m_new, l_new, acc)
    }

    /// The whole forward pass of query tile `mb` of head `bh`; the entries below differ only
    /// in checks and hints. LAT > 0 marks the unmasked loop's key and value loads with that
    /// latency, so tileiras pipelines them across iterations; LAT = 0 leaves them unhinted.
    fn attention_forward<
        E: ElementType,
        const BM: i32,
        const BN: i32,
        const D: i32,
        const CAUSAL: i32,
        const LAT: i32,
    >(
        out: &mut Tensor<E, { [BM, 1, D] }>,
        q: &Tensor<E, { [-1, -1, D] }>,
        k: &Tensor<E, { [-1, -1, D] }>,
        v: &Tensor<E, { [-1, -1, D] }>,
        qk_scale: f32,
    ) {
        let (mb, bh, _) = get_tile_block_id();
        let part_q = q.partition(const_shape![BM, 1, D]);
        let part_k = k.partition(const_shape![BN, 1, D]);
        let part_v = v.partition(const_shape![BN, 1, D]);
        let tq: Tile<E, { [BM, D] }> = part_q.load([mb, bh, 0i32]).reshape(const_shape![BM, D]);
        let mut state = (
            constant(f32::NEG_INFINITY, const_shape![BM, 1]),
            constant(0.0f32, const_shape![BM, 1]),
            constant(0.0f32, const_shape![BM, D]),
        );
        let kv_len = k.shape()[0];
        let first_row = mb * BM;
        // full key blocks that end at or before the first query row need no mask
        let full_blocks = kv_len / BN;
        let unmasked_end = if CAUSAL == 1 { min(first_row / BN, full_blocks) } else { full_blocks };
        for j in 0i32..unmasked_end {
            let (tk, tv) = if LAT > 0 {
                (part_k.load_pipelined::<LAT>([j, bh, 0i32]), part_v.load_pipelined::<LAT>([j, bh, 0i32]))
            } else {
                (part_k.load([j, bh, 0i32]), part_v.load([j, bh, 0i32]))
            };
            let tk: Tile<E, { [BN, D] }> = tk.reshape(const_shape![BN, D]);
            let tv: Tile<E, { [BN, D] }> = tv.reshape(const_shape![BN, D]);
            state = attend::<E, 0, CAUSAL, BM, BN, D>(tq, tk, tv, state, qk_scale, first_row, j * BN, kv_len);
        }
        // the blocks crossing the diagonal (causal) and a partial last block
        let all_blocks = ceil_div(kv_len, BN);
        let masked_end =
            if CAUSAL == 1 { min(ceil_div(first_row + BM, BN), all_blocks) } else { all_blocks };
        for j in unmasked_end..masked_end {
            let tk: Tile<E, { [BN, D] }> = part_k.load([j, bh, 0i32]).reshape(const_shape![BN, D]);
            let tv: Tile<E, { [BN, D] }> = part_v.load([j, bh, 0i32]).reshape(const_shape![BN, D]);
            state = attend::<E, 1, CAUSAL, BM, BN, D>(tq, tk, tv, state, qk_scale, first_row, j * BN, kv_len);
        }
        let (_, l_final, acc) = state;
        let normalized = true_div(acc, l_final.broadcast(const_shape![BM, D]));
        let result: Tile<E, { [BM, D] }> = convert_tile(normalized);
        out.store(result.reshape(const_shape![BM, 1, D]));
    }

    #[cutile::entry()]
    fn flash_attention<
        E: ElementType,
        const BM: i32,
        const BN: i32,
        const D: i32,
        const CAUSAL: i32,
    >(
        out: &mut Tensor<E, { [BM, 1, D] }>,
        q: &Tensor<E, { [-1, -1, D] }>,
        k: &Tensor<E, { [-1, -1, D] }>,
        v: &Tensor<E, { [-1, -1, D] }>,
        qk_scale: f32,
    ) {
        attention_forward::<E, BM, BN, D, CAUSAL, 0>(out, q, k, v, qk_scale);
    }

    /// `flash_attention` with every tile access unchecked (the bounds are the caller's
    /// promise): the baseline that measures what the checks of the safe entry cost.
    #[cutile::entry(unchecked_accesses = true)]
    unsafe fn flash_attention_unchecked<
        E: ElementType,
        const BM: i32,
        const BN: i32,
        const D: i32,
        const CAUSAL: i32,
    >(
        out: &mut Tensor<E, { [BM, 1, D] }>,
        q: &Tensor<E, { [-1, -1, D] }>,
        k: &Tensor<E, { [-1, -1, D] }>,
        v: &Tensor<E, { [-1, -1, D] }>,
        qk_scale: f32,
    ) {
        attention_forward::<E, BM, BN, D, CAUSAL, 0>(out, q, k, v, qk_scale);
    }

    /// The tuned form: the same loops with the key and value loads marked with latency `LAT`,
    /// `occupancy = OCC` tile blocks per SM and `WARPS` worker warps per block on sm_90.
    /// The H200's best at D = 128 is BM = 64, BN = 128, OCC = 2, WARPS = 4: one math
    /// warpgroup of 64 query rows per block (tileiras adds a TMA producer warpgroup), two
    /// blocks per SM, whose softmax and tensor-core phases drift apart so one block's wgmma
    /// runs while the other block computes its exponentials. WARPS = 8 with BM = 128 gives two
    /// math warpgroups in one block instead; they share the key/value stages and stay in step.
    /// Compile it with `--facts` for 16-element multiples (tests/benchmarks/configs.py) so the
    /// loads use TMA.
    #[cutile::entry(
        optimization_hints = (sm_90 = (occupancy = OCC, num_worker_warps_per_cta = WARPS))
    )]
    fn flash_attention_tuned<
        E: ElementType,
        const BM: i32,
        const BN: i32,
        const D: i32,
        const CAUSAL: i32,
        const LAT: i32,
        const OCC: i32,
        const WARPS: i32,
    >(
        out: &mut Tensor<E, { [BM, 1, D] }>,
        q: &Tensor<E, { [-1, -1, D] }>,
        k: &Tensor<E, { [-1, -1, D] }>,
        v: &Tensor<E, { [-1, -1, D] }>,
        qk_scale: f32,
    ) {
        attention_forward::<E, BM, BN, D, CAUSAL, LAT>(out, q, k, v, qk_scale);
    }
}
