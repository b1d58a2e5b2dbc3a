// The kernels of a Qwen3-style decoder (tests/benchmarks/decode/): embedding, RMSNorm and residual
// add + RMSNorm, the projections (a memory-bound GEMV for one token, a skinny tensor-core GEMM
// for a batch, both split-K, and their SiLU-gated forms), QK-norm + RoPE + KV-cache write in
// one pass, split-K decode attention with grouped-query heads (which also serves a causal
// prefill chunk), and a greedy argmax that advances the decode state on the device.
//
// Numerics follow the Hugging Face Qwen3 model in bf16 (the torch reference,
// tests/benchmarks/decode/reference.py): every result torch rounds to bf16 is rounded here at the
// same point, and everything between is f32.
//
// Layouts (T tokens, H hidden, S split-K parts, G query heads per KV head, HKV KV heads):
//   hidden states [T, H]; projection outputs f32 split-K partials [S, T, N], summed by their
//   consumer; q [T, HKV * G * D] seen as [B * HKV, P, G * D] (P tokens of one sequence);
//   KV caches [B * HKV, SC, D]; the decode position is a device i32.
//
//   cutile-compile rust_examples/decoder.rs --entry gemv \
//       --generics E=bf16,O=f32,BN=16,BK=512,LAT=3,OCC=2 -o build/

#[cutile::module]
mod kernel {
    use cutile::core::*;

    /// out[t, :] = table[ids[t], :], one [1, BD] tile per block (the id is bounds-checked).
    #[cutile::entry()]
    fn embedding<E: ElementType, const BD: i32>(
        out: &mut Tensor<E, { [1, BD] }>,
        ids: &Tensor<i32, { [-1] }>,
        table: &Tensor<E, { [-1, -1] }>,
    ) {
        let (t, j, _) = get_tile_block_id();
        let id: Tile<i32, { [1] }> = ids.partition(const_shape![1]).load([t]);
        let row: i32 = tile_to_scalar(id.reshape(const_shape![]));
        out.store(table.partition(const_shape![1, BD]).load([row, j]));
    }

    /// Hugging Face's RMSNorm of a bf16/f16 row x (f32 inside): y = E(w * E(x * rsqrt(mean(x^2)
    /// + eps))); the row is walked in BK-wide tiles.
    fn norm_tile<E: ElementType, const BK: i32>(
        x: Tile<f32, { [1, BK] }>,
        w: Tile<E, { [1, BK] }>,
        inv_rms: Tile<f32, { [1, BK] }>,
    ) -> Tile<E, { [1, BK] }> {
        let normed: Tile<E, { [1, BK] }> = convert_tile(x * inv_rms);
        let normed: Tile<f32, { [1, BK] }> = convert_tile(normed);
        let wf: Tile<f32, { [1, BK] }> = convert_tile(w);
        convert_tile(wf * normed)
    }

    /// rsqrt(sum / n + eps) of a [1, BK] tile of squares, broadcast back to [1, BK].
    fn inverse_rms<const BK: i32>(
        squares: Tile<f32, { [1, BK] }>,
        n: i32,
        eps: f32,
    ) -> Tile<f32, { [1, BK] }> {
        let total: Tile<f32, { [1] }> = reduce_sum(squares, 1i32);
        let total: f32 = tile_to_scalar(total.reshape(const_shape![]));
        let count: f32 = convert_scalar(n);
        let mean: Tile<f32, { [] }> = scalar_to_tile(total / count + eps);
        let inv: Tile<f32, { [] }> = rsqrt(mean, ftz::Disabled);
        inv.reshape(const_shape![1, 1]).broadcast(const_shape![1, BK])
    }

    /// RMSNorm of each row of x [T, H] (one block per row; HT >= H is the row's tile).
    #[cutile::entry()]
    fn rms_norm_hf<E: ElementType, const HT: i32, const BK: i32>(
        out: &mut Tensor<E, { [1, HT] }>,
        x: &Tensor<E, { [-1, -1] }>,
        w: &Tensor<E, { [-1] }>,
        eps: f32,
    ) {
        let t = get_tile_block_id().0;
        let xp = x.partition(const_shape![1, BK]);
        let wp = w.partition(const_shape![BK]);
        let tiles = num_tiles(&xp, 1);
        let mut squares: Tile<f32, { [1, BK] }> = constant(0.0f32, const_shape![1, BK]);
        for j in 0i32..tiles {
            let v: Tile<f32, { [1, BK] }> = convert_tile(xp.load([t, j]));
            squares = squares + v * v;
        }
        let inv = inverse_rms::<BK>(squares, x.shape()[1], eps);
        let mut op = out.partition_mut(const_shape![1, BK]);
        for j in 0i32..tiles {
            let v: Tile<f32, { [1, BK] }> = convert_tile(xp.load([t, j]));
            let wt: Tile<E, { [1, BK] }> = wp.load([j]).reshape(const_shape![1, BK]);
            op.store(norm_tile::<E, BK>(v, wt, inv), [0i32, j]);
        }
    }

