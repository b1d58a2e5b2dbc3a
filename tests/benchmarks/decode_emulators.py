"""Torch emulations of rust_examples/decoder.rs's kernels and of cutile-kernels' Qwen3 kernels,
as they compute (rounding to the element type where a kernel converts, f32 elsewhere).

Pure torch, no compiler: the GPU host imports it too (tests/gpu/test_decoder_gpu.py compares
each kernel with its emulation); tests/benchmarks/decode_emulation.py runs the decoder's host
on the CPU with them. Each emulator takes the kernel's generics and its arguments, whose
`.layout.owner` is the tensor holding the memory.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch


def tensor(arg: object) -> torch.Tensor:
    return arg.layout.owner  # type: ignore[attr-defined]


# ---- the kernels, as rust_examples/decoder.rs computes them --------------------------------


def _e(x: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """Round f32 values to `like`'s element type and back (a `convert_tile` to E)."""
    return x.to(like.dtype).float()


def _embedding(g, out, ids, table) -> None:
    tensor(out).copy_(tensor(table)[tensor(ids).long()])


def _norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    inv = torch.rsqrt((x * x).sum(-1, keepdim=True) / x.shape[-1] + eps)
    return _e(w.float() * _e(x * inv, w), w)


def _rms_norm(g, out, x, w, eps) -> None:
    o = tensor(out)
    o.copy_(_norm(tensor(x).float(), tensor(w), eps).to(o.dtype))


def _add_rms_norm(g, res_out, out, res, part, w, eps) -> None:
    r0 = tensor(res)
    r = _e(r0.float() + _e(tensor(part).sum(0), r0), r0)
    tensor(res_out).copy_(r.to(r0.dtype))
    tensor(out).copy_(_norm(r, tensor(w), eps).to(r0.dtype))


