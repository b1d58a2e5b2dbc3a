"""GPU cases for cutile-rs's cutile-kernels: the Grout inference engine's Qwen3 decoder kernels.

cutile-kernels' own tests only compile these kernels, so each launch here follows the kernel's
source: which `&mut Tensor` is the partitioned output (its tile is the host's `.partition`), what
each grid axis indexes, and, for entries with no partitioned output, the grid the host must pass.
Shapes are Qwen3-like decode/prefill shapes at the runner's generics (head dim D and hidden N
from the generics; 32 query heads over 8 KV heads, GQA group 4): token counts are not tile
multiples where the kernel masks, and KV caches are whole BN tiles long where the kernel loads
whole tiles without a bounds mask. References are torch in f64 of exactly what the kernel
computes (its tie rules, in-place updates, what it leaves untouched). Keys are the runner
table's (`path::function`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

from client_stubs import DeviceTensor
from tests.compat.gpu_support import (
    CaseContext,
    CaseFn,
    Compared,
    Launched,
    randn,
    tolerance_for,
    view,
)

KERNELS = "cutile-kernels/src/"
EXPERIMENTAL = KERNELS + "experimental/"

F16 = torch.float16
Q_HEADS, KV_HEADS = 32, 8  # Qwen3-8B's attention heads
GROUP_SIZE = Q_HEADS // KV_HEADS  # query heads per KV head
PREFILL_TOKENS = 77  # not a multiple of any tile
PREFILL_START = 40  # a chunked prefill: 40 tokens already cached
DECODE_POSITION = 1000  # the position a decode step writes and attends up to
EPS = 1e-6  # Qwen3's rms_norm_eps
ROPE_THETA = 1e6  # Qwen3's rope_theta
ROPE_START = 200  # RoPE positions stay below 100*pi, where sin/cos approximations are accurate
VOCAB = 151_665  # Qwen3's tokenizer: not a multiple of 64
I32_MAX = 2**31 - 1

Timer = Callable[[], object]  # torch doing a case's work, for timing


# ---- shared helpers -------------------------------------------------------------------------


def _generator(seed: int) -> torch.Generator:
    return torch.Generator(device="cuda").manual_seed(seed)


def _u32(tensor: torch.Tensor) -> DeviceTensor:
    """A u32 view of an int32 torch tensor (the same bits for values below 2^31): references
    and comparisons stay on int32, which torch fully supports."""
    return DeviceTensor(
        tensor.data_ptr(),
        tuple(tensor.shape),
        tuple(tensor.stride()),
        "u32",
        tensor.device.index or 0,
        tensor,
    )


def _position(value: int) -> DeviceTensor:
    """The device position (`&Tensor<u32, {[1]}>`) the decode-graph kernels read."""
    return _u32(torch.tensor([value], dtype=torch.int32, device="cuda"))


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _f16_tolerance(expected: torch.Tensor) -> float:
    """An f16 result of `expected`'s largest magnitude: its rounding plus f32 arithmetic."""
    return tolerance_for(F16, float(expected.abs().max()))


def _f16_scale(d: int) -> float:
    """1/sqrt(d) as the f16 `qk_scale` scalar some kernels take (exact for d = 64)."""
    return float(torch.tensor(1 / math.sqrt(d)).half())


