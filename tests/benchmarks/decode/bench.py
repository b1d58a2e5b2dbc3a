"""Decode Qwen3-shaped models with our kernels next to torch (eager and CUDA graphs) on the GPU.

    PYTHONPATH=. python3 -m tests.benchmarks.decode.bench BUNDLE correctness [--model 4b]
    PYTHONPATH=. python3 -m tests.benchmarks.decode.bench BUNDLE speed [--runs 4b:1:1024,...]
        [--json bench_results/decode.json]
    compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 1 \\
        python3 -m tests.benchmarks.decode.bench BUNDLE memcheck

BUNDLE is `python -m tests.benchmarks.decode.build`'s folder. `correctness` prefills a seeded random
prompt, decodes `--steps` greedy tokens with ours (CUDA graphs) and with torch eager and
torch + CUDA graph, and checks, in lockstep (each decoder fed torch's previous greedy token):
every step's logits agree within LOGIT_TOLERANCE and the greedy tokens are identical, or
differ only at a near tie (torch's top-2 gap below twice the measured logit difference); it
prints for how many steps the greedy tokens are identical. `speed` times `--steps` decode steps
per run (model:batch:context, the KV cache holding `context` positions, filled with random
keys and values, decode starting `--steps` before its end), ours next to torch, and the
memory-bandwidth bound: (weights + KV cache bytes per step) / the measured copy bandwidth.
`memcheck` runs the small model (prefill + a few graph-replayed decode steps, ours only).
`--breakdown` adds each kernel's GPU time per step to a speed run (decode/breakdown.py);
`--also BUNDLE2` times a second build's decoder in the same run (e.g. one built with
`decode.build --no-early-launch`, whose kernels are plain).
`--f16` runs each mode with the f16 decoder over cutile-kernels' kernels
(tests/benchmarks/decode/model_f16.py; batch 1) next to torch in f16.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from tests.benchmarks.decode import kernels as K
from tests.benchmarks.decode.config import MODELS, ModelConfig

SEED = 1234
DEVICE = "cuda"  # the CPU test of this script sets "cpu" (with torch.cuda stood in)
# |ours - torch| on the logits of the prefill and of every decode step, relative to the
# largest |torch logit|: both run the same bf16 model, so they differ by accumulation order
# and by the bf16 roundings that order flips, compounded over the layers
LOGIT_TOLERANCE = 0.05
STANDARD_RUNS = (
    "4b:1:1024",
    "4b:1:8192",
    "4b:8:1024",
    "4b:8:8192",
    "4b:64:1024",
    "4b:64:8192",
    "32b:1:1024",
)
F16_RUNS = ("4b:1:1024", "4b:1:8192")  # the f16 decoder over cutile-kernels: batch 1
CORRECTNESS_CACHE = 256
PROMPT = 16
START = time.monotonic()


def log(text: str) -> None:
    print(f"[{time.monotonic() - START:7.1f}s] {text}", flush=True)


@dataclass(frozen=True)
class Run:
    model: str
    batch: int
    context: int

    @classmethod
    def parse(cls, text: str) -> Run:
        try:
            model, batch, context = text.split(":")
            run = cls(model, int(batch), int(context))
        except ValueError:
            raise SystemExit(
                f"error: a run is MODEL:BATCH:CONTEXT (e.g. 4b:1:1024), got {text!r}"
            ) from None
        if model not in MODELS:
            raise SystemExit(f"error: unknown model {model!r}; known: {sorted(MODELS)}")
        if run.context != K.pow2_at_least(run.context) or run.batch < 1:
            raise SystemExit(f"error: {text}: the context (cache length) must be a power of two")
        return run

    @property
    def config(self) -> ModelConfig:
        return MODELS[self.model]


def required_specs(mode: str, runs: Sequence[Run], f16: bool = False) -> list[object]:
    """What each mode launches (the build step compiles the union for the standard runs):
    our specializations, and with `f16` cutile-kernels' too."""
    cache = {r: (r.context if mode == "speed" else CORRECTNESS_CACHE) for r in runs}
    if mode == "memcheck":
        runs = [Run("tiny", 1, CORRECTNESS_CACHE)]
        cache = {runs[0]: CORRECTNESS_CACHE}
    if f16:
        ours = [s for r in runs for s in K.f16_specializations(r.config)]
        cutile = [s for r in runs for s in K.cutile_specializations(r.config, cache[r])]
        return K.unique([*ours, *cutile])
    prefill = mode != "speed"
    return K.unique(
        s for r in runs for s in K.specializations(r.config, r.batch, cache[r], prefill=prefill)
    )


