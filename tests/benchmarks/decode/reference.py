"""The torch reference: the same Qwen3 model, with Hugging Face's numerics, in plain torch ops.

It reads the same fused weights and the same rotary table as ours, and keeps a static KV cache
[layers, B, KV heads, SC, D] (its own, or ours shared for benchmarks that cannot hold two).
`forward` runs P tokens per sequence from a position (prefill, or an eager decode step
attending only to the cached prefix); `DecodeGraph` captures one decode step (embedding
through greedy argmax, the position and token advanced on the device) in a
torch.cuda.CUDAGraph, attending to the whole cache under a mask, as static-cache decoding
does.

Hugging Face numerics, kept exactly: RMSNorm as w * bf16(x * rsqrt(mean(x^2) + eps)) in f32;
RoPE as q * cos + rotate_half(q) * sin in bf16 with bf16 cos/sin; SiLU and the gate product
in bf16; residual adds in bf16; projections rounded to bf16 (f32 accumulation).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from tests.benchmarks.decode.config import ModelConfig
from tests.benchmarks.decode.weights import lm_head

if TYPE_CHECKING:
    import torch


def rope_tables(model: ModelConfig, positions: int, dtype: torch.dtype, device: str):
    """cos, sin [positions, D / 2] rounded to `dtype`, as Hugging Face's Qwen3 rotary
    embedding computes them (inverse frequencies in f32, angle = f32 position * inv_freq)."""
    import torch

    dim = model.head_dim
    exponents = torch.arange(0, dim, 2, dtype=torch.int64).to(dtype=torch.float) / dim
    inv_freq = (1.0 / (model.rope_theta**exponents)).to(device)
    angles = torch.arange(positions, device=device, dtype=torch.float)[:, None] * inv_freq[None, :]
    return angles.cos().to(dtype), angles.sin().to(dtype)


def rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    import torch

    xf = x.float()
    normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return w * normed.to(x.dtype)


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Hugging Face's apply_rotary_pos_emb on x [..., P, D] with cos/sin [P, D / 2]."""
    import torch

    half = x.shape[-1] // 2
    cos, sin = torch.cat((cos, cos), -1), torch.cat((sin, sin), -1)
    rotated = torch.cat((-x[..., half:], x[..., :half]), -1)
    return (x * cos) + (rotated * sin)


