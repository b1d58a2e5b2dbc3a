"""Our decoder: the Qwen3 model run entirely by kernels of rust_examples/decoder.rs, compiled
by cutile-serve into a bundle, launched through client_stubs.

Memory (weights, KV cache, activations) is torch's, viewed zero-copy (`DeviceTensor.wrap`);
every operation of prefill and decode is one of our kernels (torch only allocates, and
copies prompt tokens and positions in). The decode state is device-resident and double
buffered: state A = (tok_a, pos_a), state B = (tok_b, pos_b); a step reads one and its last
kernel (`greedy_step`) writes the other, so `step(A -> B)` then `step(B -> A)` captured in one
CUDA graph (`client_stubs.Graph`) decodes two tokens per replay with nothing from the host.

Per decode step and layer: [add+]RMSNorm -> QKV projection (split-K partials) -> QK-norm +
RoPE + KV-cache write -> split-K attention -> merge -> O projection -> add+RMSNorm -> gate/up
projection with SwiGLU -> down projection; then add+RMSNorm, LM head (f32 logits), argmax.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from client_stubs import Bundle, DeviceOp, DeviceTensor, Graph, Kernel
from client_stubs.device_op import Chain
from tests.benchmarks.decode import kernels as K
from tests.benchmarks.decode.config import ModelConfig
from tests.benchmarks.decode.weights import lm_head

if TYPE_CHECKING:
    import torch

LOG2E = 1.4426950408889634


@dataclass
class Plan:
    """The kernels a decoder launches: a projection choice per projection, the decode
    attention tiles and splits."""

    projections: dict[str, K.Projection]
    attention: Mapping[str, str]
    splits: int

    def describe(self) -> str:
        lines = [f"  {name}: {p.label()}" for name, p in self.projections.items()]
        tiles = ", ".join(f"{k}={v}" for k, v in self.attention.items())
        return "\n".join([*lines, f"  attention: {tiles}, {self.splits} splits"])


def default_plan(model: ModelConfig, batch: int, cache_len: int, dtype: str = "bf16") -> Plan:
    """The first candidate of every projection, split-K 1 (what runs before tuning)."""
    projections = {}
    for name in K.PROJECTIONS:
        spec = K.projection_specs(batch, dtype, swiglu=name == "gate_up")[0]
        projections[name] = K.Projection(spec, 1)
    tiles = K.DECODE_ATTENTION[0]
    splits = K.decode_splits(batch, model.kv_heads, cache_len, int(tiles["BN"]))
    return Plan(projections, tiles, splits)


def prefill_projection(batch: int, dtype: str, swiglu: bool) -> K.Projection:
    """Prompt chunks go through the first tensor-core tile of the batch's candidates."""
    specs = K.projection_specs(max(batch, 2), dtype, swiglu=swiglu)
    return K.Projection(specs[0], 1)


def inp(t: torch.Tensor) -> DeviceTensor:
    return DeviceTensor.wrap(t)


def out(t: torch.Tensor, tile: Sequence[int]) -> object:
    return DeviceTensor.wrap(t).partition(tuple(tile))


@dataclass
class State:
    """One half of the double-buffered decode state: token ids [B] and position [1]."""

    tok: torch.Tensor
    pos: torch.Tensor


@dataclass
class Kernels:
    """The loaded kernels, by role."""

    bundle: Bundle
    cache: dict[K.Spec, Kernel] = field(default_factory=dict)

    def get(self, spec: K.Spec) -> Kernel:
        kernel = self.cache.get(spec)
        if kernel is None:
            kernel = self.cache[spec] = self.bundle.kernel(spec.entry, spec.generic_map)
        return kernel

    def of(self, entry: str, **generics: object) -> Kernel:
        return self.get(K.Spec.of(entry, {k: str(v) for k, v in generics.items()}))


