"""The f16 decoder: cutile-rs's cutile-kernels (the Grout engine's Qwen3 kernels) unchanged
where they fit, ours for the rest; batch 1 (their decode attention takes one sequence).

cutile-kernels is f16 throughout and the benchmark model is bf16, so this is the same model
with f16 weights, next to torch in f16. From cutile-kernels (compiled from a cutile-rs
checkout by `tests.benchmarks.decode.build --cutile-rs PATH`): the embedding, QK-norm, QK-RoPE at a
device position, the KV-cache write at a device position, split-K GQA decode attention and
its merge, SiLU-mul, the LM head fused with a block argmax, and the final argmax. Ours
(rust_examples/decoder.rs): the projections (cutile-kernels has none: Grout calls cuBLAS), the
RMSNorm and add+RMSNorm (cutile-kernels' use the hidden size as their output tile, and 2560
and 5120 are no powers of two, which Tile IR tiles must be) and the position step.

Decode state, graphs and buffers work as in `tests.benchmarks.decode.model` (double-buffered
token/position, "ab", "ba", "abba" graphs). Positions and token ids are int32 buffers that
cutile-kernels reads as u32 (the same bits). There is no batched prefill: the prompt runs
through the decode step one token at a time (cutile-kernels' prefill attention and KV write
assume a cache starting at position 0 and whole-chunk shapes; the decode step needs none).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from client_stubs import Bundle, DeviceOp, DeviceTensor, Graph, Kernel
from tests.benchmarks.decode import kernels as K
from tests.benchmarks.decode import model as M
from tests.benchmarks.decode.config import ModelConfig
from tests.benchmarks.decode.weights import lm_head

if TYPE_CHECKING:
    import torch


def u32(t: torch.Tensor) -> DeviceTensor:
    """A u32 view of an int32 tensor's memory (ids and positions below 2^31)."""
    device = t.device.index if t.device.index is not None else 0
    return DeviceTensor(t.data_ptr(), tuple(t.shape), tuple(t.stride()), "u32", device, t)