def check_bundle(bundle_path: Path, specs: Sequence[object]) -> object:
    """Open the bundle and fail fast, naming every specialization it lacks."""
    from client_stubs import Bundle

    bundle = Bundle.open(bundle_path)

    def present(spec) -> bool:
        module = getattr(spec, "module", None)
        function = getattr(spec, "function", None) or spec.entry
        return any(
            e.function == function
            and (module is None or e.module == module)
            and e.matches(spec.generic_map)
            for e in bundle.entries
        )

    missing = [s.label() for s in specs if not present(s)]
    if missing:
        raise SystemExit(
            f"error: {bundle_path} lacks {len(missing)} kernels, e.g. {missing[:4]}; rebuild it "
            "with `python -m tests.benchmarks.decode.build` (add --cutile-rs PATH for --f16)"
        )
    return bundle


# ---- setup --------------------------------------------------------------------------------


def setup_weights(model: ModelConfig, f16: bool = False):
    import torch

    from tests.benchmarks.decode.weights import random_weights

    free, _ = torch.cuda.mem_get_info()
    need = model.parameters() * 2
    if need > free:
        raise SystemExit(
            f"error: {model.name} needs {need / 2**30:.1f} GiB, {free / 2**30:.1f} free"
        )
    log(f"{model.name}: {model.parameters() / 1e9:.2f} B parameters, random (seed {SEED})")
    weights = random_weights(model, SEED, torch.float16 if f16 else torch.bfloat16, DEVICE)
    torch.cuda.synchronize()
    log(f"{model.name}: weights ready")
    return weights


def copy_bandwidth() -> float:
    """Device-to-device copy bandwidth in bytes/s (read + write counted) of a 4 GiB copy."""
    import torch

    from tests.benchmarks.timing import median_seconds

    n = 2**31
    src = torch.empty(n, dtype=torch.bfloat16, device=DEVICE)
    dst = torch.empty_like(src)
    return 2 * n * 2 / median_seconds(lambda: dst.copy_(src), warmup=2, reps=5)


def make_decoder(
    bundle,
    model,
    weights,
    rope,
    batch,
    cache_len,
    *,
    tune_context=None,
    caches=None,
    f16=False,
    with_logits=False,
):
    import torch

    from tests.benchmarks.decode.model import Decoder, default_plan
    from tests.benchmarks.decode.model_f16 import CutileKernelsDecoder
    from tests.benchmarks.decode.tuning import tune

    stream = torch.cuda.current_stream()
    if f16:
        if batch != 1:
            raise SystemExit("error: the f16 decoder (cutile-kernels) decodes batch 1 only")
        return CutileKernelsDecoder(
            bundle,
            model,
            weights,
            cache_len,
            with_logits=with_logits,
            caches=caches,
            stream=stream,
        )
    plan = default_plan(model, batch, cache_len)
    if tune_context is not None:
        log(f"tuning {model.name} at batch {batch}")
        probe = Decoder(
            bundle, model, weights, rope, batch, cache_len, plan, caches=caches, stream=stream
        )
        plan = tune(probe, tune_context, log)
        del probe
    decoder = Decoder(
        bundle, model, weights, rope, batch, cache_len, plan, caches=caches, stream=stream
    )
    return decoder


# ---- correctness --------------------------------------------------------------------------


def _error(ours, theirs) -> float:
    scale = float(theirs.float().abs().max()) or 1.0
    return float((ours.float() - theirs.float()).abs().max()) / scale


@dataclass(frozen=True)
class Step:
    """One lockstep decode step: both decoders fed torch's previous greedy token."""

    error: float  # max |ours - torch| / max |torch| over the logits
    ours: list[int]
    torch: list[int]
    margin: float  # torch's smallest top-1 - top-2 logit gap over the batch
    scale: float  # max |torch logit|

    @property
    def agree(self) -> bool:
        return self.ours == self.torch

    @property
    def near_tie(self) -> bool:
        """A disagreement the numerics decide either way: torch's top two are closer than
        twice the largest logit difference between the two decoders."""
        return self.margin <= 2 * self.error * self.scale


def _step(ours_logits, theirs, ours_tok) -> Step:
    import torch

    top = torch.topk(theirs.float(), 2, dim=-1).values
    return Step(
        _error(ours_logits, theirs),
        ours_tok.tolist(),
        theirs.argmax(-1).int().tolist(),
        float((top[:, 0] - top[:, 1]).min()),
        float(theirs.float().abs().max()),
    )