class Decoder:
    """Our decoder; see the module docstring. `caches` (k, v), each [layers, B * KV heads,
    cache_len, D], may be shared with the reference (benchmarks that cannot hold two)."""

    def __init__(
        self,
        bundle: Bundle,
        model: ModelConfig,
        weights: Mapping[str, torch.Tensor],
        rope: tuple[torch.Tensor, torch.Tensor],
        batch: int,
        cache_len: int,
        plan: Plan,
        *,
        caches: tuple[torch.Tensor, torch.Tensor] | None = None,
        stream: object = None,
    ) -> None:
        import torch

        self.model, self.w, self.batch, self.cache_len = model, weights, batch, cache_len
        self.cos, self.sin = rope
        self.plan = plan
        self.stream = stream
        self.kernels = Kernels(bundle)
        self.dtype = weights["embed"].dtype
        self.e = {torch.bfloat16: "bf16", torch.float16: "f16"}[self.dtype]
        self.head = lm_head(weights, model)
        device = weights["embed"].device
        m, b = model, batch
        cache_shape = (m.layers, b * m.kv_heads, cache_len, m.head_dim)
        if caches is None:
            caches = tuple(torch.zeros(cache_shape, dtype=self.dtype, device=device) for _ in "kv")
        self.k_cache, self.v_cache = (c.view(cache_shape) for c in caches)

        def zeros(*shape: int, dtype: torch.dtype = self.dtype) -> torch.Tensor:
            return torch.zeros(shape, dtype=dtype, device=device)

        i32 = torch.int32
        self.a = State(zeros(b, dtype=i32), zeros(1, dtype=i32))
        self.b = State(zeros(b, dtype=i32), zeros(1, dtype=i32))
        most = max(p.splits for p in plan.projections.values())
        self.x0, self.r0, self.r1, self.h = (zeros(b, m.hidden) for _ in range(4))
        self.qkv = zeros(most, b, m.qkv_dim, dtype=torch.float32)
        self.q, self.att = zeros(b, m.q_dim), zeros(b, m.q_dim)
        rows = plan.splits * m.group
        self.acc = zeros(b * m.kv_heads, rows, m.head_dim, dtype=torch.float32)
        self.m_max = zeros(b * m.kv_heads, rows, dtype=torch.float32)
        self.l_sum = zeros(b * m.kv_heads, rows, dtype=torch.float32)
        self.o = zeros(most, b, m.hidden, dtype=torch.float32)
        self.act = zeros(b, m.intermediate)
        self.down = zeros(most, b, m.hidden, dtype=torch.float32)
        self.logits = zeros(1, b, m.vocab, dtype=torch.float32)
        blocks = K.argmax_blocks(m.vocab)
        self.best = zeros(b, blocks, dtype=torch.float32)
        self.index = zeros(b, blocks, dtype=i32)
        self.graphs: list[Graph] = []
        self._prefill_buffers: dict[str, torch.Tensor] | None = None

    # ---- building blocks ---------------------------------------------------------------

    @property
    def hidden_tile(self) -> int:
        return K.pow2_at_least(self.model.hidden)

    def _norm(self, dst: torch.Tensor, x: torch.Tensor, w: torch.Tensor) -> DeviceOp:
        k = self.kernels.of("rms_norm_hf", E=self.e, HT=self.hidden_tile, BK=K.NORM_BK)
        return k.op(out(dst, (1, self.hidden_tile)), inp(x), inp(w), self.model.eps)

    def _add_norm(
        self,
        res_out: torch.Tensor,
        dst: torch.Tensor,
        res: torch.Tensor,
        part: torch.Tensor,
        w: torch.Tensor,
    ) -> DeviceOp:
        splits = part.shape[0]  # the kernel sums exactly its S partials in one load
        k = self.kernels.get(K.add_norm_spec(self.e, splits, self.hidden_tile))
        tile = (1, self.hidden_tile)
        return k.op(out(res_out, tile), out(dst, tile), inp(res), inp(part), inp(w), self.model.eps)

    def projection(
        self, choice: K.Projection, part: torch.Tensor, x: torch.Tensor, w: torch.Tensor
    ) -> DeviceOp:
        """part[:S] = the split-K partials of x @ w^T (S = the choice's splits)."""
        kernel = self.kernels.get(choice.spec)
        tile = (1, choice.rows, choice.block_n)
        return kernel.op(out(part[: choice.splits], tile), inp(x), inp(w))

    def swiglu(
        self, choice: K.Projection, act: torch.Tensor, x: torch.Tensor, w: torch.Tensor
    ) -> DeviceOp:
        """act = SwiGLU(x @ gate^T, x @ up^T), w the stacked [gate; up] weight."""
        kernel = self.kernels.get(choice.spec)
        stacked = w.view(2, self.model.intermediate, self.model.hidden)
        return kernel.op(out(act, (choice.rows, choice.block_n)), inp(x), inp(stacked))

    def _qkv_rope(
        self,
        layer: int,
        q3: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        qkv: torch.Tensor,
        pos: torch.Tensor,
        tokens: int,
        pt: int,
        splits: int,
    ) -> DeviceOp:
        """QK-norm + RoPE + KV write of `tokens` (<= pt) tokens from the qkv projection's
        `splits` split-K partials."""
        m, p = self.model, f"layers.{layer}."
        kernel = self.kernels.of(
            "qkv_rope",
            E=self.e,
            S=splits,
            G=m.group,
            HKV=m.kv_heads,
            PT=pt,
            SC=self.cache_len,
            D=m.head_dim,
        )
        cache_tile = (1, self.cache_len, m.head_dim)
        return kernel.op(
            out(q3, (1, pt, m.group * m.head_dim)),
            out(k, cache_tile),
            out(v, cache_tile),
            inp(qkv),
            inp(self.w[p + "q_norm"]),
            inp(self.w[p + "k_norm"]),
            inp(self.cos),
            inp(self.sin),
            inp(pos),
            tokens,
            m.eps,
        )

    def _attention(
        self,
        q3: torch.Tensor,
        k: torch.Tensor,
        v: torch.Tensor,
        att3: torch.Tensor,
        pos: torch.Tensor,
        pt: int,
        tiles: Mapping[str, str],
        scratch: tuple[torch.Tensor, ...],
    ) -> list[DeviceOp]:
        m = self.model
        acc, m_max, l_sum = scratch
        rows = pt * m.group
        copies = K.query_copies(m.group, pt)
        partial = self.kernels.of(
            "attention_partial", E=self.e, G=m.group, PT=pt, D=m.head_dim, **tiles, R=copies
        )
        merge = self.kernels.get(K.merge_spec(self.e, m.group, pt, m.head_dim))
        scale = LOG2E / math.sqrt(m.head_dim)
        return [
            partial.op(
                out(acc, (1, rows, m.head_dim)),
                out(m_max, (1, rows)),
                out(l_sum, (1, rows)),
                inp(q3),
                inp(k),
                inp(v),
                inp(pos),
                scale,
            ),
            merge.op(out(att3, (1, pt, m.group * m.head_dim)), inp(acc), inp(m_max), inp(l_sum)),
        ]

    def _greedy(
        self, hidden: torch.Tensor, state_in: torch.Tensor, state_out: State, advance: int
    ) -> list[DeviceOp]:
        """LM head on hidden [B, H], argmax, and the next state."""
        m = self.model
        choice = self.plan.projections["lm_head"]
        argmax = self.kernels.of("argmax_partial", BV=K.ARGMAX_BV)
        nbp = K.pow2_at_least(K.argmax_blocks(m.vocab))
        step = self.kernels.of("greedy_step", B=self.batch, NBP=nbp)
        return [
            self.projection(choice, self.logits, hidden, self.head),
            argmax.op(out(self.best, (1, 1)), out(self.index, (1, 1)), inp(self.logits[0])),
            step.op(
                out(state_out.tok, (self.batch,)),
                out(state_out.pos, (1,)),
                inp(self.best),
                inp(self.index),
                inp(state_in),
                advance,
            ),
        ]

    # ---- decode ------------------------------------------------------------------------

    def step_ops(self, src: State, dst: State) -> list[DeviceOp]:
        """One decode step reading state `src`, writing state `dst`."""
        m, w, plan = self.model, self.w, self.plan.projections
        b, g, d = self.batch, m.group, m.head_dim
        emb = self.kernels.of("embedding", E=self.e, BD=K.EMBED_BD)
        ops: list[DeviceOp] = [emb.op(out(self.x0, (1, K.EMBED_BD)), inp(src.tok), inp(w["embed"]))]
        q3 = self.q.view(b * m.kv_heads, 1, g * d)
        att3 = self.att.view(b * m.kv_heads, 1, g * d)
        scratch = (self.acc, self.m_max, self.l_sum)
        res = self.x0
        for layer in range(m.layers):
            p = f"layers.{layer}."
            if layer == 0:
                ops.append(self._norm(self.h, res, w[p + "input_norm"]))
            else:
                nxt = self._other(res)
                ops.append(
                    self._add_norm(
                        nxt, self.h, res, self.down[: plan["down"].splits], w[p + "input_norm"]
                    )
                )
                res = nxt
            ops.append(self.projection(plan["qkv"], self.qkv, self.h, w[p + "qkv"]))
            qkv = self.qkv[: plan["qkv"].splits]
            k, v = self.k_cache[layer], self.v_cache[layer]
            ops.append(self._qkv_rope(layer, q3, k, v, qkv, src.pos, 1, 1, plan["qkv"].splits))
            ops += self._attention(q3, k, v, att3, src.pos, 1, self.plan.attention, scratch)
            ops.append(self.projection(plan["o"], self.o, self.att, w[p + "o"]))
            nxt = self._other(res)
            ops.append(
                self._add_norm(nxt, self.h, res, self.o[: plan["o"].splits], w[p + "post_norm"])
            )
            res = nxt
            ops.append(self.swiglu(plan["gate_up"], self.act, self.h, w[p + "gate_up"]))
            ops.append(self.projection(plan["down"], self.down, self.act, w[p + "down"]))
        nxt = self._other(res)
        ops.append(
            self._add_norm(nxt, self.h, res, self.down[: plan["down"].splits], w["final_norm"])
        )
        return ops + self._greedy(self.h, src.pos, dst, 1)

    def _other(self, res: torch.Tensor) -> torch.Tensor:
        return self.r1 if res is self.r0 else self.r0

    def capture(self) -> dict[str, Graph]:
        """The decode graphs: "ab" (one step A -> B), "ba" (B -> A) and "abba" (both: two
        tokens per replay, back at state A). Every op is built before the first capture (a
        live graph pins its buffers against new partitions)."""
        self.close_graphs()
        ab, ba = self.step_ops(self.a, self.b), self.step_ops(self.b, self.a)
        graphs = {
            "ab": Graph.capture(chain(ab)),
            "ba": Graph.capture(chain(ba)),
            "abba": Graph.capture(chain(ab + ba)),
        }
        self.graphs += graphs.values()
        return graphs

    def close_graphs(self) -> None:
        for graph in self.graphs:
            graph.close()
        self.graphs.clear()

    def set_state(self, tokens: Sequence[int], position: int) -> None:
        """State A = (tokens, position), copied from the host (no kernel)."""
        import torch

        device = self.a.tok.device
        self.a.tok.copy_(torch.tensor(list(tokens), dtype=torch.int32).to(device))
        self.a.pos.copy_(torch.tensor([position], dtype=torch.int32).to(device))

    # ---- prefill -----------------------------------------------------------------------

    def _prefill_scratch(self) -> dict[str, torch.Tensor]:
        import torch

        if self._prefill_buffers is None:
            m, rows = self.model, self.batch * K.PREFILL_PT
            device = self.x0.device

            def zeros(*shape: int, dtype: torch.dtype = self.dtype) -> torch.Tensor:
                return torch.zeros(shape, dtype=dtype, device=device)

            qt = K.PREFILL_PT * m.group
            self._prefill_buffers = {
                "ids": zeros(rows, dtype=torch.int32),
                "pos": zeros(1, dtype=torch.int32),
                "x0": zeros(rows, m.hidden),
                "r0": zeros(rows, m.hidden),
                "r1": zeros(rows, m.hidden),
                "h": zeros(rows, m.hidden),
                "qkv": zeros(1, rows, m.qkv_dim, dtype=torch.float32),
                "q": zeros(rows, m.q_dim),
                "att": zeros(rows, m.q_dim),
                "acc": zeros(m.kv_heads, qt, m.head_dim, dtype=torch.float32),
                "m": zeros(m.kv_heads, qt, dtype=torch.float32),
                "l": zeros(m.kv_heads, qt, dtype=torch.float32),
                "o": zeros(1, rows, m.hidden, dtype=torch.float32),
                "act": zeros(rows, m.intermediate),
                "down": zeros(1, rows, m.hidden, dtype=torch.float32),
            }
        return self._prefill_buffers

    def prefill_ops(self, tokens: int, last: bool) -> list[DeviceOp]:
        """One prompt chunk of `tokens` (<= PREFILL_PT) tokens per sequence, its ids and start
        position already in the prefill buffers; the last chunk ends with the first greedy
        token and state A = (that token, start + tokens)."""
        m, w, s = self.model, self.w, self._prefill_scratch()
        rows, g, d, hkv = self.batch * tokens, m.group, m.head_dim, m.kv_heads
        lin = prefill_projection(self.batch, self.e, False)
        glu = prefill_projection(self.batch, self.e, True)
        view = {name: s[name][:rows] for name in ("x0", "r0", "r1", "h", "q", "att", "act")}
        view.update({name: s[name][:, :rows] for name in ("qkv", "o", "down")})
        emb = self.kernels.of("embedding", E=self.e, BD=K.EMBED_BD)
        ops: list[DeviceOp] = [
            emb.op(out(view["x0"], (1, K.EMBED_BD)), inp(s["ids"][:rows]), inp(w["embed"]))
        ]
        res = view["x0"]

        def other(t: torch.Tensor) -> torch.Tensor:
            return view["r1"] if t is view["r0"] else view["r0"]

        for layer in range(m.layers):
            p = f"layers.{layer}."
            if layer == 0:
                ops.append(self._norm(view["h"], res, w[p + "input_norm"]))
            else:
                nxt = other(res)
                ops.append(self._add_norm(nxt, view["h"], res, view["down"], w[p + "input_norm"]))
                res = nxt
            ops.append(self.projection(lin, view["qkv"], view["h"], w[p + "qkv"]))
            for seq in range(self.batch):
                lo, hi = seq * tokens, (seq + 1) * tokens
                q3 = view["q"][lo:hi].view(tokens, hkv, g * d).transpose(0, 1)
                att3 = view["att"][lo:hi].view(tokens, hkv, g * d).transpose(0, 1)
                k = self.k_cache[layer][seq * hkv : (seq + 1) * hkv]
                v = self.v_cache[layer][seq * hkv : (seq + 1) * hkv]
                qkv = view["qkv"][:, lo:hi]
                ops.append(
                    self._qkv_rope(layer, q3, k, v, qkv, s["pos"], tokens, K.PREFILL_PT, lin.splits)
                )
                ops += self._attention(
                    q3,
                    k,
                    v,
                    att3,
                    s["pos"],
                    K.PREFILL_PT,
                    K.PREFILL_ATTENTION,
                    (s["acc"], s["m"], s["l"]),
                )
            ops.append(self.projection(lin, view["o"], view["att"], w[p + "o"]))
            nxt = other(res)
            ops.append(self._add_norm(nxt, view["h"], res, view["o"], w[p + "post_norm"]))
            res = nxt
            ops.append(self.swiglu(glu, view["act"], view["h"], w[p + "gate_up"]))
            ops.append(self.projection(lin, view["down"], view["act"], w[p + "down"]))
        if not last:
            return ops
        nxt = other(res)
        ops.append(self._add_norm(nxt, view["h"], res, view["down"], w["final_norm"]))
        last_rows = view["h"].view(self.batch, tokens, m.hidden)[:, tokens - 1]
        return ops + self._greedy(last_rows, s["pos"], self.a, tokens)

    def prefill(
        self,
        prompts: Sequence[Sequence[int]],
        on_chunk: Callable[[int], None] | None = None,
        trace: Callable[[str], None] | None = None,
    ) -> None:
        """Prefill equal-length prompts [B][P] from position 0 in chunks of PREFILL_PT tokens;
        afterwards state A holds each sequence's first greedy token and position P (and
        `self.logits` the logits it came from). Closes live graphs (they pin the buffers).
        `trace`: run every kernel on its own and report it by name once it completed (under
        compute-sanitizer, a report or a stall then names its kernel)."""
        import torch

        self.close_graphs()
        length = len(prompts[0])
        if len(prompts) != self.batch or any(len(p) != length for p in prompts):
            raise ValueError(f"prefill takes {self.batch} prompts of one length")
        if length > self.cache_len:
            raise ValueError(
                f"a {length}-token prompt does not fit a {self.cache_len}-position cache"
            )
        s = self._prefill_scratch()
        for start in range(0, length, K.PREFILL_PT):
            tokens = min(K.PREFILL_PT, length - start)
            ids = [tok for p in prompts for tok in p[start : start + tokens]]
            s["ids"][: len(ids)].copy_(torch.tensor(ids, dtype=torch.int32).to(s["ids"].device))
            s["pos"].copy_(torch.tensor([start], dtype=torch.int32).to(s["pos"].device))
            ops = self.prefill_ops(tokens, start + tokens == length)
            if trace is None:
                chain(ops).sync(self.stream)
            else:
                for op in ops:
                    op.sync(self.stream)
                    trace(f"prefill chunk at {start}: {op}")
            if on_chunk is not None:
                on_chunk(start + tokens)


def chain(ops: Sequence[DeviceOp]) -> DeviceOp:
    """The ops in order on one stream, as one DeviceOp."""
    return Chain(tuple(ops))