def _rms(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    """x * rsqrt(mean(x^2) + eps) * w over the last axis, in f64 (the kernels work in f32)."""
    xd = x.double()
    return xd * torch.rsqrt(xd.pow(2).mean(dim=-1, keepdim=True) + eps) * w.double()


def _inv_freq(half: int) -> torch.Tensor:
    """RoPE inverse frequencies theta^(-i/half), f32 [HALF_D]."""
    exponents = torch.arange(half, device="cuda", dtype=torch.float64) / half
    return (ROPE_THETA**-exponents).float()


def _theta(positions: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """The kernels' angles f32(position) * inv_freq, rounded to f32: [positions, HALF_D]."""
    return positions.float()[:, None] * inv_freq[None, :]


def _rotate(x: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """Half-split (NeoX) RoPE in f64: (lo cos - hi sin, hi cos + lo sin); `theta` broadcasts
    against x[..., :D/2]."""
    half = x.shape[-1] // 2
    lo, hi = x[..., :half].double(), x[..., half:].double()
    cos, sin = theta.double().cos(), theta.double().sin()
    return torch.cat((lo * cos - hi * sin, hi * cos + lo * sin), dim=-1)


def _rope_timer(x: torch.Tensor, theta: torch.Tensor) -> Timer:
    """torch doing the same rotation in x's dtype (for timing)."""
    half = x.shape[-1] // 2
    cos, sin = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    lo, hi = x[..., :half], x[..., half:]
    return lambda: torch.cat((lo * cos - hi * sin, hi * cos + lo * sin), dim=-1)


def _torch_rms(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.rms_norm(x, (x.shape[-1],), w, EPS)


# ---- norms ----------------------------------------------------------------------------------


def _rms_norm(ctx: CaseContext) -> Launched:
    """`out = f16(x * rsqrt(mean(x^2) + eps) * w)` per row, f32 inside; grid (rows, 1, 1)."""
    n = ctx.int("N")
    x, w = randn(PREFILL_TOKENS, n, dtype=F16, seed=1), randn(n, dtype=F16, seed=2)
    out = torch.zeros_like(x)
    kernel = ctx.kernel(allow_unchecked=True)
    args = (view(x), view(w), view(out).partition((1, n)), EPS)
    kernel(*args, sync=True)
    expected = _rms(x.float(), w, EPS)
    return Launched(
        [Compared("out", out, expected, _f16_tolerance(expected))],  # f16 rounding of the f32 norm
        ours=lambda: kernel(*args),
        reference=lambda: _torch_rms(x, w),
        note=f"{PREFILL_TOKENS} tokens x hidden {n}",
    )


def _add_rms_expected(
    residual: torch.Tensor, x: torch.Tensor, w: torch.Tensor
) -> list[tuple[str, torch.Tensor, float]]:
    """add+RMSNorm's two outputs: the norm of h = f32(residual + x), and h rounded once to f16
    (the same f32 sum rounded the same way as torch: exact)."""
    hidden = residual.float() + x.float()
    normed = _rms(hidden, w, EPS)
    return [("out", normed, _f16_tolerance(normed)), ("residual_out", hidden.half(), 0.0)]


def _add_rms_norm(ctx: CaseContext) -> Launched:
    """Residual add + RMSNorm with both outputs [1, N] tiles; grid (rows, 1, 1)."""
    n = ctx.int("N")
    residual, x = (randn(PREFILL_TOKENS, n, dtype=F16, seed=s) for s in (1, 2))
    w = randn(n, dtype=F16, seed=3)
    out, residual_out = torch.zeros_like(x), torch.zeros_like(x)
    kernel = ctx.kernel(allow_unchecked=True)
    tile = (1, n)
    args = (
        view(residual),
        view(x),
        view(w),
        view(out).partition(tile),
        view(residual_out).partition(tile),
        EPS,
    )
    kernel(*args, sync=True)
    got = {"out": out, "residual_out": residual_out}
    return Launched(
        [Compared(name, got[name], e, t) for name, e, t in _add_rms_expected(residual, x, w)],
        ours=lambda: kernel(*args),
        reference=lambda: _torch_rms(residual + x, w),
        note=f"{PREFILL_TOKENS} tokens x hidden {n}",
    )


def _add_rms_norm_decode_raw(ctx: CaseContext) -> Launched:
    """The raw-pointer decode variant: one [1, N] row (the kernel ignores its block id, so the
    host grid is (1, 1, 1))."""
    n = ctx.int("N")
    residual, x = (randn(1, n, dtype=F16, seed=s) for s in (1, 2))
    w = randn(n, dtype=F16, seed=3)
    out, residual_out = torch.zeros_like(x), torch.zeros_like(x)
    kernel = ctx.kernel(allow_unchecked=True)
    args = (view(residual), view(x), view(w), view(out), view(residual_out), EPS)
    kernel(*args, grid=(1, 1, 1), sync=True)
    got = {"out": out, "residual_out": residual_out}
    return Launched(
        [Compared(name, got[name], e, t) for name, e, t in _add_rms_expected(residual, x, w)],
        ours=lambda: kernel(*args, grid=(1, 1, 1)),
        reference=lambda: _torch_rms(residual + x, w),
        note=f"one decode token x hidden {n}",
    )


def _qk_norm(ctx: CaseContext) -> Launched:
    """Per-head QK norm: rows < num_q_rows normalise q with q_weight, the rest k with k_weight;
    out [q rows + k rows, N]; grid (rows, 1, 1)."""
    n = ctx.int("N")
    tokens = 7
    q = randn(tokens * Q_HEADS, n, dtype=F16, seed=1)
    k = randn(tokens * KV_HEADS, n, dtype=F16, seed=2)
    q_weight, k_weight = randn(n, dtype=F16, seed=3), randn(n, dtype=F16, seed=4)
    out = torch.zeros(q.shape[0] + k.shape[0], n, device="cuda", dtype=F16)
    kernel = ctx.kernel(allow_unchecked=True)
    args = (
        view(q),
        view(k),
        view(q_weight),
        view(k_weight),
        view(out).partition((1, n)),
        EPS,
        q.shape[0],
    )
    kernel(*args, sync=True)
    expected = torch.cat((_rms(q.float(), q_weight, EPS), _rms(k.float(), k_weight, EPS)))
    return Launched(
        [Compared("out", out, expected, _f16_tolerance(expected))],  # f16 rounding of the f32 norms
        ours=lambda: kernel(*args),
        reference=lambda: torch.cat((_torch_rms(q, q_weight), _torch_rms(k, k_weight))),
        note=f"{tokens} tokens: {q.shape[0]} q rows + {k.shape[0]} k rows of head dim {n}",
    )


# ---- pointwise and embedding ----------------------------------------------------------------


def _add_2d(ctx: CaseContext) -> Launched:
    """`out = lhs + rhs` in f16 with [1, BLOCK_SIZE] tiles; lhs has a wider row stride."""
    bs = ctx.int("BLOCK_SIZE")
    rows, cols = PREFILL_TOKENS, 1000  # cols not a multiple of the tile
    lhs = randn(rows, cols + 24, dtype=F16, seed=1)[:, :cols]
    rhs = randn(rows, cols, dtype=F16, seed=2)
    out = torch.zeros(rows, cols, device="cuda", dtype=F16)
    kernel = ctx.kernel()
    args = (view(out).partition((1, bs)), view(lhs), view(rhs))
    kernel(*args, sync=True)
    expected = lhs.double() + rhs.double()  # exact; the f16 add rounds it (within an ulp)
    return Launched(
        [
            Compared("out", out, expected, _f16_tolerance(expected))
        ],  # the f16 add rounds the exact sum
        ours=lambda: kernel(*args),
        reference=lambda: lhs + rhs,
        note=f"[{rows}, {cols}], lhs row stride {cols + 24}",
    )


def _silu_mul(ctx: CaseContext) -> Launched:
    """SwiGLU `out = f16(silu(gate) * up)` in f32; gate and up are the halves of one fused
    gate_up projection (row stride 2*I)."""
    bs = ctx.int("BLOCK_SIZE")
    rows, inter = PREFILL_TOKENS, 1000
    gate_up = randn(rows, 2 * inter, dtype=F16, seed=1)
    gate, up = gate_up[:, :inter], gate_up[:, inter:]
    out = torch.zeros(rows, inter, device="cuda", dtype=F16)
    kernel = ctx.kernel()
    args = (view(out).partition((1, bs)), view(gate), view(up))
    kernel(*args, sync=True)
    g = gate.double()
    expected = g * torch.sigmoid(g) * up.double()
    return Launched(
        [Compared("out", out, expected, _f16_tolerance(expected))],  # f16 rounding of f32 SwiGLU
        ours=lambda: kernel(*args),
        reference=lambda: torch.nn.functional.silu(gate) * up,
        note=f"[{rows}, {inter}] halves of a [{rows}, {2 * inter}] gate_up",
    )


def _gather_row(ctx: CaseContext) -> Launched:
    """`out = src[row_idx]` (the last prefill token's hidden state), [BLOCK_SIZE] tiles."""
    bs = ctx.int("BLOCK_SIZE")
    rows, width = PREFILL_TOKENS, 2500
    src = randn(rows, width, dtype=F16, seed=1)
    out = torch.zeros(width, device="cuda", dtype=F16)
    row = rows - 1
    kernel = ctx.kernel()
    args = (view(src), view(out).partition((bs,)), row)
    kernel(*args, sync=True)
    scratch = torch.empty_like(out)
    return Launched(
        [Compared("out", out, src[row], 0.0)],  # a copy: exact
        ours=lambda: kernel(*args),
        reference=lambda: scratch.copy_(src[row]),
        note=f"row {row} of [{rows}, {width}]",
    )


def _embedding(ctx: CaseContext) -> Launched:
    """`out[t] = table[token_ids[t]]` with [1, BLOCK_SIZE] tiles; grid (tokens, D/BS, 1)."""
    d, bs = ctx.int("D"), ctx.int("BLOCK_SIZE")
    table = randn(VOCAB, d, dtype=F16, seed=1)
    ids = torch.randint(
        0, VOCAB, (PREFILL_TOKENS,), device="cuda", dtype=torch.int32, generator=_generator(2)
    )
    out = torch.zeros(PREFILL_TOKENS, d, device="cuda", dtype=F16)
    kernel = ctx.kernel()
    args = (_u32(ids), view(table), view(out).partition((1, bs)))
    kernel(*args, sync=True)
    ids_long = ids.long()
    return Launched(
        [Compared("out", out, table[ids_long], 0.0)],  # a copy: exact
        ours=lambda: kernel(*args),
        reference=lambda: torch.embedding(table, ids_long),
        note=f"{PREFILL_TOKENS} tokens from a [{VOCAB}, {d}] table",
    )


# ---- argmax ---------------------------------------------------------------------------------


def _masked_argmax(
    values: torch.Tensor, indices: torch.Tensor, block: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per `block` entries of `values` (as f32; entries past the end count as -1e30): the max,
    and the smallest of `indices` where it is attained (the kernels' tie rule)."""
    blocks = -(-values.numel() // block)
    pad = blocks * block - values.numel()
    v = torch.nn.functional.pad(values.float(), (0, pad), value=-1e30).view(blocks, block)
    i = torch.nn.functional.pad(indices.long(), (0, pad), value=I32_MAX).view(blocks, block)
    best = v.max(dim=1).values
    winner = torch.where(v == best[:, None], i, I32_MAX).min(dim=1).values
    return best, winner.int()


def _argmax_blocks(ctx: CaseContext) -> Launched:
    """First-stage greedy argmax over the vocabulary: per BLOCK_SIZE block, its max (f32) and
    the lowest index attaining it (u32); outputs [blocks] with [1] tiles."""
    bs = ctx.int("BLOCK_SIZE")
    logits = randn(VOCAB, dtype=F16, seed=1)
    logits[5 * bs + 3] = logits[5 * bs + bs - 1] = 12.0  # a tie in block 5: the lower index wins
    blocks = -(-VOCAB // bs)
    block_max = torch.zeros(blocks, device="cuda")
    block_idx = torch.zeros(blocks, device="cuda", dtype=torch.int32)
    kernel = ctx.kernel()
    args = (view(logits), view(block_max).partition((1,)), _u32(block_idx).partition((1,)), VOCAB)
    kernel(*args, sync=True)
    best, winner = _masked_argmax(logits, torch.arange(VOCAB, device="cuda"), bs)
    padded = torch.nn.functional.pad(logits, (0, blocks * bs - VOCAB), value=-65504.0)
    return Launched(
        [
            Compared("block_max", block_max, best, 0.0),  # a max of f16 values: exact
            Compared("block_idx", block_idx, winner, 0.0),  # an index: exact
        ],
        ours=lambda: kernel(*args),
        reference=lambda: padded.view(blocks, bs).max(dim=1),
        note=f"vocab {VOCAB}: {blocks} blocks, the last partial",
    )


def _eighths(*shape: int, seed: int) -> torch.Tensor:
    """f16 multiples of 1/8 in [-1, 1]: dot products of 64 of them are exact in f32 in any
    order, so the reference matches the kernel's sums bit for bit, ties included."""
    ints = torch.randint(-8, 9, shape, device="cuda", generator=_generator(seed))
    return (ints.float() / 8).half()


def _lm_head_argmax(ctx: CaseContext) -> Launched:
    """Fused LM head + block argmax: logits = weights @ hidden[0] (f32 multiply + reduce_sum in
    k-chunks of 32), then per block of 64 rows (hard-coded) the max and its lowest index."""
    k = ctx.int("K")
    rows = 64  # the kernel's rows per block
    weights, hidden = _eighths(VOCAB, k, seed=1), _eighths(1, k, seed=2)
    blocks = -(-VOCAB // rows)
    block_max = torch.zeros(blocks, device="cuda")
    block_idx = torch.zeros(blocks, device="cuda", dtype=torch.int32)
    kernel = ctx.kernel(allow_unchecked=True)
    args = (
        view(weights),
        view(hidden),
        view(block_max).partition((1,)),
        _u32(block_idx).partition((1,)),
        VOCAB,
    )
    kernel(*args, sync=True)
    logits = weights.double() @ hidden[0].double()
    best, winner = _masked_argmax(logits, torch.arange(VOCAB, device="cuda"), rows)
    return Launched(
        [
            Compared("block_max", block_max, best, 0.0),  # exact sums (see _eighths)
            Compared("block_idx", block_idx, winner, 0.0),  # an index: exact
        ],
        ours=lambda: kernel(*args),
        reference=lambda: torch.argmax(weights @ hidden[0]),
        note=f"[{VOCAB}, {k}] weights, {blocks} blocks of 64 rows; values in 1/8 steps (ties)",
    )


def _argmax_reduce(ctx: CaseContext) -> Launched:
    """Second stage: out[0] = the smallest stored block_idx among the blocks attaining
    max(block_max[:num_blocks]) (num_blocks <= BLOCK_SIZE, one block reads them all)."""
    bs = ctx.int("BLOCK_SIZE")
    stage_block = 4096  # a first stage of 4096-entry blocks
    blocks = min(-(-VOCAB // stage_block), bs)  # 38: fewer than BLOCK_SIZE
    block_max = randn(blocks, seed=1)
    first, second = blocks // 5, blocks - 3
    block_max[first] = block_max[second] = 10.0  # a tie: the smaller stored index wins
    offsets = torch.randint(0, stage_block, (blocks,), device="cuda", generator=_generator(2))
    starts = torch.arange(blocks, device="cuda") * stage_block
    block_idx = (starts + offsets).clamp(max=VOCAB - 1).int()
    out = torch.zeros(1, device="cuda", dtype=torch.int32)
    kernel = ctx.kernel()
    args = (view(block_max), _u32(block_idx), _u32(out).partition((1,)), blocks)
    kernel(*args, sync=True)
    _, winner = _masked_argmax(block_max, block_idx, blocks)
    return Launched(
        [Compared("out", out, winner, 0.0)],  # an index: exact
        ours=lambda: kernel(*args),
        reference=lambda: block_idx[torch.argmax(block_max)],
        note=f"{blocks} blocks",
    )


# ---- RoPE and KV cache ----------------------------------------------------------------------


def _rope_seq(ctx: CaseContext) -> Launched:
    """NeoX RoPE of x [S, H, D] at positions position_start + s; out tiles [1, 1, HALF_D],
    grid (S, H, 2) (axis 2 picks the half)."""
    d, half = ctx.int("D"), ctx.int("HALF_D")
    x = randn(PREFILL_TOKENS, Q_HEADS, d, dtype=F16, seed=1)
    inv_freq = _inv_freq(half)
    out = torch.zeros_like(x)
    kernel = ctx.kernel()
    args = (view(x), view(inv_freq), view(out).partition((1, 1, half)), ROPE_START)
    kernel(*args, sync=True)
    positions = torch.arange(ROPE_START, ROPE_START + PREFILL_TOKENS, device="cuda")
    theta = _theta(positions, inv_freq)[:, None, :]
    expected = _rotate(x, theta)
    return Launched(
        [
            Compared("out", out, expected, _f16_tolerance(expected))
        ],  # f16 rounding of the f32 rotation
        ours=lambda: kernel(*args),
        reference=_rope_timer(x, theta),
        note=f"[{PREFILL_TOKENS}, {Q_HEADS}, {d}] from position {ROPE_START}",
    )


def _rope_seq_dynpos(ctx: CaseContext) -> Launched:
    """RoPE with the position read from a device u32 (decode graphs): 3 tokens (a speculative
    verify step) of q and k heads."""
    d, half = ctx.int("D"), ctx.int("HALF_D")
    seq, heads = 3, Q_HEADS + KV_HEADS
    x = randn(seq, heads, d, dtype=F16, seed=1)
    inv_freq = _inv_freq(half)
    out = torch.zeros_like(x)
    kernel = ctx.kernel()
    args = (view(x), view(inv_freq), _position(ROPE_START), view(out).partition((1, 1, half)))
    kernel(*args, sync=True)
    positions = torch.arange(ROPE_START, ROPE_START + seq, device="cuda")
    theta = _theta(positions, inv_freq)[:, None, :]
    expected = _rotate(x, theta)
    return Launched(
        [
            Compared("out", out, expected, _f16_tolerance(expected))
        ],  # f16 rounding of the f32 rotation
        ours=lambda: kernel(*args),
        reference=_rope_timer(x, theta),
        note=f"[{seq}, {heads}, {d}] from device position {ROPE_START}",
    )


def _qk_rope_dynpos(ctx: CaseContext) -> Launched:
    """RoPE of q [S, Hq, D] and k [S, Hk, D] into one out [S, Hq + Hk, D]: heads below
    num_q_heads rotate q, the rest k; grid (S, Hq + Hk, 2)."""
    d, half = ctx.int("D"), ctx.int("HALF_D")
    seq = 3
    q = randn(seq, Q_HEADS, d, dtype=F16, seed=1)
    k = randn(seq, KV_HEADS, d, dtype=F16, seed=2)
    inv_freq = _inv_freq(half)
    out = torch.zeros(seq, Q_HEADS + KV_HEADS, d, device="cuda", dtype=F16)
    kernel = ctx.kernel(allow_unchecked=True)
    args = (
        view(q),
        view(k),
        view(inv_freq),
        _position(ROPE_START),
        view(out).partition((1, 1, half)),
        Q_HEADS,
    )
    kernel(*args, sync=True)
    positions = torch.arange(ROPE_START, ROPE_START + seq, device="cuda")
    theta = _theta(positions, inv_freq)[:, None, :]
    expected = _rotate(torch.cat((q, k), dim=1), theta)
    return Launched(
        [
            Compared("out", out, expected, _f16_tolerance(expected))
        ],  # f16 rounding of the f32 rotation
        ours=lambda: kernel(*args),
        reference=_rope_timer(torch.cat((q, k), dim=1), theta),
        note=f"{seq} tokens, {Q_HEADS} q + {KV_HEADS} k heads of {d}",
    )


def _kv_cache_update(ctx: CaseContext) -> Launched:
    """Prefill cache write (position 0 assumed): cache[h, s] = new[s, h] for s < seq_len, the
    rest of the cache untouched; cache tiles [1, BM_S, BLOCK_SIZE], grid (Hkv, max_seq/BM_S,
    D/BS), the last s-tile partial."""
    d, bs, bm_s = ctx.int("D"), ctx.int("BLOCK_SIZE"), ctx.int("BM_S")
    max_seq, seq = 200, PREFILL_TOKENS  # neither a multiple of BM_S
    new_k, new_v = (randn(seq, KV_HEADS, d, dtype=F16, seed=s) for s in (1, 2))
    k_cache0, v_cache0 = (randn(KV_HEADS, max_seq, d, dtype=F16, seed=s) for s in (3, 4))
    k_cache, v_cache = k_cache0.clone(), v_cache0.clone()
    kernel = ctx.kernel(allow_unchecked=True)
    tile = (1, bm_s, bs)
    args = (
        view(new_k),
        view(new_v),
        view(k_cache).partition(tile),
        view(v_cache).partition(tile),
        0,
        seq,
    )
    kernel(*args, sync=True)
    expected_k, expected_v = k_cache0.clone(), v_cache0.clone()
    expected_k[:, :seq] = new_k.transpose(0, 1)
    expected_v[:, :seq] = new_v.transpose(0, 1)
    timed_k, timed_v = k_cache0.clone(), v_cache0.clone()
    return Launched(
        [
            Compared("k_cache", k_cache, expected_k, 0.0),  # copies; rows past seq_len untouched
            Compared("v_cache", v_cache, expected_v, 0.0),  # copies
        ],
        ours=lambda: kernel(*args),
        reference=lambda: _copy_into_cache(timed_k, timed_v, new_k, new_v, 0),
        note=f"{seq} tokens into [{KV_HEADS}, {max_seq}, {d}] caches",
    )


def _copy_into_cache(
    k_cache: torch.Tensor, v_cache: torch.Tensor, k: torch.Tensor, v: torch.Tensor, start: int
) -> None:
    k_cache[:, start : start + k.shape[0]] = k.transpose(0, 1)
    v_cache[:, start : start + v.shape[0]] = v.transpose(0, 1)


def _kv_cache_update_dynpos(ctx: CaseContext) -> Launched:
    """Decode cache write at a device position: cache[h, pos + s] = new[s, h] for s < seq_len;
    cache tiles [1, MAX_SEQ, BS] (the whole cache length: grid (Hkv, 1, D/BS))."""
    d, bs, max_seq = ctx.int("D"), ctx.int("BLOCK_SIZE"), ctx.int("MAX_SEQ")
    seq = 3  # a speculative verify step; 1 for plain decode
    pos = max_seq - 20
    new_k, new_v = (randn(seq, KV_HEADS, d, dtype=F16, seed=s) for s in (1, 2))
    k_cache0, v_cache0 = (randn(KV_HEADS, max_seq, d, dtype=F16, seed=s) for s in (3, 4))
    k_cache, v_cache = k_cache0.clone(), v_cache0.clone()
    kernel = ctx.kernel(allow_unchecked=True)
    tile = (1, max_seq, bs)
    args = (
        view(new_k),
        view(new_v),
        view(k_cache).partition(tile),
        view(v_cache).partition(tile),
        _position(pos),
        seq,
    )
    kernel(*args, sync=True)
    expected_k, expected_v = k_cache0.clone(), v_cache0.clone()
    _copy_into_cache(expected_k, expected_v, new_k, new_v, pos)
    timed_k, timed_v = k_cache0.clone(), v_cache0.clone()
    return Launched(
        [
            Compared("k_cache", k_cache, expected_k, 0.0),  # copies; the other rows untouched
            Compared("v_cache", v_cache, expected_v, 0.0),  # copies
        ],
        ours=lambda: kernel(*args),
        reference=lambda: _copy_into_cache(timed_k, timed_v, new_k, new_v, pos),
        note=f"{seq} tokens at position {pos} of [{KV_HEADS}, {max_seq}, {d}] caches",
    )


# ---- attention ------------------------------------------------------------------------------


def _qkv(q_len: int, cache_len: int, d: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """q [q_len, Q_HEADS, D] (sequence-major) and a K/V cache [KV_HEADS, cache_len, D]
    (head-major); slots past the valid keys hold stale data, as in a real cache."""
    q = randn(q_len, Q_HEADS, d, dtype=F16, seed=1)
    k, v = (randn(KV_HEADS, cache_len, d, dtype=F16, seed=s) for s in (2, 3))
    return q, k, v


def _softmax_av(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    scale: float,
    allowed: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(scale * q k^T) v over the keys `allowed` marks, and each row's log-sum-exp in
    log2 units (what the split-K kernels store); f64."""
    scores = (q.double() @ k.double().transpose(-1, -2)) * scale
    if allowed is not None:
        scores = scores.masked_fill(~allowed, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1) / math.log(2)
    return torch.softmax(scores, dim=-1) @ v.double(), lse


def _causal_allowed(queries: int, keys: int, query_start: int) -> torch.Tensor:
    """[queries, keys]: key j is visible to query i when j <= query_start + i."""
    i = torch.arange(queries, device="cuda")[:, None]
    j = torch.arange(keys, device="cuda")[None, :]
    return j <= query_start + i


def _causal_gqa(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, kv_len: int, start: int
) -> torch.Tensor:
    """out[i, h] = softmax_j(scale q[i, h].k[h // group, j]) v[h // group] over keys
    j < kv_len with j <= start + i; q [S, Hq, D], k/v [Hkv, >= kv_len, D]; f64 [S, Hq, D]."""
    group = q.shape[1] // k.shape[0]
    keys = k[:, :kv_len].repeat_interleave(group, 0)
    values = v[:, :kv_len].repeat_interleave(group, 0)
    allowed = _causal_allowed(q.shape[0], kv_len, start)
    out, _ = _softmax_av(q.transpose(0, 1), keys, values, scale, allowed)
    return out.transpose(0, 1)


def _sdpa_timer(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, kv_len: int, start: int
) -> Timer:
    """torch's SDPA on the same causal GQA problem (for timing)."""
    group = q.shape[1] // k.shape[0]
    qh = q.transpose(0, 1)[None]
    kh = k[:, :kv_len].repeat_interleave(group, 0)[None]
    vh = v[:, :kv_len].repeat_interleave(group, 0)[None]
    allowed = _causal_allowed(q.shape[0], kv_len, start)
    return lambda: torch.nn.functional.scaled_dot_product_attention(
        qh, kh, vh, attn_mask=allowed, scale=scale
    )


def _attention_tolerance(v: torch.Tensor, expected: torch.Tensor) -> float:
    """An f16 attention output: P is rounded to f16 for the PV product (2^-11 relative on each
    weight of a convex combination: at most 2^-11 max|v|), the output is rounded to f16 (2^-11
    relative), plus f32 softmax arithmetic and subnormal-f16 weights (5e-4)."""
    return 2**-11 * (float(v.abs().max()) + float(expected.abs().max())) + 5e-4


def _prefill_attention(ctx: CaseContext, out_tile: tuple[int, int, int]) -> Launched:
    """Causal GQA prefill: q [S, Hq, D], K/V caches [Hkv, cache, D], out [S, Hq, D] in
    `out_tile` tiles (grid (S/BM, Hq/heads per tile, 1)); args (q, k, v, out, qk_scale,
    query_group_size, kv_len, query_start). A chunked prefill: 77 new tokens after 40 cached,
    kv_len 117; the cache is whole BN tiles long (EVEN_K kernels load whole tiles unmasked)."""
    bn, d = ctx.int("BN"), ctx.int("D")
    kv_len = PREFILL_START + PREFILL_TOKENS
    q, k, v = _qkv(PREFILL_TOKENS, _round_up(kv_len, bn), d)
    out = torch.zeros_like(q)
    scale = 1 / math.sqrt(d)
    kernel = ctx.kernel(allow_unchecked=True)
    args = (
        view(q),
        view(k),
        view(v),
        view(out).partition(out_tile),
        scale,
        GROUP_SIZE,
        kv_len,
        PREFILL_START,
    )
    kernel(*args, sync=True)
    expected = _causal_gqa(q, k, v, scale, kv_len, PREFILL_START)
    return Launched(
        [Compared("out", out, expected, _attention_tolerance(v, expected))],
        ours=lambda: kernel(*args),
        reference=_sdpa_timer(q, k, v, scale, kv_len, PREFILL_START),
        note=f"{PREFILL_TOKENS} queries after {PREFILL_START} cached, {Q_HEADS}/{KV_HEADS} "
        f"heads, D {d}, cache {k.shape[1]}",
    )


def _flash_attn_causal_seq(ctx: CaseContext) -> Launched:
    return _prefill_attention(ctx, (ctx.int("BM"), 1, ctx.int("D")))


def _fmha_prefill_causal(ctx: CaseContext) -> Launched:
    return _prefill_attention(ctx, (ctx.int("BM"), 1, ctx.int("D")))


def _fmha_prefill_gqa(ctx: CaseContext) -> Launched:
    """The grouped variant packs GROUP query heads per block; it loads Q at head block
    pid.1 * GROUP / query_group_size, right only when GROUP == query_group_size (4 here)."""
    launched = _prefill_attention(ctx, (ctx.int("BM"), ctx.int("GROUP"), ctx.int("D")))
    if ctx.int("GROUP") == GROUP_SIZE:
        return launched
    note = f"{launched.note}; GROUP != query_group_size {GROUP_SIZE}: Q comes from other heads"
    return Launched(launched.outputs, launched.ours, launched.reference, note)


def _decode_attention(ctx: CaseContext, q_len: int) -> Launched:
    """Decode attention at a device position: q [q_len, Hq, D] at positions pos + i attend to
    keys j <= pos + i of a [Hkv, cache, D] cache; args (q, k, v, out [BM, 1, D] tiles,
    qk_scale, query_group_size, position_start). flash_attn_causal_seq_dynpos fixes
    kv_len = pos + 1 (q_len 1); fmha_causal bounds keys by the mask and k.shape[1]."""
    bm, bn, d = ctx.int("BM"), ctx.int("BN"), ctx.int("D")
    kv_len = DECODE_POSITION + q_len
    q, k, v = _qkv(q_len, _round_up(kv_len, bn), d)
    out = torch.zeros_like(q)
    scale = _f16_scale(d)  # one of the two takes an f16 scalar: the same value for both
    kernel = ctx.kernel(allow_unchecked=True)
    args = (
        view(q),
        view(k),
        view(v),
        view(out).partition((bm, 1, d)),
        scale,
        GROUP_SIZE,
        _position(DECODE_POSITION),
    )
    kernel(*args, sync=True)
    expected = _causal_gqa(q, k, v, scale, kv_len, DECODE_POSITION)
    return Launched(
        [Compared("out", out, expected, _attention_tolerance(v, expected))],
        ours=lambda: kernel(*args),
        reference=_sdpa_timer(q, k, v, scale, kv_len, DECODE_POSITION),
        note=f"{q_len} query token(s) at position {DECODE_POSITION}, cache {k.shape[1]}",
    )


def _flash_attn_causal_seq_dynpos(ctx: CaseContext) -> Launched:
    return _decode_attention(ctx, 1)


def _fmha_causal(ctx: CaseContext) -> Launched:
    return _decode_attention(ctx, 3)  # a speculative verify step: 3 causal query rows


def _split_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    scale: float,
    bounds: Sequence[tuple[int, int]],
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per split [a, b) of the keys: softmax(scale q k[a:b]^T) v[a:b] and its log2 LSE; q
    [..., G, D], k/v [..., cache, D] -> ([..., splits, G, D], [..., splits, G]), f64."""
    parts = [_softmax_av(q, k[..., a:b, :], v[..., a:b, :], scale) for a, b in bounds]
    return torch.stack([p[0] for p in parts], dim=-3), torch.stack([p[1] for p in parts], dim=-2)


def _split_decode_timer(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, s_kv: int
) -> Timer:
    """torch's SDPA on the whole decode step the splits cover: q [B, Hkv, G, D], k/v
    [B, Hkv, cache, D] (for timing)."""
    batch, kv_heads, group, d = q.shape
    qh = q.reshape(batch, kv_heads * group, 1, d)
    kh = k[..., :s_kv, :].repeat_interleave(group, dim=1)
    vh = v[..., :s_kv, :].repeat_interleave(group, dim=1)
    return lambda: torch.nn.functional.scaled_dot_product_attention(qh, kh, vh, scale=scale)


def _lse_tolerance(expected: torch.Tensor) -> float:
    """A log2-sum-exp from f32 maxima, exp2 and log2 (relative ~1e-6)."""
    return 1e-5 * max(1.0, float(expected.abs().max())) + 1e-4


def _decode_gqa_split(ctx: CaseContext) -> Launched:
    """Split-K GQA decode partials: q [Hkv, GROUP, D], s_kv = pos + 1 keys cut into NUM_KV_SPLITS
    runs of ceil(ceil(s_kv/BN)/splits) BN tiles; att [Hkv, splits*GROUP, D] in [1, GROUP, D]
    tiles and lse [Hkv, splits*GROUP] (log2) in [1, GROUP] tiles, split-major; grid (Hkv,
    splits, 1)."""
    group, bn, d, splits = ctx.int("GROUP"), ctx.int("BN"), ctx.int("D"), ctx.int("NUM_KV_SPLITS")
    s_kv = DECODE_POSITION + 1  # every split gets keys (an empty one stores lse -1e30)
    cache = _round_up(s_kv, bn)
    q = randn(KV_HEADS, group, d, dtype=F16, seed=1)
    k, v = (randn(KV_HEADS, cache, d, dtype=F16, seed=s) for s in (2, 3))
    att = torch.zeros(KV_HEADS, splits * group, d, device="cuda", dtype=F16)
    lse = torch.zeros(KV_HEADS, splits * group, device="cuda")
    scale = _f16_scale(d)
    kernel = ctx.kernel(allow_unchecked=True)
    args = (
        view(q),
        view(k),
        view(v),
        view(att).partition((1, group, d)),
        view(lse).partition((1, group)),
        scale,
        _position(DECODE_POSITION),
    )
    kernel(*args, sync=True)
    tiles = -(-s_kv // bn)
    per_split = -(-tiles // splits) * bn  # the kernel's tiles_per_split, in keys
    bounds = [(s * per_split, min((s + 1) * per_split, s_kv)) for s in range(splits)]
    expected_att, expected_lse = _split_attention(q, k, v, scale, bounds)
    expected_att = expected_att.reshape(KV_HEADS, splits * group, d)
    expected_lse = expected_lse.reshape(KV_HEADS, splits * group)
    return Launched(
        [
            Compared("att_out", att, expected_att, _attention_tolerance(v, expected_att)),
            Compared("lse_out", lse, expected_lse, _lse_tolerance(expected_lse)),
        ],
        ours=lambda: kernel(*args),
        reference=_split_decode_timer(q[None], k[None], v[None], scale, s_kv),
        note=f"{KV_HEADS}x{group} heads at position {DECODE_POSITION}, splits {bounds}",
    )


def _splitk_merge(ctx: CaseContext) -> Launched:
    """Merge of split-K partials: w[g, s] = 2^(lse[s*G+g] - max) / sum, out[h, g] =
    sum_s w * att[h, s*G+g] in f32, f16 out [Hkv, GROUP, D] in [1, GROUP, CHUNK_D] tiles;
    grid (Hkv, 1, D/CHUNK_D)."""
    group, d, chunk = ctx.int("GROUP"), ctx.int("D"), ctx.int("CHUNK_D")
    splits, ns_group = ctx.int("NUM_KV_SPLITS"), ctx.int("NS_GROUP")
    partial = (randn(KV_HEADS, ns_group, d, seed=1) * 0.5).half()  # attention outputs
    lse = randn(KV_HEADS, ns_group, seed=2) * 2 + 6  # log2-sum-exps of decode splits
    out = torch.zeros(KV_HEADS, group, d, device="cuda", dtype=F16)
    kernel = ctx.kernel(allow_unchecked=True)
    args = (view(partial), view(lse), view(out).partition((1, group, chunk)))
    kernel(*args, sync=True)
    weights = torch.softmax(lse.double().view(KV_HEADS, splits, group) * math.log(2), dim=1)
    parts = partial.double().view(KV_HEADS, splits, group, d)
    expected = (weights[..., None] * parts).sum(dim=1)
    timed_parts = partial.float().view(KV_HEADS, splits, group, d)
    timed_lse = lse.view(KV_HEADS, splits, group) * math.log(2)
    return Launched(
        [
            Compared("out", out, expected, _f16_tolerance(expected))
        ],  # f16 rounding of the f32 weighted sum
        ours=lambda: kernel(*args),
        reference=lambda: (torch.softmax(timed_lse, dim=1)[..., None] * timed_parts).sum(dim=1),
        note=f"{KV_HEADS} kv heads x {splits} splits x {group} heads",
    )


def _prefill_gqa_lpt(ctx: CaseContext) -> Launched:
    """Raw-pointer GQA prefill with LPT scheduling: views q/out [q_len, Hq, D] and k/v
    [Hkv, kv_len, D] built in the kernel (so K/V are exactly kv_len long: a multiple of BN, as
    EVEN_K needs); 1-D host grid of num_q_blocks * num_head_groups blocks."""
    bm, bn, d, group = ctx.int("BM"), ctx.int("BN"), ctx.int("D"), ctx.int("GROUP")
    q_len, start = 200, 56  # 200 queries: the last q block partial
    kv_len = _round_up(start + q_len, bn)
    start = kv_len - q_len
    q = randn(q_len, Q_HEADS, d, dtype=F16, seed=1)
    k, v = (randn(KV_HEADS, kv_len, d, dtype=F16, seed=s) for s in (2, 3))
    out = torch.zeros_like(q)
    q_blocks, head_groups, swizzle = -(-q_len // bm), Q_HEADS // group, 2
    scale = 1 / math.sqrt(d)
    kernel = ctx.kernel(allow_unchecked=True)
    args = (
        view(q),
        view(k),
        view(v),
        view(out),
        scale,
        GROUP_SIZE,
        q_len,
        kv_len,
        start,
        q_blocks,
        head_groups,
        swizzle,
        head_groups // swizzle,
        head_groups % swizzle,
    )
    grid = (q_blocks * head_groups, 1, 1)
    kernel(*args, grid=grid, sync=True)
    expected = _causal_gqa(q, k, v, scale, kv_len, start)
    return Launched(
        [Compared("out", out, expected, _attention_tolerance(v, expected))],
        ours=lambda: kernel(*args, grid=grid),
        reference=_sdpa_timer(q, k, v, scale, kv_len, start),
        note=f"{q_len} queries after {start}, kv_len {kv_len}, grid {grid}",
    )


def _strided(tensor: torch.Tensor) -> tuple[object, ...]:
    """A raw-pointer tensor argument as the kernel spells it: pointer, every extent, every
    stride but the last (which is 1)."""
    return (view(tensor), *tensor.shape, *tensor.stride()[:-1])


def _attention_decode_grouped(ctx: CaseContext) -> Launched:
    """Raw-pointer split-K decode partials: q [B, Hkv, NQ, D], k/v [B, Hkv, cache, D], split t
    covers keys [t*KV_LEN_PER_SPLIT, min((t+1)*KV_LEN_PER_SPLIT, s_kv)); att [B, Hkv, NQ,
    splits, D], lse [B, Hkv, NQ, splits] (log2); s_kv read from a device i32; host grid
    (B, Hkv, splits)."""
    d, per_split = ctx.int("HEAD_DIM"), ctx.int("KV_LEN_PER_SPLIT")
    group, splits = ctx.int("NUM_Q_HEAD_PER_KV"), ctx.int("NUM_KV_SPLITS")
    dtype = ctx.dtype("E")
    batch = 2
    cache = per_split * splits  # every split's tiles load inside the cache
    s_kv = cache - per_split + 9  # every split has keys (an empty one stores lse -inf), the last 9
    q = randn(batch, KV_HEADS, group, d, dtype=dtype, seed=1)
    k, v = (randn(batch, KV_HEADS, cache, d, dtype=dtype, seed=s) for s in (2, 3))
    att = torch.zeros(batch, KV_HEADS, group, splits, d, device="cuda", dtype=dtype)
    lse = torch.zeros(batch, KV_HEADS, group, splits, device="cuda")
    s_kv_device = torch.tensor([s_kv], device="cuda", dtype=torch.int32)
    scale = 1 / math.sqrt(d)
    kernel = ctx.kernel(allow_unchecked=True)
    args = (
        *_strided(q),
        *_strided(k),
        *_strided(v),
        *_strided(att),
        *_strided(lse),
        scale,
        view(s_kv_device),
    )
    grid = (batch, KV_HEADS, splits)
    kernel(*args, grid=grid, sync=True)
    bounds = [(t * per_split, min((t + 1) * per_split, s_kv)) for t in range(splits)]
    expected_att, expected_lse = _split_attention(q, k, v, scale, bounds)
    expected_att = expected_att.transpose(-3, -2)
    expected_lse = expected_lse.transpose(-1, -2)
    note = f"B {batch}, {KV_HEADS}x{group} heads, s_kv {s_kv}, splits {bounds}"
    if ctx.int("QUERY_GROUP_TILE_SIZE") != group:
        note += "; QUERY_GROUP_TILE_SIZE != NUM_Q_HEAD_PER_KV: only the first rows are loaded"
    return Launched(
        [
            Compared("att", att, expected_att, _attention_tolerance(v, expected_att)),
            Compared("lse", lse, expected_lse, _lse_tolerance(expected_lse)),
        ],
        ours=lambda: kernel(*args, grid=grid),
        reference=_split_decode_timer(q, k, v, scale, s_kv),
        note=note,
    )


# ---- fused QK norm + RoPE + KV cache ---------------------------------------------------------


def _norm_rope(x: torch.Tensor, w: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """rope(rmsnorm_D(x) * w): the norm is not rounded before the rotation; f64."""
    return _rotate(_rms(x.float(), w, EPS), theta)


def _norm_rope_timer(x: torch.Tensor, w: torch.Tensor, theta: torch.Tensor) -> Timer:
    """torch doing the same norm and rotation in f16 (for timing)."""
    rotate = _rope_timer(x, theta)
    return lambda: (_torch_rms(x, w), rotate())


def _qk_norm_rope_kv_prefill(ctx: CaseContext) -> Launched:
    """Raw-pointer prefill fusion: q heads -> q_out[s, h] = rope(norm(q) * q_weight); kv heads ->
    k_cache[h, start + s] = rope(norm(k) * k_weight), v_cache[h, start + s] = v; caches
    [Hkv, MAX_SEQ, D]; host grid (seq_len, Hq + Hkv, 1)."""
    d, half, max_seq = ctx.int("D"), ctx.int("HALF_D"), ctx.int("MAX_SEQ")
    seq = PREFILL_TOKENS
    start = min(PREFILL_START, max_seq - seq)  # positions stay inside the cache
    q = randn(seq, Q_HEADS, d, dtype=F16, seed=1)
    k, v = (randn(seq, KV_HEADS, d, dtype=F16, seed=s) for s in (2, 3))
    q_weight, k_weight = (randn(d, dtype=F16, seed=s) for s in (4, 5))
    inv_freq = _inv_freq(half)
    q_out = torch.zeros_like(q)
    k_cache0, v_cache0 = (randn(KV_HEADS, max_seq, d, dtype=F16, seed=s) for s in (6, 7))
    k_cache, v_cache = k_cache0.clone(), v_cache0.clone()
    kernel = ctx.kernel(allow_unchecked=True)
    args = (
        *(view(t) for t in (q, k, v, q_weight, k_weight, inv_freq, q_out, k_cache, v_cache)),
        EPS,
        start,
        seq,
        Q_HEADS,
        KV_HEADS,
    )
    grid = (seq, Q_HEADS + KV_HEADS, 1)
    kernel(*args, grid=grid, sync=True)
    theta = _theta(torch.arange(start, start + seq, device="cuda"), inv_freq)[:, None, :]
    expected_q = _norm_rope(q, q_weight, theta)
    expected_k, expected_v = k_cache0.double(), v_cache0.clone()
    expected_k[:, start : start + seq] = _norm_rope(k, k_weight, theta).transpose(0, 1)
    expected_v[:, start : start + seq] = v.transpose(0, 1)
    return Launched(
        [
            Compared(
                "q_out", q_out, expected_q, _f16_tolerance(expected_q)
            ),  # f16 rounding of f32 norm + rotation
            Compared(
                "k_cache", k_cache, expected_k, _f16_tolerance(expected_k)
            ),  # rows written as q_out; the rest exact
            Compared("v_cache", v_cache, expected_v, 0.0),  # a copy: exact
        ],
        ours=lambda: kernel(*args, grid=grid),
        reference=_norm_rope_timer(torch.cat((q, k), dim=1), q_weight, theta),
        note=f"{seq} tokens from position {start}, {Q_HEADS} q + {KV_HEADS} kv heads of {d}",
    )


def _qk_norm_rope_kv_decode(ctx: CaseContext) -> Launched:
    """Raw-pointer decode fusion over one token's packed qkv [(Hq + 2 Hkv) * D] (q heads, then
    k heads, then v heads): q_out[h] (a [Hq + Hkv, D] buffer; only q rows written), k_cache[h,
    pos] and v_cache[h, pos] at the device position; host grid (Hq + Hkv, 2, 1), axis 1 the
    half."""
    d, half, max_seq = ctx.int("D"), ctx.int("HALF_D"), ctx.int("MAX_SEQ")
    pos = max_seq - 28
    qkv = randn((Q_HEADS + 2 * KV_HEADS) * d, dtype=F16, seed=1)
    q = qkv[: Q_HEADS * d].view(Q_HEADS, d)
    k = qkv[Q_HEADS * d : (Q_HEADS + KV_HEADS) * d].view(KV_HEADS, d)
    v = qkv[(Q_HEADS + KV_HEADS) * d :].view(KV_HEADS, d)
    q_weight, k_weight = (randn(d, dtype=F16, seed=s) for s in (2, 3))
    inv_freq = _inv_freq(half)
    q_out0 = randn(Q_HEADS + KV_HEADS, d, dtype=F16, seed=4)  # rows past Hq stay as they are
    k_cache0, v_cache0 = (randn(KV_HEADS, max_seq, d, dtype=F16, seed=s) for s in (5, 6))
    q_out, k_cache, v_cache = q_out0.clone(), k_cache0.clone(), v_cache0.clone()
    kernel = ctx.kernel(allow_unchecked=True)
    args = (
        *(view(t) for t in (qkv, q_weight, k_weight, inv_freq, q_out, k_cache, v_cache)),
        _position(pos),
        EPS,
        Q_HEADS,
        KV_HEADS,
    )
    grid = (Q_HEADS + KV_HEADS, 2, 1)
    kernel(*args, grid=grid, sync=True)
    theta = _theta(torch.tensor([pos], device="cuda"), inv_freq)
    expected_q, expected_k, expected_v = q_out0.double(), k_cache0.double(), v_cache0.clone()
    expected_q[:Q_HEADS] = _norm_rope(q, q_weight, theta)
    expected_k[:, pos] = _norm_rope(k, k_weight, theta)
    expected_v[:, pos] = v
    return Launched(
        [
            Compared(
                "q_out", q_out, expected_q, _f16_tolerance(expected_q)
            ),  # f16 rounding of f32 norm + rotation
            Compared(
                "k_cache", k_cache, expected_k, _f16_tolerance(expected_k)
            ),  # as q_out; the rest exact
            Compared("v_cache", v_cache, expected_v, 0.0),  # a copy
        ],
        ours=lambda: kernel(*args, grid=grid),
        reference=_norm_rope_timer(torch.cat((q, k)), q_weight, theta),
        note=f"one token at position {pos}, {Q_HEADS} q + {KV_HEADS} kv heads of {d}",
    )


# ---- MoE and KVBM: no partitioned output and no raw pointer ----------------------------------

NO_GRID_NOTE = (
    "no partitioned output and no raw-pointer param (device pointers come in i64 tensors): "
    "the launch passes the grid, which needs host-grid support for such entries"
)


def _pointer_table(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    return torch.tensor([t.data_ptr() for t in tensors], device="cuda", dtype=torch.int64)


def _meta_table(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """moe's descriptor rows: [rows, cols, row stride, 0 x 5] per 2-D tensor."""
    rows = [[t.shape[0], t.shape[1], t.stride(0), 0, 0, 0, 0, 0] for t in tensors]
    return torch.tensor(rows, device="cuda", dtype=torch.int32)


def _grouped_matmul(a: Sequence[torch.Tensor], b: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    return [x @ y for x, y in zip(a, b, strict=True)]


def _group_gemm(ctx: CaseContext) -> Launched:
    """Persistent grouped GEMM over expert descriptor tables: C_g = f16(A_g [M, K] @ B_g [K, N])
    with f32 accumulation (B read as [K, N] row-major despite the "nt" name); NUM_SM blocks
    stride over the concatenated tile grids, so the host grid is (NUM_SM, 1, 1). Extents must
    be multiples of 16 (assumed); K a multiple of BK keeps every k tile inside A and B."""
    num_sm = ctx.int("NUM_SM")
    shapes = ((48, 256, 512), (128, 128, 256), (16, 256, 512), (80, 64, 1024))  # (M, N, K)
    a = [randn(m, k, dtype=F16, seed=10 + g) for g, (m, _, k) in enumerate(shapes)]
    b = [(randn(k, n, seed=20 + g) / math.sqrt(k)).half() for g, (_, n, k) in enumerate(shapes)]
    c = [torch.zeros(m, n, device="cuda", dtype=F16) for m, n, _ in shapes]
    kernel = ctx.kernel(allow_unchecked=True)
    args = (
        *(view(_pointer_table(ts)) for ts in (a, b, c)),
        *(view(_meta_table(ts)) for ts in (a, b, c)),
        len(shapes),
    )
    grid = (num_sm, 1, 1)
    kernel(*args, grid=grid, sync=True)
    expected = _grouped_matmul([x.double() for x in a], [y.double() for y in b])
    return Launched(
        [
            Compared(f"c[{g}]", c[g], e, _f16_tolerance(e))  # f16 rounding of O(1) sums
            for g, e in enumerate(expected)
        ],
        ours=lambda: kernel(*args, grid=grid),
        reference=lambda: _grouped_matmul(a, b),
        note=f"experts (M, N, K) {shapes}; {NO_GRID_NOTE}",
    )


KVBM_SHAPE = (3, KV_HEADS, 4, 2, 32, 64)  # blocks, heads, layers, offsets (K, V), tokens, hd


def _kvbm_buffers(
    ctx: CaseContext,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[object, ...], tuple[int, int, int]]:
    """KV blocks in both layouts of the generics (stacked NHD, contiguous universal): stacked
    chunks [nt, nh, hd], one per (block, layer, offset), reached through a shuffled i64 pointer
    table (chunk i of the table is stacked[order[i]]); contiguous blocks [nh, nl, no, nt, hd], one
    pointer each. Returns (stacked, order, contiguous, args, grid): grid (1, nt/tile tokens,
    hd/tile head dim), each block looping over every (block, head, layer, offset)."""
    blocks, nh, nl, no, nt, hd = KVBM_SHAPE
    tile = ctx.shape("STACKED_TILE")  # [1, 1, tokens, 1, head dim]
    chunks = blocks * nl * no
    stacked = randn(chunks, nt, nh, hd, dtype=F16, seed=1)
    contiguous = randn(blocks, nh, nl, no, nt, hd, dtype=F16, seed=2)
    order = torch.randperm(chunks, device="cuda", generator=_generator(3))
    chunk_bytes = nt * nh * hd * stacked.element_size()
    stacked_ptrs = order.long() * chunk_bytes + stacked.data_ptr()
    contiguous_ptrs = _pointer_table(list(contiguous))
    args = (blocks, view(stacked_ptrs), view(contiguous_ptrs), nh, nl, no, nt, hd)
    grid = (1, -(-nt // tile[2]), -(-hd // tile[4]))
    return stacked, order, contiguous, args, grid


def _stacked_as_universal(stacked: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """contig[block][h, l, o, t, d] = chunk(block, l, o)[t, h, d]."""
    blocks, nh, nl, no, nt, hd = KVBM_SHAPE
    return stacked[order].view(blocks, nl, no, nt, nh, hd).permute(0, 4, 1, 2, 3, 5)


def _copy_stacked_to_contiguous(ctx: CaseContext) -> Launched:
    stacked, order, contiguous, args, grid = _kvbm_buffers(ctx)
    kernel = ctx.kernel(allow_unchecked=True)
    kernel(*args, grid=grid, sync=True)
    scratch = torch.empty_like(contiguous)
    return Launched(
        [
            Compared("contiguous", contiguous, _stacked_as_universal(stacked, order), 0.0)
        ],  # a copy: exact
        ours=lambda: kernel(*args, grid=grid),
        reference=lambda: scratch.copy_(_stacked_as_universal(stacked, order)),
        note=f"(blocks, nh, nl, no, nt, hd) {KVBM_SHAPE}, grid {grid}; {NO_GRID_NOTE}",
    )


def _copy_contiguous_to_stacked(ctx: CaseContext) -> Launched:
    stacked, order, contiguous, args, grid = _kvbm_buffers(ctx)
    nh, nt, hd = KVBM_SHAPE[1], KVBM_SHAPE[4], KVBM_SHAPE[5]
    kernel = ctx.kernel(allow_unchecked=True)
    kernel(*args, grid=grid, sync=True)
    chunks = contiguous.permute(0, 2, 3, 4, 1, 5).reshape(-1, nt, nh, hd)
    expected = torch.empty_like(stacked)
    expected[order] = chunks  # every chunk is written
    scratch = torch.empty_like(stacked)
    return Launched(
        [Compared("stacked", stacked, expected, 0.0)],  # a copy: exact
        ours=lambda: kernel(*args, grid=grid),
        reference=lambda: scratch.index_copy_(0, order, chunks),
        note=f"(blocks, nh, nl, no, nt, hd) {KVBM_SHAPE}, grid {grid}; {NO_GRID_NOTE}",
    )


CASES: dict[str, CaseFn] = {
    KERNELS + "argmax.rs::argmax_blocks_f16": _argmax_blocks,
    KERNELS + "argmax.rs::argmax_reduce_blocks_to_u32": _argmax_reduce,
    KERNELS + "argmax.rs::lm_head_argmax_blocks_f16": _lm_head_argmax,
    KERNELS + "attention.rs::flash_attn_causal_seq_dynpos_f16": _flash_attn_causal_seq_dynpos,
    KERNELS + "attention.rs::flash_attn_causal_seq_f16": _flash_attn_causal_seq,
    KERNELS + "attention.rs::fmha_causal": _fmha_causal,
    KERNELS + "attention.rs::fmha_decode_gqa_split": _decode_gqa_split,
    KERNELS + "attention.rs::fmha_prefill_causal": _fmha_prefill_causal,
    KERNELS + "attention.rs::fmha_prefill_gqa": _fmha_prefill_gqa,
    KERNELS + "attention.rs::splitk_reduce_merge": _splitk_merge,
    KERNELS + "embeddings.rs::embedding_batch_f16": _embedding,
    EXPERIMENTAL + "attention.rs::attention_decode_kernel_grouped": _attention_decode_grouped,
    EXPERIMENTAL + "attention.rs::fmha_prefill_gqa_lpt": _prefill_gqa_lpt,
    EXPERIMENTAL + "fused_transformer.rs::qk_norm_rope_kv_decode_raw_f16": _qk_norm_rope_kv_decode,
    EXPERIMENTAL
    + "fused_transformer.rs::qk_norm_rope_kv_prefill_raw_f16": _qk_norm_rope_kv_prefill,
    EXPERIMENTAL + "kvbm.rs::copy_contiguous_to_stacked_f16": _copy_contiguous_to_stacked,
    EXPERIMENTAL + "kvbm.rs::copy_stacked_to_contiguous_f16": _copy_stacked_to_contiguous,
    EXPERIMENTAL + "moe.rs::group_gemm_f16_nt_desc": _group_gemm,
    EXPERIMENTAL + "norms.rs::add_rms_norm_decode_raw_f16": _add_rms_norm_decode_raw,
    KERNELS + "kv_cache.rs::kv_cache_update_seq_dynpos_f16": _kv_cache_update_dynpos,
    KERNELS + "kv_cache.rs::kv_cache_update_seq_f16": _kv_cache_update,
    KERNELS + "norms.rs::add_rms_norm_f16": _add_rms_norm,
    KERNELS + "norms.rs::qk_norm_f16": _qk_norm,
    KERNELS + "norms.rs::rms_norm_f16": _rms_norm,
    KERNELS + "pointwise.rs::add_2d_f16": _add_2d,
    KERNELS + "pointwise.rs::gather_row_f16": _gather_row,
    KERNELS + "pointwise.rs::silu_mul_2d_f16": _silu_mul,
    KERNELS + "positional.rs::qk_rope_dynpos_f16": _qk_rope_dynpos,
    KERNELS + "positional.rs::rope_seq_dynpos_f16": _rope_seq_dynpos,
    KERNELS + "positional.rs::rope_seq_f16": _rope_seq,
}