class CutileKernelsDecoder:
    """See the module docstring."""

    def __init__(
        self,
        bundle: Bundle,
        model: ModelConfig,
        weights: Mapping[str, torch.Tensor],
        cache_len: int,
        *,
        with_logits: bool = False,
        caches: tuple[torch.Tensor, torch.Tensor] | None = None,
        stream: object = None,
    ) -> None:
        import torch

        self.bundle, self.model, self.w, self.cache_len = bundle, model, weights, cache_len
        self.stream, self.with_logits = stream, with_logits
        self.ours = M.Kernels(bundle)
        self.cutile = {s.function: s for s in K.cutile_specializations(model, cache_len)}
        self._loaded: dict[str, Kernel] = {}
        self.head = lm_head(weights, model)
        device = weights["embed"].device
        m, f16 = model, torch.float16

        def zeros(*shape: int, dtype: torch.dtype = f16) -> torch.Tensor:
            return torch.zeros(shape, dtype=dtype, device=device)

        i32, f32 = torch.int32, torch.float32
        self.a = M.State(zeros(1, dtype=i32), zeros(1, dtype=i32))
        self.b = M.State(zeros(1, dtype=i32), zeros(1, dtype=i32))
        cache = (m.layers, m.kv_heads, cache_len, m.head_dim)
        if caches is None:
            caches = (zeros(*cache), zeros(*cache))
        self.k_cache, self.v_cache = (c.view(cache) for c in caches)
        self.x0, self.r0, self.r1, self.h = (zeros(1, m.hidden) for _ in range(4))
        self.qkv = zeros(1, 1, m.qkv_dim)
        self.qk_normed = zeros(m.heads + m.kv_heads, m.head_dim)
        self.qk_roped = zeros(1, m.heads + m.kv_heads, m.head_dim)
        splits = int(K.CUTILE_ATTENTION["NUM_KV_SPLITS"])
        self.att = zeros(m.kv_heads, splits * m.group, m.head_dim)
        self.lse = zeros(m.kv_heads, splits * m.group, dtype=f32)
        self.attn = zeros(1, m.q_dim)
        self.o = zeros(1, 1, m.hidden, dtype=f32)
        self.gate_up = zeros(1, 1, 2 * m.intermediate)
        self.act = zeros(1, m.intermediate)
        self.down = zeros(1, 1, m.hidden, dtype=f32)
        self.logits = zeros(1, 1, m.vocab, dtype=f32)
        blocks = -(-m.vocab // K.LM_HEAD_ROWS)
        if blocks > K.CUTILE_ARGMAX_BLOCK:
            raise ValueError(f"{blocks} LM-head blocks exceed the argmax's {K.CUTILE_ARGMAX_BLOCK}")
        self.block_max = zeros(blocks, dtype=f32)
        self.block_idx = zeros(blocks, dtype=i32)
        exponents = torch.arange(0, m.head_dim, 2, dtype=torch.int64).float() / m.head_dim
        self.inv_freq = (1.0 / (m.rope_theta**exponents)).to(device)
        self.graphs: list[Graph] = []

    # ---- kernels -----------------------------------------------------------------------

    def cutile_kernel(self, function: str) -> Kernel:
        kernel = self._loaded.get(function)
        if kernel is None:
            spec = self.cutile[function]
            kernel = self.bundle.kernel(
                spec.function, spec.generic_map, module=spec.module, allow_unchecked=True
            )
            self._loaded[function] = kernel
        return kernel

    def _ours(self, entry: str, **generics: object) -> Kernel:
        return self.ours.of(entry, **generics)

    def _gemv(self, part: torch.Tensor, x: torch.Tensor, w: torch.Tensor) -> DeviceOp:
        bn, bk, lat, occ = K.F16_GEMV
        out = torch_dtype_name(part)
        kernel = self._ours("gemv", E="f16", O=out, BN=bn, BK=bk, LAT=lat, OCC=occ)
        return kernel.op(M.out(part, (1, 1, int(bn))), M.inp(x), M.inp(w))

    def _norm(self, dst: torch.Tensor, x: torch.Tensor, w: torch.Tensor) -> DeviceOp:
        tile = K.pow2_at_least(self.model.hidden)
        kernel = self._ours("rms_norm_hf", E="f16", HT=tile, BK=K.NORM_BK)
        return kernel.op(M.out(dst, (1, tile)), M.inp(x), M.inp(w), self.model.eps)

    def _add_norm(
        self,
        res_out: torch.Tensor,
        dst: torch.Tensor,
        res: torch.Tensor,
        part: torch.Tensor,
        w: torch.Tensor,
    ) -> DeviceOp:
        tile = K.pow2_at_least(self.model.hidden)
        kernel = self._ours("add_rms_norm_hf", E="f16", S=part.shape[0], HT=tile, BK=K.NORM_BK)
        t = (1, tile)
        return kernel.op(
            M.out(res_out, t), M.out(dst, t), M.inp(res), M.inp(part), M.inp(w), self.model.eps
        )

    # ---- one decode step ---------------------------------------------------------------

    def _attention(self, layer: int, pos: torch.Tensor) -> list[DeviceOp]:
        """QK-norm, RoPE, KV write, split-K attention and merge: cutile-kernels, unchanged."""
        m, p, d = self.model, f"layers.{layer}.", self.model.head_dim
        q_dim, kv_dim = m.q_dim, m.kv_dim
        row = self.qkv[0, 0]
        q2, k2 = row[:q_dim].view(m.heads, d), row[q_dim : q_dim + kv_dim].view(m.kv_heads, d)
        v3 = row[q_dim + kv_dim :].view(1, m.kv_heads, d)
        normed, roped = self.qk_normed, self.qk_roped
        kc, vc = self.k_cache[layer], self.v_cache[layer]
        a = K.CUTILE_ATTENTION
        qk_scale = 1 / math.sqrt(d)
        return [
            self.cutile_kernel("qk_norm_f16").op(
                M.inp(q2),
                M.inp(k2),
                M.inp(self.w[p + "q_norm"]),
                M.inp(self.w[p + "k_norm"]),
                M.out(normed, (1, d)),
                m.eps,
                m.heads,
            ),
            self.cutile_kernel("qk_rope_dynpos_f16").op(
                M.inp(normed[: m.heads].view(1, m.heads, d)),
                M.inp(normed[m.heads :].view(1, m.kv_heads, d)),
                M.inp(self.inv_freq),
                u32(pos),
                M.out(roped, (1, 1, d // 2)),
                m.heads,
            ),
            self.cutile_kernel("kv_cache_update_seq_dynpos_f16").op(
                M.inp(roped[:, m.heads :]),
                M.inp(v3),
                M.out(kc, (1, self.cache_len, d)),
                M.out(vc, (1, self.cache_len, d)),
                u32(pos),
                1,
            ),
            self.cutile_kernel("fmha_decode_gqa_split").op(
                M.inp(roped[0, : m.heads].view(m.kv_heads, m.group, d)),
                M.inp(kc),
                M.inp(vc),
                M.out(self.att, (1, m.group, d)),
                M.out(self.lse, (1, m.group)),
                qk_scale,
                u32(pos),
            ),
            self.cutile_kernel("splitk_reduce_merge").op(
                M.inp(self.att),
                M.inp(self.lse),
                M.out(self.attn.view(m.kv_heads, m.group, d), (1, m.group, int(a["CHUNK_D"]))),
            ),
        ]

    def step_ops(self, src: M.State, dst: M.State) -> list[DeviceOp]:
        m, w = self.model, self.w
        ops: list[DeviceOp] = [
            self.cutile_kernel("embedding_batch_f16").op(
                u32(src.tok), M.inp(w["embed"]), M.out(self.x0, (1, K.EMBED_BD))
            )
        ]
        res = self.x0
        for layer in range(m.layers):
            p = f"layers.{layer}."
            if layer == 0:
                ops.append(self._norm(self.h, res, w[p + "input_norm"]))
            else:
                nxt = self.r1 if res is self.r0 else self.r0
                ops.append(self._add_norm(nxt, self.h, res, self.down, w[p + "input_norm"]))
                res = nxt
            ops.append(self._gemv(self.qkv, self.h, w[p + "qkv"]))
            ops += self._attention(layer, src.pos)
            ops.append(self._gemv(self.o, self.attn, w[p + "o"]))
            nxt = self.r1 if res is self.r0 else self.r0
            ops.append(self._add_norm(nxt, self.h, res, self.o, w[p + "post_norm"]))
            res = nxt
            ops.append(self._gemv(self.gate_up, self.h, w[p + "gate_up"]))
            inter = m.intermediate
            ops.append(
                self.cutile_kernel("silu_mul_2d_f16").op(
                    M.out(self.act, (1, 1024)),
                    M.inp(self.gate_up[0, :, :inter]),
                    M.inp(self.gate_up[0, :, inter:]),
                )
            )
            ops.append(self._gemv(self.down, self.act, w[p + "down"]))
        nxt = self.r1 if res is self.r0 else self.r0
        ops.append(self._add_norm(nxt, self.h, res, self.down, w["final_norm"]))
        if self.with_logits:  # for the correctness check only: the fused head below has none
            ops.append(self._gemv(self.logits, self.h, self.head))
        blocks = self.block_max.shape[0]
        ops += [
            self.cutile_kernel("lm_head_argmax_blocks_f16").op(
                M.inp(self.head),
                M.inp(self.h),
                M.out(self.block_max, (1,)),
                u32(self.block_idx).partition((1,)),
                m.vocab,
            ),
            self.cutile_kernel("argmax_reduce_blocks_to_u32").op(
                M.inp(self.block_max), u32(self.block_idx), u32(dst.tok).partition((1,)), blocks
            ),
            self._ours("advance_position").op(M.out(dst.pos, (1,)), M.inp(src.pos), 1),
        ]
        return ops

    # ---- graphs, state, prompt -----------------------------------------------------------

    def capture(self) -> dict[str, Graph]:
        """The "ab", "ba" and "abba" decode graphs (see tests.benchmarks.decode.model)."""
        self.close_graphs()
        ab, ba = self.step_ops(self.a, self.b), self.step_ops(self.b, self.a)
        graphs = {
            "ab": Graph.capture(M.chain(ab)),
            "ba": Graph.capture(M.chain(ba)),
            "abba": Graph.capture(M.chain(ab + ba)),
        }
        self.graphs += graphs.values()
        return graphs

    def close_graphs(self) -> None:
        for graph in self.graphs:
            graph.close()
        self.graphs.clear()

    def set_state(self, tokens: Sequence[int], position: int) -> None:
        import torch

        self.a.tok.copy_(torch.tensor(list(tokens), dtype=torch.int32).to(self.a.tok.device))
        self.a.pos.copy_(torch.tensor([position], dtype=torch.int32).to(self.a.pos.device))

    def prefill(self, prompt: Sequence[int], graphs: Mapping[str, Graph]) -> None:
        """Run the prompt through the decode step token by token; afterwards state A holds
        the first greedy token and position len(prompt) (and `logits` its logits)."""
        for position, token in enumerate(prompt):
            self.set_state([token], position)
            graphs["ab"].replay(self.stream, sync=True)
        self.a.tok.copy_(self.b.tok)
        self.a.pos.copy_(self.b.pos)


def torch_dtype_name(t: torch.Tensor) -> str:
    import torch

    return {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}[t.dtype]