def _prefilled(ours, prompt, trace=None):
    """Prefill `ours` with prompt [B, P]; its decode graphs. `trace`: see `Decoder.prefill`."""
    if hasattr(ours, "plan"):  # ours: batched prefill chunks, then the graphs
        ours.prefill(prompt.tolist(), trace=trace)
        return ours.capture()
    graphs = ours.capture()  # the f16 decoder: the prompt through the decode step
    ours.prefill(prompt[0].tolist(), graphs)
    return graphs


def correctness(bundle, model: ModelConfig, batch: int, steps: int, f16: bool = False) -> bool:
    """Prefill, then `steps` decode steps in lockstep (each decoder consumes torch's previous
    greedy token, so every step's logits are comparable). Until the first disagreement the
    lockstep tokens are exactly what both greedy decoders produce on their own."""
    import torch

    from tests.benchmarks.decode.reference import Reference, rope_tables

    weights = setup_weights(model, f16)
    dtype = torch.float16 if f16 else torch.bfloat16
    rope = rope_tables(model, CORRECTNESS_CACHE, dtype, DEVICE)
    ours = make_decoder(
        bundle,
        model,
        weights,
        rope,
        batch,
        CORRECTNESS_CACHE,
        tune_context=PROMPT,
        f16=f16,
        with_logits=True,
    )
    ref = Reference(model, weights, batch, CORRECTNESS_CACHE, rope)
    prompt = torch.randint(
        0, model.vocab, (batch, PROMPT), generator=torch.Generator().manual_seed(SEED)
    )
    log(f"prefill: {batch} x {PROMPT} prompt tokens")
    graphs = _prefilled(ours, prompt)
    theirs = ref.forward(prompt.to(DEVICE), 0, exact=True)
    record = [_step(ours.logits[0], theirs, ours.a.tok)]
    log(f"decode graphs: {len(graphs['ab'].launches)} launches per step")
    fed, fed_tokens, eager = theirs.argmax(-1).int(), [], []
    for step in range(steps):
        src, dst = (ours.a, ours.b) if step % 2 == 0 else (ours.b, ours.a)
        src.tok.copy_(fed)
        graphs["ab" if step % 2 == 0 else "ba"].replay(ours.stream, sync=True)
        if int(dst.pos[0]) != PROMPT + step + 1:
            raise RuntimeError(f"step {step}: our position is {int(dst.pos[0])}")
        theirs = ref.forward(fed[:, None].long(), PROMPT + step, exact=True)
        record.append(_step(ours.logits[0], theirs, dst.tok))
        fed_tokens.append(fed.clone())
        eager.append(theirs)
        fed = theirs.argmax(-1).int()
    ours.close_graphs()
    ok = report(record)
    return graph_matches_eager(ref, prompt, fed_tokens, eager) and ok


def report(record: Sequence[Step]) -> bool:
    """Print the comparison; True when every logit error is within LOGIT_TOLERANCE and every
    token disagreement is a near tie."""
    for i, step in enumerate(record):
        name = "prefill" if i == 0 else f"step {i - 1}"
        verdict = "same token" if step.agree else ("near tie" if step.near_tie else "DIFFERENT")
        log(
            f"  {name}: logits error {step.error:.3g}, torch's top-2 margin {step.margin:.3g} of "
            f"{step.scale:.3g}: {verdict} (ours {step.ours}, torch {step.torch})"
        )
    identical = next((i for i, s in enumerate(record) if not s.agree), len(record))
    agreeing = sum(s.agree for s in record[1:])
    ties = sum(s.near_tie and not s.agree for s in record[1:])
    log(
        f"  greedy tokens identical for the first {max(identical - 1, 0)} decode steps and at "
        f"{agreeing} of {len(record) - 1}; near ties at {ties}"
    )
    worst = max(s.error for s in record)
    log(f"  largest logits error {worst:.3g} (tolerance {LOGIT_TOLERANCE})")
    return worst <= LOGIT_TOLERANCE and all(s.agree or s.near_tie for s in record)