    /// The residual stream after a projection: r = E(res + E(sum_s part[s])), in f32.
    fn residual_tile<E: ElementType, const S: i32, const BK: i32>(
        res: &Tensor<E, { [-1, -1] }>,
        part: &Tensor<f32, { [S, -1, -1] }>,
        t: i32,
        j: i32,
    ) -> Tile<f32, { [1, BK] }> {
        let all: Tile<f32, { [S, 1, BK] }> = part.partition(const_shape![S, 1, BK]).load([0i32, t, j]);
        let sum: Tile<f32, { [1, BK] }> = reduce_sum(all, 0i32);
        let projected: Tile<E, { [1, BK] }> = convert_tile(sum);
        let projected: Tile<f32, { [1, BK] }> = convert_tile(projected);
        let r: Tile<f32, { [1, BK] }> =
            convert_tile(res.partition(const_shape![1, BK]).load([t, j]));
        let r: Tile<E, { [1, BK] }> = convert_tile(r + projected);
        convert_tile(r)
    }

    /// Residual add + RMSNorm: res_out = E(res + E(sum_s part[s])) and out = RMSNorm(res_out),
    /// one block per row; part is a projection's S split-K partials [S, T, H] (f32), summed
    /// by one [S, 1, BK] load per tile (a summing loop inside the tile loop costs registers).
    #[cutile::entry()]
    fn add_rms_norm_hf<E: ElementType, const S: i32, const HT: i32, const BK: i32>(
        res_out: &mut Tensor<E, { [1, HT] }>,
        out: &mut Tensor<E, { [1, HT] }>,
        res: &Tensor<E, { [-1, -1] }>,
        part: &Tensor<f32, { [S, -1, -1] }>,
        w: &Tensor<E, { [-1] }>,
        eps: f32,
    ) {
        let t = get_tile_block_id().0;
        let tiles = num_tiles(&res.partition(const_shape![1, BK]), 1);
        let wp = w.partition(const_shape![BK]);
        let mut rp = res_out.partition_mut(const_shape![1, BK]);
        let mut squares: Tile<f32, { [1, BK] }> = constant(0.0f32, const_shape![1, BK]);
        for j in 0i32..tiles {
            let r = residual_tile::<E, S, BK>(res, part, t, j);
            squares = squares + r * r;
            let stored: Tile<E, { [1, BK] }> = convert_tile(r);
            rp.store(stored, [0i32, j]);
        }
        let inv = inverse_rms::<BK>(squares, res.shape()[1], eps);
        let mut op = out.partition_mut(const_shape![1, BK]);
        for j in 0i32..tiles {
            let r = residual_tile::<E, S, BK>(res, part, t, j);
            let wt: Tile<E, { [1, BK] }> = wp.load([j]).reshape(const_shape![1, BK]);
            op.store(norm_tile::<E, BK>(r, wt, inv), [0i32, j]);
        }
    }

    /// `add_rms_norm_hf` as one [1, HT] tile per row and 16 warps: every load is issued at
    /// once (the tile loop waits on each load in turn). For S * HT <= 16384 (the [S, 1, HT]
    /// partials in registers): on the H200 a Qwen3-4B row takes 2.8 µs (S = 1) and 3.3 µs
    /// (S = 2), against 5.6 and 8.3 µs through the 512-wide tile loop.
    #[cutile::entry(optimization_hints = (sm_90 = (num_worker_warps_per_cta = 16)))]
    fn add_rms_norm_row<E: ElementType, const S: i32, const HT: i32>(
        res_out: &mut Tensor<E, { [1, HT] }>,
        out: &mut Tensor<E, { [1, HT] }>,
        res: &Tensor<E, { [-1, -1] }>,
        part: &Tensor<f32, { [S, -1, -1] }>,
        w: &Tensor<E, { [-1] }>,
        eps: f32,
    ) {
        let t = get_tile_block_id().0;
        let r = residual_tile::<E, S, HT>(res, part, t, 0i32);
        let stored: Tile<E, { [1, HT] }> = convert_tile(r);
        res_out.store(stored);
        let inv = inverse_rms::<HT>(r * r, res.shape()[1], eps);
        let wt: Tile<E, { [1, HT] }> = w.partition(const_shape![HT]).load([0i32]).reshape(const_shape![1, HT]);
        out.store(norm_tile::<E, HT>(r, wt, inv));
    }

    /// The K tiles split-K part `s` of `parts` covers: [first, end).
    fn split_range(tiles: i32, s: i32, parts: i32) -> (i32, i32) {
        let per = ceil_div(tiles, parts);
        let first = min(s * per, tiles);
        (first, min(first + per, tiles))
    }

    /// One [BN] slice of y = W x for one token: W [N, K] row-major, x [1, K]; f32 products
    /// of a [BN, BK] weight tile accumulated element-wise, reduced once at the end.
    fn gemv_rows<E: ElementType, const BN: i32, const BK: i32, const LAT: i32>(
        x: &Tensor<E, { [-1, -1] }>,
        w: &Tensor<E, { [-1, -1] }>,
        m: i32,
        n: i32,
        first: i32,
        end: i32,
    ) -> Tile<f32, { [1, BN] }> {
        let wp = w.partition(const_shape![BN, BK]);
        let xp = x.partition(const_shape![1, BK]);
        let mut acc: Tile<f32, { [BN, BK] }> = constant(0.0f32, const_shape![BN, BK]);
        for k in first..end {
            let wt: Tile<f32, { [BN, BK] }> = convert_tile(wp.load_pipelined::<LAT>([n, k]));
            let xt: Tile<f32, { [1, BK] }> = convert_tile(xp.load([m, k]));
            acc = acc + wt * xt.broadcast(const_shape![BN, BK]);
        }
        let rows: Tile<f32, { [BN] }> = reduce_sum(acc, 1i32);
        rows.reshape(const_shape![1, BN])
    }