class Reference:
    """The torch model; see the module docstring."""

    def __init__(
        self,
        model: ModelConfig,
        weights: Mapping[str, torch.Tensor],
        batch: int,
        cache_len: int,
        rope: tuple[torch.Tensor, torch.Tensor],
        caches: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> None:
        import torch

        self.model = model
        self.w = weights
        self.batch = batch
        self.cache_len = cache_len
        self.cos, self.sin = rope
        embed = weights["embed"]
        shape = (model.layers, batch, model.kv_heads, cache_len, model.head_dim)
        if caches is None:
            caches = (
                torch.zeros(shape, dtype=embed.dtype, device=embed.device),
                torch.zeros(shape, dtype=embed.dtype, device=embed.device),
            )
        self.k_cache, self.v_cache = (c.view(shape) for c in caches)
        self.head = lm_head(weights, model)
        self.head_f32: torch.Tensor | None = None

    # ---- the model ---------------------------------------------------------------------

    def hidden(self, ids: torch.Tensor, start: torch.Tensor, kv_len: int | None) -> torch.Tensor:
        """Final-norm hidden states [B, P, H] of tokens ids [B, P] at positions start + p
        (`start` a 1-element device tensor); attention reads cache positions < kv_len (None:
        the whole cache, masked)."""
        import torch
        import torch.nn.functional as F

        m, w = self.model, self.w
        batch, tokens = ids.shape
        positions = start.long() + torch.arange(tokens, device=ids.device)
        cos, sin = self.cos[positions], self.sin[positions]
        x = F.embedding(ids.long(), w["embed"])
        for layer in range(m.layers):
            p = f"layers.{layer}."
            h = rms_norm(x, w[p + "input_norm"], m.eps)
            qkv = F.linear(h, w[p + "qkv"])
            q, k, v = qkv.split((m.q_dim, m.kv_dim, m.kv_dim), -1)
            q = rms_norm(q.view(batch, tokens, m.heads, m.head_dim), w[p + "q_norm"], m.eps)
            k = rms_norm(k.view(batch, tokens, m.kv_heads, m.head_dim), w[p + "k_norm"], m.eps)
            q = rotate(q.transpose(1, 2), cos, sin)
            k = rotate(k.transpose(1, 2), cos, sin)
            v = v.view(batch, tokens, m.kv_heads, m.head_dim).transpose(1, 2)
            self.k_cache[layer].index_copy_(2, positions, k)
            self.v_cache[layer].index_copy_(2, positions, v)
            attn = self._attention(layer, q, positions, kv_len)
            x = x + F.linear(attn, w[p + "o"])
            h = rms_norm(x, w[p + "post_norm"], m.eps)
            gate, up = F.linear(h, w[p + "gate_up"]).chunk(2, -1)
            x = x + F.linear(F.silu(gate) * up, w[p + "down"])
        return rms_norm(x, w["final_norm"], m.eps)

    def _attention(
        self, layer: int, q: torch.Tensor, positions: torch.Tensor, kv_len: int | None
    ) -> torch.Tensor:
        """Causal GQA attention of q [B, Hq, P, D] over the cache: the G query heads of a KV
        head fold into its query rows (no repeated keys); returns [B, P, Hq * D]."""
        import torch
        import torch.nn.functional as F

        m = self.model
        batch, _, tokens, d = q.shape
        keys, values = self.k_cache[layer], self.v_cache[layer]
        if kv_len is not None:
            keys, values = keys[:, :, :kv_len], values[:, :, :kv_len]
        rows = q.reshape(batch, m.kv_heads, m.group * tokens, d)
        row_pos = positions.repeat(m.group)
        visible = torch.arange(keys.shape[2], device=q.device)[None, :] <= row_pos[:, None]
        out = F.scaled_dot_product_attention(
            rows, keys, values, attn_mask=visible, scale=1 / math.sqrt(d)
        )
        out = out.view(batch, m.kv_heads, m.group, tokens, d).permute(0, 3, 1, 2, 4)
        return out.reshape(batch, tokens, m.q_dim)

    def logits(self, hidden: torch.Tensor, exact: bool = False) -> torch.Tensor:
        """LM head on hidden [B, H]: bf16 logits as torch computes them, or (exact) f32
        logits of the upcast weights, so that greedy ties are not decided by bf16 rounding."""
        import torch.nn.functional as F

        if not exact:
            return F.linear(hidden, self.head)
        if self.head_f32 is None:
            self.head_f32 = self.head.float()
        return F.linear(hidden.float(), self.head_f32)

    def forward(
        self, ids: torch.Tensor, start: int, *, exact: bool = False, cached_only: bool = True
    ) -> torch.Tensor:
        """Eager: logits [B, V] of the last of P tokens ids [B, P] at positions start..; the
        KV cache takes their keys and values."""
        import torch

        position = torch.tensor([start], device=ids.device, dtype=torch.int32)
        kv_len = start + ids.shape[1] if cached_only else None
        hidden = self.hidden(ids, position, kv_len)
        return self.logits(hidden[:, -1], exact)


class DecodeGraph:
    """One decode step of `reference` in a CUDA graph: tok [B] and pos [1] (int32 device
    buffers) in; logits out; then tok = argmax(logits), pos += 1, on the device. Building it
    runs two warm-up steps, which advance tok and pos: set them after."""

    def __init__(self, reference: Reference, tok: torch.Tensor, pos: torch.Tensor, exact: bool):
        import torch

        self.ref, self.tok, self.pos, self.exact = reference, tok, pos, exact
        self.logits: torch.Tensor | None = None
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(2):  # warm-up outside the graph (cuBLAS handles, SDPA kernels)
                self._step()
        torch.cuda.current_stream().wait_stream(stream)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self._step()

    def _step(self) -> None:
        hidden = self.ref.hidden(self.tok[:, None], self.pos, None)
        self.logits = self.ref.logits(hidden[:, -1], self.exact)
        self.tok.copy_(self.logits.argmax(-1).to(self.tok.dtype))
        self.pos.add_(1)

    def replay(self) -> None:
        self.graph.replay()
