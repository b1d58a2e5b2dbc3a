"""Pick each projection's kernel and split-K factor, and the decode attention's tiles, by
timing the candidates on the GPU.

A candidate is timed as it runs in the model: a CUDA graph of its launches over every layer's
weights (so no weight is served from L2), replayed with `tests.benchmarks.timing.median_seconds`.
Before timing, one launch on layer 0 is checked against torch; a candidate that fails to load,
launch or compute is reported and skipped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from client_stubs import Graph
from tests.benchmarks.decode import kernels as K
from tests.benchmarks.decode.kernels import candidates, projection_shape
from tests.benchmarks.decode.model import Decoder, Plan, chain

if TYPE_CHECKING:
    import torch

Log = Callable[[str], None]


def _weights(decoder: Decoder, name: str) -> list[torch.Tensor]:
    if name == "lm_head":
        return [decoder.head] * 4
    return [decoder.w[f"layers.{i}.{name}"] for i in range(decoder.model.layers)]


def _time_graph(build: Callable[[], list], stream: object) -> float:
    from tests.benchmarks.timing import median_seconds

    graph = Graph.capture(chain(build()))
    try:
        return median_seconds(lambda: graph.replay(stream), warmup=2, reps=5)
    finally:
        graph.close()


def _check(decoder: Decoder, name: str, choice: K.Projection, x: torch.Tensor) -> float:
    """Relative max error of one launch on layer 0's weight against torch in f32."""
    import torch

    w = _weights(decoder, name)[0]
    reference = x.float() @ w.float().T
    if name == "gate_up":
        gate, up = reference.chunk(2, -1)
        dtype = x.dtype
        gate, up = gate.to(dtype).float(), up.to(dtype).float()
        reference = (torch.nn.functional.silu(gate).to(dtype).float() * up).to(dtype).float()
        decoder.swiglu(choice, decoder.act, x, w).sync(decoder.stream)
        got = decoder.act.float()
    else:
        part = _scratch(decoder, name, choice.splits)
        decoder.projection(choice, part, x, w).sync(decoder.stream)
        got = part[: choice.splits].sum(0)
    scale = float(reference.abs().max()) or 1.0
    return float((got - reference).abs().max()) / scale


def _scratch(decoder: Decoder, name: str, splits: int) -> torch.Tensor:
    import torch

    n, _ = projection_shape(decoder.model, name)
    return torch.zeros(splits, decoder.batch, n, dtype=torch.float32, device=decoder.x0.device)


def _input(decoder: Decoder, name: str) -> torch.Tensor:
    import torch

    _, k = projection_shape(decoder.model, name)
    generator = torch.Generator(device=decoder.x0.device).manual_seed(7)
    x = torch.randn(decoder.batch, k, generator=generator, device=decoder.x0.device)
    return x.to(decoder.dtype)


def tune_projection(decoder: Decoder, name: str, log: Log) -> tuple[K.Projection, dict[str, float]]:
    """The fastest correct candidate of projection `name` (and every candidate's seconds)."""
    x = _input(decoder, name)
    weights = _weights(decoder, name)
    times: dict[str, float] = {}
    best: tuple[float, K.Projection] | None = None
    tolerance = 2e-2 if name == "gate_up" else 1e-3
    for choice in candidates(decoder.model, name, decoder.batch, decoder.e):
        try:
            error = _check(decoder, name, choice, x)
            if not error <= tolerance:
                raise ValueError(f"relative error {error:.3g} > {tolerance}")
            if name == "gate_up":
                seconds = _time_graph(
                    lambda c=choice: [decoder.swiglu(c, decoder.act, x, w) for w in weights],
                    decoder.stream,
                )
            else:
                part = _scratch(decoder, name, choice.splits)
                seconds = _time_graph(
                    lambda c=choice, p=part: [decoder.projection(c, p, x, w) for w in weights],
                    decoder.stream,
                )
        except Exception as exc:  # a candidate that cannot run loses; the run goes on
            log(f"    {name} {choice.label()}: skipped ({type(exc).__name__}: {exc})")
            continue
        times[choice.label()] = seconds
        if best is None or seconds < best[0]:
            best = (seconds, choice)
    if best is None:
        raise RuntimeError(f"no candidate of the {name} projection runs")
    n, k = projection_shape(decoder.model, name)
    moved = (
        len(weights) * (n * k * (2 if name == "gate_up" else 1)) * decoder.w["embed"].element_size()
    )
    log(f"  {name}: {best[1].label()}  {moved / best[0] / 1e12:.2f} TB/s of weights")
    ranked = sorted(times.items(), key=lambda item: item[1])
    log("    " + ", ".join(f"{label} {moved / t / 1e12:.2f}" for label, t in ranked))
    return best[1], times


def tune_attention(decoder: Decoder, context: int, log: Log) -> tuple[Mapping[str, str], int]:
    """The fastest decode attention tiles and split count at `context` cached tokens."""
    import torch

    m = decoder.model
    decoder.a.pos.copy_(torch.tensor([context], dtype=torch.int32, device=decoder.a.pos.device))
    best: tuple[float, Mapping[str, str], int] | None = None
    g, d = m.group, m.head_dim
    q3 = decoder.q.view(decoder.batch * m.kv_heads, 1, g * d)
    att3 = decoder.att.view(decoder.batch * m.kv_heads, 1, g * d)
    for tiles in K.DECODE_ATTENTION:
        base = K.decode_splits(decoder.batch, m.kv_heads, decoder.cache_len, int(tiles["BN"]))
        for splits in sorted({max(1, base // 2), base, base * 2}):
            if splits * int(tiles["BN"]) > decoder.cache_len:
                continue
            rows = splits * g
            dev = decoder.x0.device
            scratch = (
                torch.zeros(decoder.batch * m.kv_heads, rows, d, device=dev),
                torch.zeros(decoder.batch * m.kv_heads, rows, device=dev),
                torch.zeros(decoder.batch * m.kv_heads, rows, device=dev),
            )

            def build(t: Mapping[str, str] = tiles, s: tuple = scratch) -> list:
                ops = []
                for layer in range(m.layers):
                    k, v = decoder.k_cache[layer], decoder.v_cache[layer]
                    ops += decoder._attention(q3, k, v, att3, decoder.a.pos, 1, t, s)
                return ops

            try:
                seconds = _time_graph(build, decoder.stream)
            except Exception as exc:
                log(f"    attention {dict(tiles)} splits {splits}: skipped ({exc})")
                continue
            if best is None or seconds < best[0]:
                best = (seconds, tiles, splits)
    if best is None:
        raise RuntimeError("no decode attention candidate runs")
    kv = m.kv_bytes(decoder.batch, context)
    log(f"  attention: {dict(best[1])} splits {best[2]}  {kv / best[0] / 1e12:.2f} TB/s of KV")
    return best[1], best[2]


def tune(decoder: Decoder, context: int, log: Log) -> Plan:
    """A tuned plan for `decoder`'s model and batch (the decoder itself is only borrowed for
    its weights and buffers)."""
    projections = {}
    for name in decoder.plan.projections:
        projections[name], _ = tune_projection(decoder, name, log)
    tiles, splits = tune_attention(decoder, context, log)
    return Plan(projections, tiles, splits)


def seconds_per_token_bound(step_bytes: float, bandwidth: float) -> float:
    return step_bytes / bandwidth if bandwidth > 0 else math.inf