def graph_matches_eager(ref, prompt, fed_tokens: list, eager: list) -> bool:
    """torch + CUDA graph (whole cache, masked) computes the logits eager torch did."""
    import torch

    from tests.benchmarks.decode.reference import DecodeGraph

    ref.forward(prompt.to(DEVICE), 0, exact=True)  # the prompt's cache again
    # the capture's two warm-up steps decode from the first state, writing what the eager
    # steps wrote there; each replay below is fed the eager run's token
    tok = fed_tokens[0].clone()
    pos = torch.full((1,), PROMPT, dtype=torch.int32, device=DEVICE)
    graph = DecodeGraph(ref, tok, pos, exact=True)
    worst = 0.0
    for step, (fed, expected) in enumerate(zip(fed_tokens, eager, strict=True)):
        tok.copy_(fed)
        pos.fill_(PROMPT + step)
        graph.replay()
        worst = max(worst, _error(graph.logits, expected))
    ok = worst <= LOGIT_TOLERANCE
    log(f"  torch + CUDA graph vs torch eager: largest logits error {worst:.3g}")
    return ok


# ---- speed --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    model: str
    batch: int
    context: int
    steps: int
    ours_tps: float
    torch_eager_tps: float
    torch_graph_tps: float
    bound_tps: float
    step_bytes: int
    copy_bandwidth: float
    launches_per_step: int
    plan: str
    also_tps: float = 0.0  # `--also`: the second bundle's decoder, same weights and caches