    /// One [BM, BN] tile of y = x W^T on the tensor cores, weight rows as the M side of the
    /// product (acc^T [BN, BM] = W [BN, BK] x^T [BK, BM]), so a batch of BM = 8..64 tokens
    /// fills the narrow side.
    fn linear_tile<E: ElementType, const BM: i32, const BN: i32, const BK: i32, const LAT: i32>(
        x: &Tensor<E, { [-1, -1] }>,
        w: &Tensor<E, { [-1, -1] }>,
        m: i32,
        n: i32,
        first: i32,
        end: i32,
    ) -> Tile<f32, { [BM, BN] }> {
        let wp = w.partition(const_shape![BN, BK]);
        let xp = x.partition(const_shape![BM, BK]);
        let mut acc: Tile<f32, { [BN, BM] }> = constant(0.0f32, const_shape![BN, BM]);
        for k in first..end {
            let wt: Tile<E, { [BN, BK] }> = wp.load_pipelined::<LAT>([n, k]);
            let xt: Tile<E, { [BM, BK] }> = xp.load_pipelined::<LAT>([m, k]);
            acc = mma(wt, transpose(xt), acc);
        }
        transpose(acc)
    }

    /// This block's token m, row tile n and split-K part [first, end) of the K tiles of w
    /// (grid: S parts x M tokens x N / BN).
    fn split_k_block<E: ElementType, const BN: i32, const BK: i32>(
        w: &Tensor<E, { [-1, -1] }>,
    ) -> (i32, i32, i32, i32) {
        let (s, m, n) = get_tile_block_id();
        let tiles = num_tiles(&w.partition(const_shape![BN, BK]), 1);
        let (first, end) = split_range(tiles, s, get_num_tile_blocks().0);
        (m, n, first, end)
    }

    /// One token's partial [1, BN] row, stored as O.
    fn store_part<O: ElementType, const BN: i32>(
        part: &mut Tensor<O, { [1, 1, BN] }>,
        rows: Tile<f32, { [1, BN] }>,
    ) {
        let result: Tile<O, { [1, BN] }> = convert_tile(rows);
        part.store(result.reshape(const_shape![1, 1, BN]));
    }