def _split_ranges(k: int, bk: int, parts: int) -> list[tuple[int, int]]:
    tiles = -(-k // bk)
    per = -(-tiles // parts)
    ranges = []
    for s in range(parts):
        first = min(s * per, tiles)
        ranges.append((first * bk, min(first + per, tiles) * bk))
    return ranges


def _projection(g, part, x, w) -> None:
    p, xs, ws = tensor(part), tensor(x).float(), tensor(w).float()
    for s, (lo, hi) in enumerate(_split_ranges(ws.shape[1], int(g["BK"]), p.shape[0])):
        p[s].copy_((xs[:, lo:hi] @ ws[:, lo:hi].T).to(p.dtype))


def _swiglu(g, act, x, w) -> None:
    a, xs, ws = tensor(act), tensor(x).float(), tensor(w).float()
    gate, up = _e(xs @ ws[0].T, a), _e(xs @ ws[1].T, a)
    silu = _e(gate / (1 + torch.exp(-gate)), a)
    a.copy_((silu * up).to(a.dtype))


def _rope(x: torch.Tensor, c: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    lo, hi = x[..., :half], x[..., half:]
    c, s = c.float(), s.float()
    first = _e(_e(lo * c, c) - _e(hi * s, c), c)
    second = _e(_e(hi * c, c) + _e(lo * s, c), c)
    return torch.cat((first, second), -1)


def _qkv_rope(g, q_out, k_cache, v_cache, qkv, qw, kw, cos, sin, pos, tokens, eps) -> None:
    groups, hkv = int(g["G"]), int(g["HKV"])
    q, kc, vc, part = tensor(q_out), tensor(k_cache), tensor(v_cache), tensor(qkv)
    qw, kw, cos, sin = tensor(qw), tensor(kw), tensor(cos), tensor(sin)
    d = kc.shape[-1]
    start = int(tensor(pos)[0])
    for bh in range(q.shape[0]):
        group = bh % hkv
        for p in range(tokens):
            t, position = (bh // hkv) * tokens + p, start + p
            row = _e(part[:, t].sum(0), q)
            heads = row[group * groups * d : (group + 1) * groups * d].view(groups, d)
            c, s = cos[position], sin[position]
            q[bh, p] = _rope(_norm(heads, qw, eps), c, s).reshape(-1).to(q.dtype)
            k = row[(hkv * groups + group) * d :][:d]
            kc[bh, position] = _rope(_norm(k[None], kw, eps), c, s)[0].to(kc.dtype)
            v = row[(hkv * groups + hkv + group) * d :][:d]
            vc[bh, position] = v.to(vc.dtype)


def _attention_partial(g, acc_out, m_out, l_out, q, k, v, pos, scale_log2) -> None:
    groups, pt, bn = int(g["G"]), int(g["PT"]), int(g["BN"])
    acc, mo, lo = tensor(acc_out), tensor(m_out), tensor(l_out)
    qs, ks, vs = tensor(q), tensor(k), tensor(v)
    rows, d = pt * groups, ks.shape[-1]
    splits = mo.shape[1] // rows
    start, tokens = int(tensor(pos)[0]), qs.shape[1]
    for bh in range(qs.shape[0]):
        qrows = torch.zeros(rows, d)
        qrows[: tokens * groups] = qs[bh].float().reshape(tokens * groups, d)
        row_pos = start + torch.arange(rows) // groups
        for s, (lo_k, hi_k) in enumerate(_split_ranges(start + tokens, bn, splits)):
            keys = torch.arange(lo_k, hi_k)
            scores = (qrows @ ks[bh, lo_k:hi_k].float().T) * scale_log2
            visible = keys[None, :] <= row_pos[:, None]
            scores = torch.where(visible, scores, torch.tensor(-1e30))
            m = scores.max(-1).values if hi_k > lo_k else torch.full((rows,), -1e30)
            p = torch.where(visible, torch.exp2(scores - m[:, None]), torch.tensor(0.0))
            sl = slice(s * rows, (s + 1) * rows)
            mo[bh, sl], lo[bh, sl] = m, p.sum(-1)
            acc[bh, sl] = _e(p, vs) @ vs[bh, lo_k:hi_k].float()


def _attention_merge(g, out, acc, m, sums) -> None:
    groups, pt = int(g["G"]), int(g["PT"])
    o, a, ms, ls = tensor(out), tensor(acc), tensor(m), tensor(sums)
    rows = pt * groups
    for bh in range(o.shape[0]):
        mm = ms[bh].view(-1, rows)
        top = mm.max(0).values
        w = torch.exp2(mm - top)
        total = (w * ls[bh].view(-1, rows)).sum(0)
        merged = (w[..., None] * a[bh].view(-1, rows, a.shape[-1])).sum(0) / total[:, None]
        tokens = o.shape[1]
        o[bh] = merged[: tokens * groups].reshape(tokens, -1).to(o.dtype)


def _argmax_partial(g, best, index, logits) -> None:
    bv = int(g["BV"])
    b, i, x = tensor(best), tensor(index), tensor(logits)
    for j in range(b.shape[1]):
        block = x[:, j * bv : (j + 1) * bv]
        top = block.max(-1)
        b[:, j] = top.values
        i[:, j] = (block == top.values[:, None]).int().argmax(-1) + j * bv


def _greedy_step(g, token, pos_out, best, index, pos_in, advance) -> None:
    b, i = tensor(best), tensor(index)
    top = b.max(-1).values
    candidates = torch.where(b == top[:, None], i, torch.tensor(2**31 - 1, dtype=torch.int32))
    tensor(token).copy_(candidates.min(-1).values)
    tensor(pos_out).copy_(tensor(pos_in) + advance)


def _advance_position(g, pos_out, pos_in, advance) -> None:
    tensor(pos_out).copy_(tensor(pos_in) + advance)


# ---- cutile-kernels (cutile-rs), as their sources compute them -----------------------------


def _cutile_embedding(g, token_ids, table, out) -> None:
    tensor(out).copy_(tensor(table)[tensor(token_ids).long()])


def _cutile_qk_norm(g, q, k, q_weight, k_weight, out, eps, num_q_rows) -> None:
    o = tensor(out)
    for rows, x, w in ((slice(0, num_q_rows), q, q_weight), (slice(num_q_rows, None), k, k_weight)):
        xs = tensor(x).float()
        inv = torch.rsqrt((xs * xs).sum(-1, keepdim=True) / xs.shape[-1] + eps)
        o[rows] = (xs * inv * tensor(w).float()).to(o.dtype)


def _cutile_qk_rope(g, q, k, inv_freq, position_start, out, num_q_heads) -> None:
    o, x = tensor(out), torch.cat((tensor(q), tensor(k)), 1).float()
    half = x.shape[-1] // 2
    positions = int(tensor(position_start)[0]) + torch.arange(x.shape[0])
    theta = (positions.float()[:, None] * tensor(inv_freq)[None, :])[:, None, :]
    c, s = torch.cos(theta), torch.sin(theta)
    lo, hi = x[..., :half], x[..., half:]
    o.copy_(torch.cat((lo * c - hi * s, hi * c + lo * s), -1).to(o.dtype))


def _cutile_kv_update(g, new_k, new_v, k_cache, v_cache, position_start, seq_len) -> None:
    start = int(tensor(position_start)[0])
    for cache, new in ((tensor(k_cache), tensor(new_k)), (tensor(v_cache), tensor(new_v))):
        cache[:, start : start + seq_len] = new[:seq_len].transpose(0, 1)


def _cutile_decode_split(g, q, k, v, att_out, lse_out, qk_scale, position_start) -> None:
    groups, bn, splits = int(g["GROUP"]), int(g["BN"]), int(g["NUM_KV_SPLITS"])
    att, lse = tensor(att_out), tensor(lse_out)
    keys = int(tensor(position_start)[0]) + 1
    scale = float(torch.tensor(qk_scale, dtype=torch.float16)) / math.log(2)
    tiles = -(-keys // bn)
    per = -(-tiles // splits)
    for h in range(att.shape[0]):
        qs = tensor(q)[h].float()
        for s in range(splits):
            lo, hi = s * per * bn, min((s + 1) * per, tiles) * bn
            rows = slice(s * groups, (s + 1) * groups)
            hi = min(hi, keys)
            if lo >= hi:
                att[h, rows], lse[h, rows] = 0.0, -1e30
                continue
            scores = qs @ tensor(k)[h, lo:hi].float().T * scale
            m = scores.max(-1).values
            p = torch.exp2(scores - m[:, None])
            att[h, rows] = ((_e(p, att) @ tensor(v)[h, lo:hi].float()) / p.sum(-1)[:, None]).to(
                att.dtype
            )
            lse[h, rows] = m + torch.log2(p.sum(-1))


def _cutile_merge(g, att_partial, lse_partial, out) -> None:
    groups, splits = int(g["GROUP"]), int(g["NUM_KV_SPLITS"])
    att, lse, o = tensor(att_partial).float(), tensor(lse_partial), tensor(out)
    heads, d = att.shape[0], att.shape[-1]
    weights = torch.softmax(lse.view(heads, splits, groups) * math.log(2), 1)
    merged = (weights[..., None] * att.view(heads, splits, groups, d)).sum(1)
    o.copy_(merged.to(o.dtype))


def _cutile_silu_mul(g, out, gate, up) -> None:
    o, gt, ut = tensor(out), tensor(gate).float(), tensor(up).float()
    o.copy_((torch.sigmoid(gt) * gt * ut).to(o.dtype))


def _cutile_lm_head_argmax(g, weights, hidden, block_max, block_idx, vocab_size) -> None:
    logits = tensor(weights).float() @ tensor(hidden)[0].float()
    best, index = tensor(block_max), tensor(block_idx)
    rows = 64
    for b in range(best.shape[0]):
        block = logits[b * rows : min((b + 1) * rows, vocab_size)]
        best[b] = block.max()
        index[b] = int((block == block.max()).int().argmax()) + b * rows


def _cutile_argmax_reduce(g, block_max, block_idx, out, num_blocks) -> None:
    best, index = tensor(block_max)[:num_blocks], tensor(block_idx)[:num_blocks]
    tensor(out)[0] = index[best == best.max()].min()


EMULATORS: dict[str, Callable[..., None]] = {
    "embedding": _embedding,
    "rms_norm_hf": _rms_norm,
    "add_rms_norm_hf": _add_rms_norm,
    "add_rms_norm_row": _add_rms_norm,
    "gemv": _projection,
    "linear": _projection,
    "gemv_swiglu": _swiglu,
    "linear_swiglu": _swiglu,
    "qkv_rope": _qkv_rope,
    "attention_partial": _attention_partial,
    "attention_merge": _attention_merge,
    "argmax_partial": _argmax_partial,
    "greedy_step": _greedy_step,
    "advance_position": _advance_position,
    "embedding_batch_f16": _cutile_embedding,
    "qk_norm_f16": _cutile_qk_norm,
    "qk_rope_dynpos_f16": _cutile_qk_rope,
    "kv_cache_update_seq_dynpos_f16": _cutile_kv_update,
    "fmha_decode_gqa_split": _cutile_decode_split,
    "splitk_reduce_merge": _cutile_merge,
    "silu_mul_2d_f16": _cutile_silu_mul,
    "lm_head_argmax_blocks_f16": _cutile_lm_head_argmax,
    "argmax_reduce_blocks_to_u32": _cutile_argmax_reduce,
}