def _elapsed(run_steps, repeats: int) -> float:
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(repeats):
        run_steps()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def _time_ours(
    bundle,
    run: Run,
    weights,
    rope,
    caches,
    start: int,
    tokens,
    steps: int,
    f16: bool = False,
    breakdown: bool = False,
):
    """(tokens/s, launches per step, plan) of our decoder: two steps per graph replay."""
    model, batch = run.config, run.batch
    ours = make_decoder(
        bundle,
        model,
        weights,
        rope,
        batch,
        run.context,
        tune_context=start,
        caches=caches,
        f16=f16,
    )
    plan = ours.plan.describe() if not f16 else F16_PLAN
    log("plan:\n" + plan)
    graphs = ours.capture()
    abba = graphs["abba"]
    ours.set_state(tokens, start)
    abba.replay(ours.stream, sync=True)  # warm-up
    ours.set_state(tokens, start)
    seconds = _elapsed(lambda: abba.replay(ours.stream), steps // 2)
    tps = batch * 2 * (steps // 2) / seconds
    final = ours.a.tok.tolist()
    if not all(0 <= t < model.vocab for t in final):
        raise RuntimeError(f"our decode produced token ids out of range: {final}")
    launches = len(graphs["ab"].launches)
    log(f"  ours: {tps:.1f} tokens/s ({launches} launches per step)")
    if breakdown:
        from tests.benchmarks.decode.breakdown import format_table, profile_kernels

        ours.set_state(tokens, start)  # the timed steps used up the cache's positions
        rows = profile_kernels(lambda: abba.replay(ours.stream), 2, 4)
        log("kernel time per decode step:\n" + format_table(rows, 1e6 * batch / tps))
    ours.close_graphs()
    return tps, launches, plan


def _time_torch(ref, tokens, start: int, steps: int, eager: bool) -> tuple[float, float]:
    """(torch + CUDA graph tokens/s, torch eager tokens/s or 0)."""
    import torch

    from tests.benchmarks.decode.reference import DecodeGraph

    batch = ref.batch
    tok = torch.tensor(tokens, dtype=torch.int32, device=DEVICE)
    pos = torch.full((1,), start, dtype=torch.int32, device=DEVICE)
    graph = DecodeGraph(ref, tok, pos, exact=False)  # its warm-up steps advance tok and pos
    tok.copy_(torch.tensor(tokens, dtype=torch.int32))
    pos.fill_(start)
    graph_tps = batch * steps / _elapsed(graph.replay, steps)
    log(f"  torch + CUDA graph: {graph_tps:.1f} tokens/s")
    if not eager:
        return graph_tps, 0.0
    state = {"tok": torch.tensor(tokens, dtype=torch.int32, device=DEVICE), "pos": start}
    pos_dev = torch.tensor([start], dtype=torch.int32, device=DEVICE)

    def eager_step() -> None:
        hidden = ref.hidden(state["tok"][:, None], pos_dev, state["pos"] + 1)
        state["tok"] = ref.logits(hidden[:, -1]).argmax(-1).int()
        pos_dev.add_(1)
        state["pos"] += 1

    eager_step()  # warm-up
    state["pos"] = start
    pos_dev.fill_(start)
    eager_tps = batch * steps / _elapsed(eager_step, steps)
    log(f"  torch eager: {eager_tps:.1f} tokens/s")
    return graph_tps, eager_tps


def random_caches(model: ModelConfig, batch: int, cache_len: int, dtype):
    """K and V caches [layers, B * KV heads, cache_len, D] of N(0, 1) values."""
    import torch

    shape = (model.layers, batch * model.kv_heads, cache_len, model.head_dim)
    need = 2 * model.kv_bytes(batch, cache_len)
    free, _ = torch.cuda.mem_get_info()
    if need > free * 0.9:
        raise RuntimeError(f"the KV cache needs {need / 2**30:.1f} GiB, {free / 2**30:.1f} free")
    log(f"KV cache {need / 2**30:.1f} GiB (shared by ours and torch), random")
    caches = tuple(torch.empty(shape, dtype=dtype, device=DEVICE) for _ in "kv")
    for cache in caches:
        for layer in cache:
            layer.normal_()
    return caches


F16_PLAN = (
    "  cutile-kernels (f16, unchanged): embedding, QK-norm, QK-RoPE, KV write, split-K decode"
    " attention + merge, SiLU-mul, LM head + argmax; ours: projections (gemv), RMSNorms,"
    " position step"
)


def speed_run(
    bundle,
    run: Run,
    weights,
    bandwidth: float,
    steps: int,
    torch_eager: bool,
    f16: bool = False,
    breakdown: bool = False,
    also=None,  # a second bundle, or None
) -> Row:
    """One run: ours (and the `also` bundle's decoder), then torch, on the same weights and
    the same KV cache; decode starts `steps` + 4 positions before the cache's end."""
    import torch

    from tests.benchmarks.decode.reference import Reference, rope_tables

    model, batch, cache_len = run.config, run.batch, run.context
    log(f"run {run.model} batch {batch} context {cache_len}")
    start = cache_len - steps - 4
    dtype = torch.float16 if f16 else torch.bfloat16
    caches = random_caches(model, batch, cache_len, dtype)
    rope = rope_tables(model, cache_len, dtype, DEVICE)
    generator = torch.Generator().manual_seed(SEED)
    tokens = torch.randint(0, model.vocab, (batch,), generator=generator).tolist()
    ours_tps, launches, plan = _time_ours(
        bundle, run, weights, rope, caches, start, tokens, steps, f16, breakdown
    )
    also_tps = 0.0
    if also is not None:
        log("  the --also bundle:")
        also_tps = _time_ours(also, run, weights, rope, caches, start, tokens, steps, f16)[0]
    ref = Reference(model, weights, batch, cache_len, rope, caches=caches)
    graph_tps, eager_tps = _time_torch(ref, tokens, start, steps, torch_eager)
    step_bytes = model.step_bytes(batch, start + steps // 2)
    bound = batch * bandwidth / step_bytes
    log(f"  bound: {bound:.1f} tokens/s ({step_bytes / 1e9:.2f} GB per step)")
    return Row(
        model.name + (" (f16: cutile-kernels)" if f16 else ""),
        batch,
        cache_len,
        steps,
        ours_tps,
        eager_tps,
        graph_tps,
        bound,
        step_bytes,
        bandwidth,
        launches,
        plan,
        also_tps,
    )


def speed(
    bundle,
    runs: Sequence[Run],
    steps: int,
    torch_eager: bool,
    f16: bool = False,
    breakdown: bool = False,
    also=None,  # a second bundle, or None
) -> list[Row]:
    import torch

    bandwidth = copy_bandwidth()
    log(f"copy bandwidth: {bandwidth / 1e12:.2f} TB/s")
    rows = []
    for name in dict.fromkeys(r.model for r in runs):
        weights = setup_weights(MODELS[name], f16)
        for run in (r for r in runs if r.model == name):
            try:
                rows.append(
                    speed_run(
                        bundle, run, weights, bandwidth, steps, torch_eager, f16, breakdown, also
                    )
                )
            except Exception as exc:  # one failing run still leaves the others
                log(f"run {run} failed: {type(exc).__name__}: {exc}")
                torch.cuda.empty_cache()
        del weights
        torch.cuda.empty_cache()
    return rows


def print_table(rows: Sequence[Row]) -> None:
    also = any(r.also_tps for r in rows)
    print(
        "model      batch context | ours tok/s | torch eager | torch+graphs | bound "
        "| ours/bound | ours/graphs" + (" | --also tok/s | also/bound" if also else "")
    )
    for r in rows:
        extra = f" | {r.also_tps:12.1f} | {r.also_tps / r.bound_tps:10.2f}" if also else ""
        print(
            f"{r.model:<10} {r.batch:>5} {r.context:>7} | {r.ours_tps:10.1f} | "
            f"{r.torch_eager_tps:11.1f} | {r.torch_graph_tps:12.1f} | {r.bound_tps:5.0f} | "
            f"{r.ours_tps / r.bound_tps:10.2f} | {r.ours_tps / r.torch_graph_tps:11.2f}{extra}",
            flush=True,
        )


# ---- memcheck -----------------------------------------------------------------------------


def memcheck(bundle, steps: int, f16: bool = False) -> bool:
    """The small model: prefill (a full chunk and a partial one; f16: token by token), then
    `steps` single-step graph replays and one two-step replay."""
    import torch

    from tests.benchmarks.decode.reference import rope_tables

    model = MODELS["tiny"]
    weights = setup_weights(model, f16)
    dtype = torch.float16 if f16 else torch.bfloat16
    rope = rope_tables(model, CORRECTNESS_CACHE, dtype, DEVICE)
    ours = make_decoder(bundle, model, weights, rope, 1, CORRECTNESS_CACHE, f16=f16)
    log("memcheck: decoder ready")  # each phase logged: under the sanitizer each takes long
    prompt = torch.randint(
        0, model.vocab, (1, PROMPT + 3), generator=torch.Generator().manual_seed(SEED)
    )
    graphs = _prefilled(ours, prompt, trace=log)
    log("memcheck: prefilled, decode graphs captured")
    for step in range(steps):
        graphs["ab" if step % 2 == 0 else "ba"].replay(ours.stream, sync=True)
        log(f"memcheck: decode step {step + 1} of {steps}")
    graphs["abba"].replay(ours.stream, sync=True)
    tokens = ours.a.tok.tolist() + ours.b.tok.tolist()
    ours.close_graphs()
    ok = all(0 <= t < model.vocab for t in tokens)
    log(f"memcheck workload {'ok' if ok else 'FAILED'}: tokens {tokens}")
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("mode", choices=("correctness", "speed", "memcheck"))
    parser.add_argument("--model", default="4b", choices=sorted(MODELS))
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--runs", help="comma-separated MODEL:BATCH:CONTEXT (speed)")
    parser.add_argument("--steps", type=int, help="decode steps (default 32 / 64 / 4)")
    parser.add_argument("--no-torch-eager", action="store_true", help="skip torch eager (speed)")
    parser.add_argument("--json", type=Path, help="write the speed rows here (for BENCHMARKS.md)")
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="speed: also print each kernel's GPU time per decode step (torch.profiler)",
    )
    parser.add_argument(
        "--also",
        type=Path,
        help="speed: a second bundle (e.g. `decode.build --no-early-launch`) timed on the same "
        "weights and caches, in the same run",
    )
    parser.add_argument(
        "--f16",
        action="store_true",
        help="the f16 decoder over cutile-kernels' kernels (batch 1; torch in f16)",
    )
    args = parser.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("error: no CUDA device")
    standard = F16_RUNS if args.f16 else STANDARD_RUNS
    runs = [Run.parse(t) for t in (args.runs.split(",") if args.runs else standard)]
    if args.mode == "correctness":
        runs = [Run(args.model, args.batch, CORRECTNESS_CACHE)]
    if args.f16 and any(r.batch != 1 for r in runs):
        raise SystemExit("error: the f16 decoder (cutile-kernels) decodes batch 1 only")
    bundle = check_bundle(args.bundle, required_specs(args.mode, runs, args.f16))
    also = None
    if args.also is not None:
        also = check_bundle(args.also, required_specs(args.mode, runs, args.f16))
    log(f"{torch.cuda.get_device_name()}, bundle {args.bundle}: every kernel present")
    if args.mode == "memcheck":
        return 0 if memcheck(bundle, args.steps or 4, args.f16) else 1
    if args.mode == "correctness":
        ok = correctness(bundle, MODELS[args.model], args.batch, args.steps or 32, args.f16)
        log("correctness " + ("PASSED" if ok else "FAILED"))
        return 0 if ok else 1
    rows = speed(
        bundle, runs, args.steps or 64, not args.no_torch_eager, args.f16, args.breakdown, also
    )
    print_table(rows)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "family": "decode",
            "command": " ".join(
                ["PYTHONPATH=. python3 -m tests.benchmarks.decode.bench", *sys.argv[1:]]
            ),
            "device": torch.cuda.get_device_name(),
            "torch": torch.__version__,
            "rows": [asdict(r) for r in rows],
        }
        args.json.write_text(json.dumps(payload, indent=1))
        log(f"wrote {args.json}")
    return 0 if len(rows) == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