    /// GEMV, split-K: part[s, m, n0..n0+BN] = sum over part s of the K tiles of W[n, k] x[m, k]
    /// (grid: S parts x M tokens x N / BN). O = f32 for partials a later kernel sums, or E
    /// with S = 1.
    #[cutile::entry(
        preconditions = (dim(x, 1) == dim(w, 1)),
        optimization_hints = (sm_90 = (occupancy = OCC)),
    )]
    fn gemv<
        E: ElementType,
        O: ElementType,
        const BN: i32,
        const BK: i32,
        const LAT: i32,
        const OCC: i32,
    >(
        part: &mut Tensor<O, { [1, 1, BN] }>,
        x: &Tensor<E, { [-1, -1] }>,
        w: &Tensor<E, { [-1, -1] }>,
    ) {
        let (m, n, first, end) = split_k_block::<E, BN, BK>(w);
        store_part::<O, BN>(part, gemv_rows::<E, BN, BK, LAT>(x, w, m, n, first, end));
    }

    /// The tensor-core form of `gemv` for BM tokens at a time (grid: S x M / BM x N / BN).
    #[cutile::entry(
        preconditions = (dim(x, 1) == dim(w, 1)),
        optimization_hints = (sm_90 = (occupancy = OCC)),
    )]
    fn linear<
        E: ElementType,
        O: ElementType,
        const BM: i32,
        const BN: i32,
        const BK: i32,
        const LAT: i32,
        const OCC: i32,
    >(
        part: &mut Tensor<O, { [1, BM, BN] }>,
        x: &Tensor<E, { [-1, -1] }>,
        w: &Tensor<E, { [-1, -1] }>,
    ) {
        let (s, m, n) = get_tile_block_id();
        let tiles = num_tiles(&w.partition(const_shape![BN, BK]), 1);
        let (first, end) = split_range(tiles, s, get_num_tile_blocks().0);
        let acc = linear_tile::<E, BM, BN, BK, LAT>(x, w, m, n, first, end);
        let result: Tile<O, { [BM, BN] }> = convert_tile(acc);
        part.store(result.reshape(const_shape![1, BM, BN]));
    }

    /// Hugging Face's SwiGLU on f32 projections: E(E(silu(E(g))) * E(u)).
    fn swiglu<E: ElementType, const BM: i32, const BN: i32>(
        gate: Tile<f32, { [BM, BN] }>,
        up: Tile<f32, { [BM, BN] }>,
    ) -> Tile<E, { [BM, BN] }> {
        let g: Tile<E, { [BM, BN] }> = convert_tile(gate);
        let g: Tile<f32, { [BM, BN] }> = convert_tile(g);
        let u: Tile<E, { [BM, BN] }> = convert_tile(up);
        let u: Tile<f32, { [BM, BN] }> = convert_tile(u);
        let one: Tile<f32, { [BM, BN] }> = constant(1.0f32, const_shape![BM, BN]);
        let zero: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
        let silu: Tile<E, { [BM, BN] }> = convert_tile(true_div(g, one + exp(zero - g)));
        let silu: Tile<f32, { [BM, BN] }> = convert_tile(silu);
        convert_tile(silu * u)
    }

    /// The gate and up projections with SwiGLU fused: act[m, n] = swiglu(W[0, n] x[m],
    /// W[1, n] x[m]), W = the [2, I, K] view of the stacked [gate; up] weight (one token).
    #[cutile::entry(
        preconditions = (dim(x, 1) == dim(w, 2)),
        optimization_hints = (sm_90 = (occupancy = OCC)),
    )]
    fn gemv_swiglu<E: ElementType, const BN: i32, const BK: i32, const LAT: i32, const OCC: i32>(
        act: &mut Tensor<E, { [1, BN] }>,
        x: &Tensor<E, { [-1, -1] }>,
        w: &Tensor<E, { [-1, -1, -1] }>,
    ) {
        let (m, n, _) = get_tile_block_id();
        let wp = w.partition(const_shape![1, BN, BK]);
        let xp = x.partition(const_shape![1, BK]);
        let mut gate: Tile<f32, { [BN, BK] }> = constant(0.0f32, const_shape![BN, BK]);
        let mut up: Tile<f32, { [BN, BK] }> = constant(0.0f32, const_shape![BN, BK]);
        for k in 0i32..num_tiles(&wp, 2) {
            let xt: Tile<f32, { [1, BK] }> = convert_tile(xp.load([m, k]));
            let xt = xt.broadcast(const_shape![BN, BK]);
            let gt: Tile<E, { [BN, BK] }> =
                wp.load_pipelined::<LAT>([0i32, n, k]).reshape(const_shape![BN, BK]);
            let ut: Tile<E, { [BN, BK] }> =
                wp.load_pipelined::<LAT>([1i32, n, k]).reshape(const_shape![BN, BK]);
            let gt: Tile<f32, { [BN, BK] }> = convert_tile(gt);
            let ut: Tile<f32, { [BN, BK] }> = convert_tile(ut);
            gate = gate + gt * xt;
            up = up + ut * xt;
        }
        let gate: Tile<f32, { [BN] }> = reduce_sum(gate, 1i32);
        let up: Tile<f32, { [BN] }> = reduce_sum(up, 1i32);
        act.store(swiglu::<E, 1, BN>(
            gate.reshape(const_shape![1, BN]),
            up.reshape(const_shape![1, BN]),
        ));
    }

    /// `gemv_swiglu` on the tensor cores for BM tokens at a time.
    #[cutile::entry(
        preconditions = (dim(x, 1) == dim(w, 2)),
        optimization_hints = (sm_90 = (occupancy = OCC)),
    )]
    fn linear_swiglu<
        E: ElementType,
        const BM: i32,
        const BN: i32,
        const BK: i32,
        const LAT: i32,
        const OCC: i32,
    >(
        act: &mut Tensor<E, { [BM, BN] }>,
        x: &Tensor<E, { [-1, -1] }>,
        w: &Tensor<E, { [-1, -1, -1] }>,
    ) {
        let (m, n, _) = get_tile_block_id();
        let wp = w.partition(const_shape![1, BN, BK]);
        let xp = x.partition(const_shape![BM, BK]);
        let mut gate: Tile<f32, { [BN, BM] }> = constant(0.0f32, const_shape![BN, BM]);
        let mut up: Tile<f32, { [BN, BM] }> = constant(0.0f32, const_shape![BN, BM]);
        for k in 0i32..num_tiles(&wp, 2) {
            let xt: Tile<E, { [BM, BK] }> = xp.load_pipelined::<LAT>([m, k]);
            let xt = transpose(xt);
            let gt: Tile<E, { [BN, BK] }> =
                wp.load_pipelined::<LAT>([0i32, n, k]).reshape(const_shape![BN, BK]);
            let ut: Tile<E, { [BN, BK] }> =
                wp.load_pipelined::<LAT>([1i32, n, k]).reshape(const_shape![BN, BK]);
            gate = mma(gt, xt, gate);
            up = mma(ut, xt, up);
        }
        act.store(swiglu::<E, BM, BN>(transpose(gate), transpose(up)));
    }

    /// Hugging Face's RMSNorm of G head rows [G, D] (f32 in, E-rounded, f32 out).
    fn norm_heads<E: ElementType, const G: i32, const D: i32>(
        x: Tile<f32, { [G, D] }>,
        w: Tile<E, { [1, D] }>,
        eps: f32,
    ) -> Tile<f32, { [G, D] }> {
        let squares: Tile<f32, { [G] }> = reduce_sum(x * x, 1i32);
        let n: f32 = convert_scalar(D);
        let mean = squares.reshape(const_shape![G, 1]) / n.broadcast(const_shape![G, 1]);
        let inv: Tile<f32, { [G, 1] }> = rsqrt(mean + eps.broadcast(const_shape![G, 1]), ftz::Disabled);
        let normed: Tile<E, { [G, D] }> = convert_tile(x * inv.broadcast(const_shape![G, D]));
        let normed: Tile<f32, { [G, D] }> = convert_tile(normed);
        let wf: Tile<f32, { [1, D] }> = convert_tile(w);
        let y: Tile<E, { [G, D] }> = convert_tile(normed * wf.broadcast(const_shape![G, D]));
        convert_tile(y)
    }

    /// Hugging Face's half-split RoPE in E arithmetic: [x1 | x2] -> [E(E(x1 c) - E(x2 s)) |
    /// E(E(x2 c) + E(x1 s))], with cos/sin the E-rounded [1, D / 2] row of this position.
    fn rope_heads<E: ElementType, const G: i32, const D: i32>(
        x: Tile<f32, { [G, D] }>,
        c: Tile<E, { [1, D / 2] }>,
        s: Tile<E, { [1, D / 2] }>,
    ) -> Tile<E, { [G, D] }> {
        let lo: Tile<f32, { [G, D / 2] }> = extract(x, [scalar_to_tile(0i32), scalar_to_tile(0i32)]);
        let hi: Tile<f32, { [G, D / 2] }> = extract(x, [scalar_to_tile(0i32), scalar_to_tile(1i32)]);
        let c: Tile<f32, { [1, D / 2] }> = convert_tile(c);
        let s: Tile<f32, { [1, D / 2] }> = convert_tile(s);
        let c = c.broadcast(const_shape![G, D / 2]);
        let s = s.broadcast(const_shape![G, D / 2]);
        let lo_c: Tile<E, { [G, D / 2] }> = convert_tile(lo * c);
        let hi_s: Tile<E, { [G, D / 2] }> = convert_tile(hi * s);
        let hi_c: Tile<E, { [G, D / 2] }> = convert_tile(hi * c);
        let lo_s: Tile<E, { [G, D / 2] }> = convert_tile(lo * s);
        let lo_c: Tile<f32, { [G, D / 2] }> = convert_tile(lo_c);
        let hi_s: Tile<f32, { [G, D / 2] }> = convert_tile(hi_s);
        let hi_c: Tile<f32, { [G, D / 2] }> = convert_tile(hi_c);
        let lo_s: Tile<f32, { [G, D / 2] }> = convert_tile(lo_s);
        let first: Tile<E, { [G, D / 2] }> = convert_tile(lo_c - hi_s);
        let second: Tile<E, { [G, D / 2] }> = convert_tile(hi_c + lo_s);
        cat(first, second, 1i32)
    }

    /// Columns [col * W, col * W + W) of token row t of the S split-K partials, summed and
    /// rounded to E like torch's projection output: [1, W] in f32. One [S, 1, W] load and a
    /// reduction, no loop (tileiras spills heavily on a runtime-length summing loop here).
    fn projected<E: ElementType, const S: i32, const W: i32>(
        part: &Tensor<f32, { [S, -1, -1] }>,
        t: i32,
        col: i32,
    ) -> Tile<f32, { [1, W] }> {
        let all: Tile<f32, { [S, 1, W] }> = part.partition(const_shape![S, 1, W]).load([0i32, t, col]);
        let sum: Tile<f32, { [1, W] }> = reduce_sum(all, 0i32);
        let rounded: Tile<E, { [1, W] }> = convert_tile(sum);
        convert_tile(rounded)
    }

    /// QK-norm + RoPE + KV-cache write for P tokens of one KV head group per block (block
    /// b * HKV + h): q_out[.., p, :] = rope(norm(q)) for the G query heads of the group,
    /// k_cache[.., pos + p, :] = rope(norm(k)), v_cache[.., pos + p, :] = v, at the device
    /// position pos; qkv is the QKV projection's S split-K partials [S, T, (HKV * G + 2 HKV) D].
    /// Caches are [B * HKV, SC, D] (each block's tile is its whole cache row). The token loop
    /// has the constant trip count PT (tokens <= PT run): a runtime-length loop around the
    /// body makes tileiras spill hundreds of registers.
    #[cutile::entry()]
    fn qkv_rope<
        E: ElementType,
        const S: i32,
        const G: i32,
        const HKV: i32,
        const PT: i32,
        const SC: i32,
        const D: i32,
    >(
        q_out: &mut Tensor<E, { [1, PT, G * D] }>,
        k_cache: &mut Tensor<E, { [1, SC, D] }>,
        v_cache: &mut Tensor<E, { [1, SC, D] }>,
        qkv: &Tensor<f32, { [S, -1, -1] }>,
        q_weight: &Tensor<E, { [-1] }>,
        k_weight: &Tensor<E, { [-1] }>,
        cos: &Tensor<E, { [-1, -1] }>,
        sin: &Tensor<E, { [-1, -1] }>,
        pos: &Tensor<i32, { [-1] }>,
        tokens: i32,
        eps: f32,
    ) {
        let bh = get_tile_block_id().0;
        let group = bh % HKV;
        let first_token = (bh / HKV) * tokens;
        let start: Tile<i32, { [1] }> = pos.partition(const_shape![1]).load([0i32]);
        let start: i32 = tile_to_scalar(start.reshape(const_shape![]));
        let qw: Tile<E, { [1, D] }> = q_weight.partition(const_shape![D]).load([0i32]).reshape(const_shape![1, D]);
        let kw: Tile<E, { [1, D] }> = k_weight.partition(const_shape![D]).load([0i32]).reshape(const_shape![1, D]);
        let cp = cos.partition(const_shape![1, D / 2]);
        let sp = sin.partition(const_shape![1, D / 2]);
        let mut qp = q_out.partition_mut(const_shape![1, 1, G * D]);
        let mut kp = k_cache.partition_mut(const_shape![1, 1, D]);
        let mut vp = v_cache.partition_mut(const_shape![1, 1, D]);
        for p in 0i32..PT {
            if p < tokens {
                let t = first_token + p;
                let position = start + p;
                let c: Tile<E, { [1, D / 2] }> = cp.load([position, 0i32]);
                let s: Tile<E, { [1, D / 2] }> = sp.load([position, 0i32]);
                let q = projected::<E, S, { G * D }>(qkv, t, group).reshape(const_shape![G, D]);
                let q = rope_heads::<E, G, D>(norm_heads::<E, G, D>(q, qw, eps), c, s);
                qp.store(q.reshape(const_shape![1, 1, G * D]), [0i32, p, 0i32]);
                let k = projected::<E, S, D>(qkv, t, HKV * G + group);
                let k = rope_heads::<E, 1, D>(norm_heads::<E, 1, D>(k, kw, eps), c, s);
                kp.store(k.reshape(const_shape![1, 1, D]), [0i32, position, 0i32]);
                let v: Tile<E, { [1, D] }> =
                    convert_tile(projected::<E, S, D>(qkv, t, HKV * G + HKV + group));
                vp.store(v.reshape(const_shape![1, 1, D]), [0i32, position, 0i32]);
            }
        }
    }

    /// Split-K attention over the KV cache for the G query heads of one KV head and P
    /// consecutive tokens of one sequence (rows r = p * G + g, token p at position pos + p
    /// sees keys 0..=pos + p): block (b * HKV + h, split) covers its share of the key tiles
    /// and stores the unnormalized output acc = sum_j p_j v_j with its running maximum m
    /// (log2 units) and sum l, rows in [QT = PT * G] tiles. `attention_merge` combines the
    /// splits. scale_log2 = log2(e) / sqrt(D). The query rows are replicated R times inside
    /// the block (R * PT * G >= 8): with fewer than 8 rows tileiras lowers both products to
    /// scalar FFMA on bf16 unpacks, with 8 or more to wgmma.
    #[cutile::entry(optimization_hints = (sm_90 = (occupancy = OCC)))]
    fn attention_partial<
        E: ElementType,
        const G: i32,
        const PT: i32,
        const BN: i32,
        const D: i32,
        const LAT: i32,
        const OCC: i32,
        const R: i32,
    >(
        acc_out: &mut Tensor<f32, { [1, PT * G, D] }>,
        m_out: &mut Tensor<f32, { [1, PT * G] }>,
        l_out: &mut Tensor<f32, { [1, PT * G] }>,
        q: &Tensor<E, { [-1, -1, -1] }>,
        k: &Tensor<E, { [-1, -1, D] }>,
        v: &Tensor<E, { [-1, -1, D] }>,
        pos: &Tensor<i32, { [-1] }>,
        scale_log2: f32,
    ) {
        let (bh, split, _) = get_tile_block_id();
        let splits = get_num_tile_blocks().1;
        let start: Tile<i32, { [1] }> = pos.partition(const_shape![1]).load([0i32]);
        let start: i32 = tile_to_scalar(start.reshape(const_shape![]));
        let tokens = q.shape()[1];
        let (first, end) = split_range(ceil_div(start + tokens, BN), split, splits);

        let tq: Tile<E, { [1, PT, G * D] }> =
            q.partition(const_shape![1, PT, G * D]).load([bh, 0i32, 0i32]);
        let q_rows: Tile<E, { [1, PT * G, D] }> = tq.reshape(const_shape![1, PT * G, D]);
        let q_t: Tile<E, { [D, R * PT * G] }> = transpose(
            q_rows.broadcast(const_shape![R, PT * G, D]).reshape(const_shape![R * PT * G, D]),
        );
        // the position of each query row r (of R copies of PT * G rows): start + (r % QT) / G
        let rows: Tile<i32, { [R * PT * G] }> = iota(const_shape![R * PT * G]);
        let group: Tile<i32, { [R * PT * G] }> = constant(G, const_shape![R * PT * G]);
        let span: Tile<i32, { [R * PT * G] }> = constant(PT * G, const_shape![R * PT * G]);
        let row_pos = (rows % span) / group + start.broadcast(const_shape![R * PT * G]);
        let row_pos = row_pos.reshape(const_shape![1, R * PT * G]).broadcast(const_shape![BN, R * PT * G]);
        let key_offsets: Tile<i32, { [BN] }> = iota(const_shape![BN]);
        let key_offsets = key_offsets.reshape(const_shape![BN, 1]).broadcast(const_shape![BN, R * PT * G]);
        let hidden: Tile<f32, { [BN, R * PT * G] }> = constant(-1.0e30f32, const_shape![BN, R * PT * G]);
        let nothing: Tile<f32, { [BN, R * PT * G] }> = constant(0.0f32, const_shape![BN, R * PT * G]);
        let scale = scale_log2.broadcast(const_shape![BN, R * PT * G]);

        let kp = k.partition(const_shape![1, BN, D]);
        let vp = v.partition(const_shape![1, BN, D]);
        let mut m: Tile<f32, { [1, R * PT * G] }> = constant(-1.0e30f32, const_shape![1, R * PT * G]);
        let mut l: Tile<f32, { [1, R * PT * G] }> = constant(0.0f32, const_shape![1, R * PT * G]);
        let mut acc: Tile<f32, { [D, R * PT * G] }> = constant(0.0f32, const_shape![D, R * PT * G]);
        for j in first..end {
            let tk: Tile<E, { [BN, D] }> =
                kp.load_pipelined::<LAT>([bh, j, 0i32]).reshape(const_shape![BN, D]);
            let scores: Tile<f32, { [BN, R * PT * G] }> = mma(tk, q_t, nothing);
            let keys = key_offsets + (j * BN).broadcast(const_shape![BN, R * PT * G]);
            let visible = le_tile(keys, row_pos);
            let scores = select(visible, scores * scale, hidden);
            let tile_max: Tile<f32, { [R * PT * G] }> = reduce_max(scores, 0i32);
            let m_new = max_tile(m, tile_max.reshape(const_shape![1, R * PT * G]));
            let p = exp2(scores - m_new.broadcast(const_shape![BN, R * PT * G]), ftz::Enabled);
            let p = select(visible, p, nothing);
            let alpha = exp2(m - m_new, ftz::Enabled);
            let p_sum: Tile<f32, { [R * PT * G] }> = reduce_sum(p, 0i32);
            l = l * alpha + p_sum.reshape(const_shape![1, R * PT * G]);
            let tv: Tile<E, { [BN, D] }> =
                vp.load_pipelined::<LAT>([bh, j, 0i32]).reshape(const_shape![BN, D]);
            let p_e: Tile<E, { [BN, R * PT * G] }> = convert_tile(p);
            acc = mma(transpose(tv), p_e, acc * alpha.broadcast(const_shape![D, R * PT * G]));
            m = m_new;
        }
        let acc_rows: Tile<f32, { [R * PT * G, D] }> = transpose(acc);
        let acc_first: Tile<f32, { [PT * G, D] }> =
            extract(acc_rows, [scalar_to_tile(0i32), scalar_to_tile(0i32)]);
        acc_out.store(acc_first.reshape(const_shape![1, PT * G, D]));
        let m_first: Tile<f32, { [1, PT * G] }> = extract(m, [scalar_to_tile(0i32), scalar_to_tile(0i32)]);
        let l_first: Tile<f32, { [1, PT * G] }> = extract(l, [scalar_to_tile(0i32), scalar_to_tile(0i32)]);
        m_out.store(m_first);
        l_out.store(l_first);
    }

    /// Combine `attention_partial`'s splits: out rows = sum_s 2^(m_s - M) acc_s / sum_s
    /// 2^(m_s - M) l_s, rounded to E, in the q layout [B * HKV, P, G * D]. The splits are
    /// read SPC at a time (one load each of m, l and acc per chunk, the splits past the end
    /// masked): a loop of one split per iteration waits on every load in turn.
    #[cutile::entry(optimization_hints = (sm_90 = (num_worker_warps_per_cta = 8)))]
    fn attention_merge<E: ElementType, const G: i32, const PT: i32, const D: i32, const SPC: i32>(
        out: &mut Tensor<E, { [1, PT, G * D] }>,
        acc: &Tensor<f32, { [-1, -1, D] }>,
        m: &Tensor<f32, { [-1, -1] }>,
        l: &Tensor<f32, { [-1, -1] }>,
    ) {
        let bh = get_tile_block_id().0;
        let splits = m.shape()[1] / (PT * G);
        let ap = acc.partition(const_shape![1, SPC * PT * G, D]);
        let mp = m.partition(const_shape![1, SPC * PT * G]);
        let lp = l.partition(const_shape![1, SPC * PT * G]);
        let offsets: Tile<i32, { [SPC] }> = iota(const_shape![SPC]);
        let offsets = offsets.reshape(const_shape![SPC, 1]).broadcast(const_shape![SPC, PT * G]);
        let empty: Tile<f32, { [SPC, PT * G] }> = constant(-1.0e30f32, const_shape![SPC, PT * G]);
        let mut best: Tile<f32, { [1, PT * G] }> = constant(-1.0e30f32, const_shape![1, PT * G]);
        let mut total: Tile<f32, { [1, PT * G] }> = constant(0.0f32, const_shape![1, PT * G]);
        let mut sum: Tile<f32, { [PT * G, D] }> = constant(0.0f32, const_shape![PT * G, D]);
        for c in 0i32..num_tiles(&mp, 1) {
            let index = offsets + (c * SPC).broadcast(const_shape![SPC, PT * G]);
            let real = lt_tile(index, splits.broadcast(const_shape![SPC, PT * G]));
            let ms: Tile<f32, { [SPC, PT * G] }> = mp.load([bh, c]).reshape(const_shape![SPC, PT * G]);
            let ms = select(real, ms, empty);
            let ls: Tile<f32, { [SPC, PT * G] }> = lp.load([bh, c]).reshape(const_shape![SPC, PT * G]);
            let parts: Tile<f32, { [SPC, PT * G, D] }> =
                ap.load([bh, c, 0i32]).reshape(const_shape![SPC, PT * G, D]);
            let chunk_best: Tile<f32, { [PT * G] }> = reduce_max(ms, 0i32);
            let new_best = max_tile(best, chunk_best.reshape(const_shape![1, PT * G]));
            let keep = exp2(best - new_best, ftz::Enabled);
            let take = exp2(ms - new_best.broadcast(const_shape![SPC, PT * G]), ftz::Enabled);
            let chunk_total: Tile<f32, { [PT * G] }> = reduce_sum(ls * take, 0i32);
            total = total * keep + chunk_total.reshape(const_shape![1, PT * G]);
            let take = take.reshape(const_shape![SPC, PT * G, 1]).broadcast(const_shape![SPC, PT * G, D]);
            let chunk_sum: Tile<f32, { [PT * G, D] }> = reduce_sum(parts * take, 0i32);
            let keep = keep.reshape(const_shape![PT * G, 1]).broadcast(const_shape![PT * G, D]);
            sum = sum * keep + chunk_sum;
            best = new_best;
        }
        let total = total.reshape(const_shape![PT * G, 1]).broadcast(const_shape![PT * G, D]);
        let result: Tile<E, { [PT * G, D] }> = convert_tile(sum / total);
        out.store(result.reshape(const_shape![1, PT, G * D]));
    }

    /// First stage of a greedy argmax over logits [B, V] (f32): per block of BV columns its
    /// maximum and the lowest column holding it (grid: B x ceil(V / BV)).
    #[cutile::entry()]
    fn argmax_partial<const BV: i32>(
        best: &mut Tensor<f32, { [1, 1] }>,
        index: &mut Tensor<i32, { [1, 1] }>,
        logits: &Tensor<f32, { [-1, -1] }>,
    ) {
        let (b, j, _) = get_tile_block_id();
        let values: Tile<f32, { [1, BV] }> = logits.partition(const_shape![1, BV]).load([b, j]);
        let offsets: Tile<i32, { [BV] }> = iota(const_shape![BV]);
        let cols = offsets.reshape(const_shape![1, BV]) + (j * BV).broadcast(const_shape![1, BV]);
        let real = lt_tile(cols, logits.shape()[1].broadcast(const_shape![1, BV]));
        let lowest: Tile<f32, { [1, BV] }> = constant(f32::NEG_INFINITY, const_shape![1, BV]);
        let values = select(real, values, lowest);
        let top: Tile<f32, { [1] }> = reduce_max(values, 1i32);
        let top = top.reshape(const_shape![1, 1]);
        let past: Tile<i32, { [1, BV] }> = constant(2147483647i32, const_shape![1, BV]);
        let at_top = eq_tile(values, top.broadcast(const_shape![1, BV])) & real;
        let first: Tile<i32, { [1] }> = reduce_min(select(at_top, cols, past), 1i32);
        best.store(top);
        index.store(first.reshape(const_shape![1, 1]));
    }

    /// Second stage: token[b] = the lowest index among the blocks holding row b's maximum
    /// (at most NBP blocks), and the decode position advanced: pos_out = pos_in + advance.
    #[cutile::entry()]
    fn greedy_step<const B: i32, const NBP: i32>(
        token: &mut Tensor<i32, { [B] }>,
        pos_out: &mut Tensor<i32, { [1] }>,
        best: &Tensor<f32, { [-1, -1] }>,
        index: &Tensor<i32, { [-1, -1] }>,
        pos_in: &Tensor<i32, { [-1] }>,
        advance: i32,
    ) {
        let values: Tile<f32, { [B, NBP] }> = best.partition(const_shape![B, NBP]).load([0i32, 0i32]);
        let ids: Tile<i32, { [B, NBP] }> = index.partition(const_shape![B, NBP]).load([0i32, 0i32]);
        let offsets: Tile<i32, { [NBP] }> = iota(const_shape![NBP]);
        let cols = offsets.reshape(const_shape![1, NBP]).broadcast(const_shape![B, NBP]);
        let real = lt_tile(cols, best.shape()[1].broadcast(const_shape![B, NBP]));
        let lowest: Tile<f32, { [B, NBP] }> = constant(f32::NEG_INFINITY, const_shape![B, NBP]);
        let values = select(real, values, lowest);
        let top: Tile<f32, { [B] }> = reduce_max(values, 1i32);
        let top = top.reshape(const_shape![B, 1]).broadcast(const_shape![B, NBP]);
        let past: Tile<i32, { [B, NBP] }> = constant(2147483647i32, const_shape![B, NBP]);
        let at_top = eq_tile(values, top) & real;
        let chosen: Tile<i32, { [B] }> = reduce_min(select(at_top, ids, past), 1i32);
        token.store(chosen);
        let start: Tile<i32, { [1] }> = pos_in.partition(const_shape![1]).load([0i32]);
        pos_out.store(start + advance.broadcast(const_shape![1]));
    }

    /// pos_out = pos_in + advance: the position step of a decode state whose token another
    /// kernel chose (the f16 decoder over cutile-kernels' argmax, tests/benchmarks/decode/).
    #[cutile::entry()]
    fn advance_position(
        pos_out: &mut Tensor<i32, { [1] }>,
        pos_in: &Tensor<i32, { [-1] }>,
        advance: i32,
    ) {
        let start: Tile<i32, { [1] }> = pos_in.partition(const_shape![1]).load([0i32]);
        pos_out.store(start + advance.broadcast(const_shape![1]));
    }
}
