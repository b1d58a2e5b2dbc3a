"""tests/benchmarks/decode's host on the CPU (torch CPU; skipped without torch): every launch of
prefill and of the captured decode graphs passes its kernel's real launch checks, and with
the kernels emulated (tests/benchmarks/decode_emulation.py) our decoder produces the torch
reference's logits and greedy tokens, at a small Qwen3-shaped model, two sequences, a
prompt of one full and one partial prefill chunk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from tests.benchmarks.decode import kernels as K  # noqa: E402
from tests.benchmarks.decode.config import ModelConfig  # noqa: E402
from tests.benchmarks.decode.model import Decoder, Plan, default_plan  # noqa: E402
from tests.benchmarks.decode.reference import Reference, rope_tables  # noqa: E402
from tests.benchmarks.decode.weights import random_weights  # noqa: E402
from tests.benchmarks.decode_emulation import FakeBundle, Harness  # noqa: E402

SMALL = ModelConfig(
    name="small",
    hidden=512,
    layers=2,
    heads=4,
    kv_heads=2,
    head_dim=64,
    intermediate=1024,
    vocab=5000,  # two argmax blocks, the second partial
    tied=False,
)
BATCH, CACHE, PROMPT, STEPS = 2, 64, K.PREFILL_PT + 3, 5


@pytest.fixture(scope="module")
def bundle() -> FakeBundle:
    return FakeBundle()


def _setup(bundle: FakeBundle, plan: Plan | None = None):
    weights = random_weights(SMALL, 3, torch.bfloat16, device="cpu")
    rope = rope_tables(SMALL, CACHE, torch.bfloat16, "cpu")
    plan = plan or default_plan(SMALL, BATCH, CACHE)
    ours = Decoder(bundle, SMALL, weights, rope, BATCH, CACHE, plan)  # type: ignore[arg-type]
    return ours, Reference(SMALL, weights, BATCH, CACHE, rope)


def _close(ours: torch.Tensor, theirs: torch.Tensor) -> float:
    return float((ours.float() - theirs.float()).abs().max() / theirs.float().abs().max())


@pytest.mark.parametrize("splits", [1, 2])
def test_prefill_and_graph_decode_match_the_reference(
    bundle: FakeBundle, monkeypatch: pytest.MonkeyPatch, splits: int
) -> None:
    harness = Harness(monkeypatch)
    plan = default_plan(SMALL, BATCH, CACHE)
    for name in ("qkv", "o", "down"):
        plan.projections[name] = K.Projection(plan.projections[name].spec, splits)
    plan.splits = 2 * splits
    ours, ref = _setup(bundle, plan)
    prompt = torch.randint(
        0, SMALL.vocab, (BATCH, PROMPT), generator=torch.Generator().manual_seed(5)
    )
    ours.prefill(prompt.tolist())
    theirs = ref.forward(prompt, 0, exact=True)
    assert _close(ours.logits[0], theirs) < 0.02
    assert ours.a.tok.tolist() == theirs.argmax(-1).int().tolist()
    assert int(ours.a.pos[0]) == PROMPT
    graphs = ours.capture()
    assert len(graphs["abba"].launches) == 2 * len(graphs["ab"].launches)
    tok, position = theirs.argmax(-1), PROMPT
    for step in range(STEPS):
        graphs["ab" if step % 2 == 0 else "ba"].replay(sync=True)
        state = ours.b if step % 2 == 0 else ours.a
        theirs = ref.forward(tok[:, None], position, exact=True)
        assert _close(ours.logits[0], theirs) < 0.02, step
        tok, position = theirs.argmax(-1), position + 1
        assert state.tok.tolist() == tok.int().tolist(), step
        assert int(state.pos[0]) == position
    # two steps per replay, back at state A
    before = ours.a.pos.clone()
    graphs["abba"].replay(sync=True)
    assert int(ours.a.pos[0]) == int(before[0]) + 2
    ours.close_graphs()
    assert harness.launches.count("qkv_rope") >= SMALL.layers * BATCH


def test_every_projection_candidate_passes_its_launch_checks(
    bundle: FakeBundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.benchmarks.decode.kernels import candidates

    Harness(monkeypatch)
    ours, _ = _setup(bundle)
    x = torch.randn(BATCH, SMALL.hidden).to(torch.bfloat16)
    for name in ("qkv", "gate_up", "lm_head"):
        for choice in candidates(SMALL, name, BATCH, "bf16"):
            if name == "gate_up":
                ours.swiglu(choice, ours.act, x, ours.w["layers.0.gate_up"]).sync()
            else:
                part = torch.zeros(
                    choice.splits, BATCH, ours.head.shape[0] if name == "lm_head" else SMALL.qkv_dim
                )
                w = ours.head if name == "lm_head" else ours.w["layers.0.qkv"]
                ours.projection(choice, part, x, w).sync()
                expected = x.float() @ w.float().T
                assert _close(part.sum(0), expected) < 1e-5, choice.label()


CUTILE_RS = Path(os.environ.get("CUTILE_RS", "/work/cutile-rs"))


@pytest.mark.skipif(
    not (CUTILE_RS / "cutile-kernels").is_dir(), reason="no cutile-rs checkout (CUTILE_RS)"
)
def test_f16_decoder_over_cutile_kernels_matches_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.benchmarks.decode.model_f16 import CutileKernelsDecoder

    harness = Harness(monkeypatch)
    bundle = FakeBundle(CUTILE_RS)
    weights = random_weights(SMALL, 3, torch.float16, device="cpu")
    rope = rope_tables(SMALL, CACHE, torch.float16, "cpu")
    ours = CutileKernelsDecoder(bundle, SMALL, weights, CACHE, with_logits=True)  # type: ignore[arg-type]
    ref = Reference(SMALL, weights, 1, CACHE, rope)
    prompt = torch.randint(0, SMALL.vocab, (1, 5), generator=torch.Generator().manual_seed(5))
    graphs = ours.capture()
    ours.prefill(prompt[0].tolist(), graphs)
    theirs = ref.forward(prompt, 0, exact=True)
    assert _close(ours.logits[0], theirs) < 0.02
    assert ours.a.tok.tolist() == theirs.argmax(-1).int().tolist()
    assert int(ours.a.pos[0]) == 5
    tok, position = theirs.argmax(-1), 5
    for step in range(3):
        graphs["ab" if step % 2 == 0 else "ba"].replay(sync=True)
        state = ours.b if step % 2 == 0 else ours.a
        theirs = ref.forward(tok[:, None], position, exact=True)
        assert _close(ours.logits[0], theirs) < 0.02, step
        tok, position = theirs.argmax(-1), position + 1
        assert state.tok.tolist() == tok.int().tolist(), step
    ours.close_graphs()
    used = set(harness.launches)
    assert {"fmha_decode_gqa_split", "qk_rope_dynpos_f16", "lm_head_argmax_blocks_f16"} <= used
