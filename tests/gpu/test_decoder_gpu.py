"""Launch every decoder kernel (rust_examples/decoder.rs) of a bundle on the GPU and compare
with its torch emulation (tests/benchmarks/decode_emulators.py, run on CPU copies of the
same inputs), at shapes derived from each entry's generics: ragged where the kernel masks
(partial row, K and key tiles, a partial prefill chunk), split-K and split attention.

    python -m tests.gpu.build_artifacts OUT         # the catalog's decoder kernels, or
    python -m tests.benchmarks.decode.build OUT           # every specialization the decoder uses
    PYTHONPATH=. CUTILE_GPU_ARTIFACTS=OUT python3 -m pytest tests/gpu/test_decoder_gpu.py -v

Tolerances are relative to the largest reference magnitude: f32 results 1e-4 (accumulation
order), bf16 results 2e-2 (a few bf16 roundings that a different f32 order may flip).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from client_stubs import AssumptionError, BundleEntry, DeviceTensor
from tests.gpu.support import entries, load

torch = pytest.importorskip("torch")

from tests.benchmarks.decode_emulators import EMULATORS  # noqa: E402

pytestmark = pytest.mark.gpu

F32, BF16 = 1e-4, 2e-2
LOG2E = 1.4426950408889634


def _entries(*functions: str) -> list[object]:
    """The general kernels of `functions`: these tests launch ragged shapes, which a variant
    built for 16-multiples (`tests.benchmarks.decode.build` builds them) refuses with
    AssumptionError, as it must; the decoder reaches the variants through `Bundle.kernel`."""
    return [p for p in entries(*functions) if p.values[0] is None or not p.values[0].specificity]


def _g(seed: int) -> torch.Generator:
    return torch.Generator(device="cuda").manual_seed(seed)


def randn(*shape: int, dtype=torch.float32, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, device="cuda", generator=_g(seed)).to(dtype)


def view(t: torch.Tensor) -> DeviceTensor:
    return DeviceTensor.wrap(t)


def _arg(t: torch.Tensor) -> SimpleNamespace:
    """What an emulator reads of an argument: its memory, as a CPU tensor."""
    return SimpleNamespace(layout=SimpleNamespace(owner=t))


def emulate(name: str, generics: dict[str, str], *args: object) -> list[torch.Tensor]:
    """Run `name`'s emulation on CPU copies of the tensor arguments (scalars as they are);
    returns the copies, in argument order, after the emulation wrote its outputs."""
    copies = [a.detach().cpu().clone() if isinstance(a, torch.Tensor) else a for a in args]
    EMULATORS[name](generics, *(_arg(c) if isinstance(c, torch.Tensor) else c for c in copies))
    return copies


def close(got: torch.Tensor, expected: torch.Tensor, tolerance: float) -> None:
    got, expected = got.detach().cpu().double(), expected.double()
    scale = float(expected.abs().max()) or 1.0
    error = float((got - expected).abs().max())
    assert error <= tolerance * scale, f"max error {error:.3g} > {tolerance * scale:.3g}"


def _kernel(entry: BundleEntry, device: int):
    kernel = load(entry, device)
    return kernel, kernel.generics


DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}


def _e(g: dict[str, str], key: str = "E") -> torch.dtype:
    """The entry's element type (bf16, or f16 for the f16 decoder's specializations)."""
    return DTYPES[g.get(key, "bf16")]


@pytest.mark.parametrize("entry", _entries("embedding"))
def test_embedding(entry: BundleEntry, device: int) -> None:
    kernel, g = _kernel(entry, device)
    bd = int(g["BD"])
    table = randn(1000, 3 * bd, dtype=_e(g), seed=1)
    ids = torch.randint(0, 1000, (7,), device="cuda", generator=_g(2), dtype=torch.int32)
    out = torch.zeros(7, 3 * bd, device="cuda", dtype=_e(g))
    kernel(view(out).partition((1, bd)), view(ids), view(table), sync=True)
    close(out, emulate("embedding", g, out, ids, table)[0], 0.0)


def _hidden(g: dict[str, str]) -> int:
    return int(g["HT"]) * 5 // 8  # 2560 under a 4096 tile, 5120 under 8192


@pytest.mark.parametrize("entry", _entries("rms_norm_hf"))
def test_rms_norm(entry: BundleEntry, device: int) -> None:
    kernel, g = _kernel(entry, device)
    h = _hidden(g)
    x, w = randn(5, h, dtype=_e(g), seed=1), randn(h, dtype=_e(g), seed=2)
    out = torch.zeros_like(x)
    kernel(view(out).partition((1, int(g["HT"]))), view(x), view(w), 1e-6, sync=True)
    close(out, emulate("rms_norm_hf", g, out, x, w, 1e-6)[0], BF16)


@pytest.mark.parametrize("entry", _entries("add_rms_norm_hf", "add_rms_norm_row"))
def test_add_rms_norm(entry: BundleEntry, device: int) -> None:
    kernel, g = _kernel(entry, device)
    h, tile = _hidden(g), (1, int(g["HT"]))
    res = randn(5, h, dtype=_e(g), seed=1)
    part, w = randn(int(g["S"]), 5, h, seed=2), randn(h, dtype=_e(g), seed=3)
    res_out, out = torch.zeros_like(res), torch.zeros_like(res)
    args = (view(res_out).partition(tile), view(out).partition(tile), view(res), view(part))
    kernel(*args, view(w), 1e-6, sync=True)
    want = emulate(entry.function, g, res_out, out, res, part, w, 1e-6)
    close(res_out, want[0], BF16)
    close(out, want[1], BF16)


@pytest.mark.parametrize("entry", _entries("gemv", "linear"))
def test_projection_split_k(entry: BundleEntry, device: int) -> None:
    """3 split-K parts over 5 K tiles (the last part shorter), the last N tile partial."""
    kernel, g = _kernel(entry, device)
    bm, bn, bk = int(g.get("BM", "1")), int(g["BN"]), int(g["BK"])
    m, n, k = (2 if bm == 1 else bm + 3), 9 * bn + bn // 2, 5 * bk
    x, w = randn(m, k, dtype=_e(g), seed=1), randn(n, k, dtype=_e(g), seed=2)
    part = torch.zeros(3, m, n, device="cuda", dtype=_e(g, "O"))
    kernel(view(part).partition((1, bm, bn)), view(x), view(w), sync=True)
    tolerance = F32 if g["O"] == "f32" else BF16
    close(part, emulate(entry.function, g, part, x, w)[0], tolerance)


@pytest.mark.parametrize("entry", _entries("gemv"))
def test_split_k_parts_without_tiles_write_zeros(entry: BundleEntry, device: int) -> None:
    """4 parts over 2 K tiles: parts 2 and 3 cover nothing and write zeros."""
    kernel, g = _kernel(entry, device)
    bn, bk = int(g["BN"]), int(g["BK"])
    x, w = randn(1, 2 * bk, dtype=_e(g), seed=3), randn(2 * bn, 2 * bk, dtype=_e(g), seed=4)
    part = torch.full((4, 1, 2 * bn), 7.0, device="cuda", dtype=_e(g, "O"))
    kernel(view(part).partition((1, 1, bn)), view(x), view(w), sync=True)
    tolerance = F32 if g["O"] == "f32" else BF16
    close(part, emulate(entry.function, g, part, x, w)[0], tolerance)
    assert not part[2:].any()


@pytest.mark.parametrize("entry", _entries("gemv_swiglu", "linear_swiglu"))
def test_swiglu_projection(entry: BundleEntry, device: int) -> None:
    kernel, g = _kernel(entry, device)
    bm, bn, bk = int(g.get("BM", "1")), int(g["BN"]), int(g["BK"])
    m, inter, k = (2 if bm == 1 else bm + 3), 11 * bn + 3, 3 * bk
    x = randn(m, k, dtype=_e(g), seed=1)
    w = (randn(2, inter, k, seed=2) / math.sqrt(k)).to(_e(g)) * 4
    act = torch.zeros(m, inter, device="cuda", dtype=_e(g))
    kernel(view(act).partition((bm, bn)), view(x), view(w), sync=True)
    close(act, emulate(entry.function, g, act, x, w)[0], BF16)


def _sequences(g: dict[str, str]) -> tuple[int, int]:
    """(sequences, tokens each): two decode tokens, or one ragged prefill chunk."""
    pt = int(g["PT"])
    return (2, 1) if pt == 1 else (1, pt - 3)


def _q_view(q: torch.Tensor, batch: int, tokens: int, hkv: int) -> torch.Tensor:
    """q [B * P, Hq * D] as the kernels see it: [B * HKV, P, G * D]."""
    if tokens == 1:
        return q.view(batch * hkv, 1, -1)
    return q.view(tokens, hkv, -1).transpose(0, 1)


def _rope(positions: int, d: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    from tests.benchmarks.decode.reference import rope_tables

    config = SimpleNamespace(head_dim=d, rope_theta=1e6)
    return rope_tables(config, positions, dtype, "cuda")  # type: ignore[arg-type]


@pytest.mark.parametrize("entry", entries("qkv_rope"))
def test_qkv_rope(entry: BundleEntry, device: int) -> None:
    """Every variant whose assumptions a ragged chunk meets (the 16-byte-rows one does): its
    token loop skips the tokens past the chunk, which once hung a TMA variant
    (lowering.branch_loads)."""
    kernel, g = _kernel(entry, device)
    groups, hkv, sc, d = int(g["G"]), int(g["HKV"]), int(g["SC"]), int(g["D"])
    batch, tokens = _sequences(g)
    start = sc // 2 - tokens
    qkv = randn(int(g["S"]), batch * tokens, (hkv * groups + 2 * hkv) * d, seed=1)
    qw, kw = ((1 + 0.1 * randn(d, seed=s)).to(_e(g)) for s in (5, 6))
    cos, sin = _rope(sc, d, _e(g))
    q = torch.zeros(batch * tokens, hkv * groups * d, device="cuda", dtype=_e(g))
    kc, vc = (randn(batch * hkv, sc, d, dtype=_e(g), seed=s) for s in (3, 4))
    pos = torch.tensor([start], device="cuda", dtype=torch.int32)
    q3 = _q_view(q, batch, tokens, hkv)
    want = emulate("qkv_rope", g, q3, kc, vc, qkv, qw, kw, cos, sin, pos, tokens, 1e-6)
    cache = (1, sc, d)
    args = (view(q3).partition((1, int(g["PT"]), groups * d)), view(kc).partition(cache))
    args += (view(vc).partition(cache), view(qkv), view(qw), view(kw), view(cos), view(sin))
    try:
        kernel(*args, view(pos), tokens, 1e-6, sync=True)
    except AssumptionError:
        pytest.skip("a variant for 16-multiples: a ragged chunk does not meet it")
    close(q3, want[0], BF16)
    close(kc, want[1], BF16)  # rows other than the new positions untouched
    close(vc, want[2], 1e-2)  # a copy of the rounded sum


@pytest.mark.parametrize("entry", _entries("attention_partial"))
def test_attention_partial_and_merge(entry: BundleEntry, device: int) -> None:
    """Three splits of a causal key range that ends inside a key tile; then the merge (its
    own entry, from the same bundle) against softmax(q k^T / sqrt(D)) v."""
    kernel, g = _kernel(entry, device)
    groups, pt, bn, d = int(g["G"]), int(g["PT"]), int(g["BN"]), int(g["D"])
    hkv, (batch, tokens), splits = 2, _sequences(g), 3
    rows, sc = pt * groups, 8 * bn
    start = 5 * bn + 7 - tokens
    q = randn(batch * tokens, hkv * groups * d, dtype=_e(g), seed=1)
    kc, vc = (randn(batch * hkv, sc, d, dtype=_e(g), seed=s) for s in (2, 3))
    pos = torch.tensor([start], device="cuda", dtype=torch.int32)
    acc = torch.zeros(batch * hkv, splits * rows, d, device="cuda")
    m_max, l_sum = (torch.zeros(batch * hkv, splits * rows, device="cuda") for _ in "ml")
    q3 = _q_view(q, batch, tokens, hkv)
    scale = LOG2E / math.sqrt(d)
    outs = (view(acc).partition((1, rows, d)), view(m_max).partition((1, rows)))
    kernel(
        *outs,
        view(l_sum).partition((1, rows)),
        view(q3),
        view(kc),
        view(vc),
        view(pos),
        scale,
        sync=True,
    )
    want = emulate("attention_partial", g, acc, m_max, l_sum, q3, kc, vc, pos, scale)
    valid = torch.zeros(splits, rows, dtype=torch.bool)
    valid[:, : tokens * groups] = True
    valid = valid.reshape(-1)
    close(m_max.cpu()[:, valid], want[1][:, valid], F32)
    close(l_sum.cpu()[:, valid], want[2][:, valid], 1e-3)
    # acc / l: the attention output of each split (bf16 P in both, rounded at other maxima)
    got = acc.cpu()[:, valid] / l_sum.cpu()[:, valid, None].clamp_min(1e-30)
    close(got, want[0][:, valid] / want[2][:, valid, None].clamp_min(1e-30), BF16)
    att = torch.zeros_like(q)
    att3 = _q_view(att, batch, tokens, hkv)
    expected = emulate("attention_merge", g, att3, *want[:3])[0]
    reference = _attention(q, kc, vc, start, batch, tokens, hkv, groups, d)
    close(expected.reshape(reference.shape), reference, BF16)


def _attention(q, kc, vc, start, batch, tokens, hkv, groups, d):
    """softmax(q k^T / sqrt(D)) v in f64, causal from `start`, in the q3 layout."""
    out = torch.zeros(batch * hkv, tokens, groups * d, dtype=torch.float64)
    qs = _q_view(q, batch, tokens, hkv).cpu().double().reshape(batch * hkv, tokens * groups, d)
    for bh in range(batch * hkv):
        for r in range(tokens * groups):
            visible = start + r // groups + 1
            scores = kc[bh, :visible].cpu().double() @ qs[bh, r] / math.sqrt(d)
            weights = torch.softmax(scores, 0)
            out[bh, r // groups, (r % groups) * d : (r % groups + 1) * d] = (
                weights @ vc[bh, :visible].cpu().double()
            )
    return out


@pytest.mark.parametrize("entry", _entries("attention_merge"))
def test_attention_merge(entry: BundleEntry, device: int) -> None:
    kernel, g = _kernel(entry, device)
    groups, pt, d = int(g["G"]), int(g["PT"]), int(g["D"])
    # three chunks of SPC splits, the last one partial (its missing splits masked)
    hkv, (batch, tokens), splits = 2, _sequences(g), 2 * int(g["SPC"]) + 1
    rows = pt * groups
    acc = randn(batch * hkv, splits * rows, d, seed=1)
    m_max = randn(batch * hkv, splits * rows, seed=2) * 4
    m_max[:, :rows] = -1e30  # an empty split
    l_sum = randn(batch * hkv, splits * rows, seed=3).abs() + 0.5
    l_sum[:, :rows] = 0.0
    att = torch.zeros(batch * tokens, hkv * groups * d, device="cuda", dtype=_e(g))
    att3 = _q_view(att, batch, tokens, hkv)
    kernel(
        view(att3).partition((1, pt, groups * d)), view(acc), view(m_max), view(l_sum), sync=True
    )
    close(att3, emulate("attention_merge", g, att3, acc, m_max, l_sum)[0], BF16)


@pytest.mark.parametrize("entry", _entries("argmax_partial"))
def test_argmax_partial(entry: BundleEntry, device: int) -> None:
    kernel, g = _kernel(entry, device)
    bv = int(g["BV"])
    logits = randn(3, 2 * bv + 100, seed=1)
    logits[1, 5], logits[1, 9] = 50.0, 50.0  # a tie: the lower column
    logits[2, -1] = 60.0  # the maximum in the partial last block
    blocks = 3
    best = torch.zeros(3, blocks, device="cuda")
    index = torch.zeros(3, blocks, device="cuda", dtype=torch.int32)
    kernel(view(best).partition((1, 1)), view(index).partition((1, 1)), view(logits), sync=True)
    want = emulate("argmax_partial", g, best, index, logits)
    close(best, want[0], 0.0)
    close(index, want[1], 0.0)
    assert int(index[1, 0]) == 5 and int(index[2, 2]) == 2 * bv + 99


@pytest.mark.parametrize("entry", _entries("greedy_step"))
def test_greedy_step(entry: BundleEntry, device: int) -> None:
    kernel, g = _kernel(entry, device)
    batch, nbp = int(g["B"]), int(g["NBP"])
    blocks = max(1, nbp - 5)
    best = randn(batch, blocks, seed=1)
    index = torch.randint(
        0, 10**6, (batch, blocks), device="cuda", generator=_g(2), dtype=torch.int32
    )
    if blocks > 2:
        best[0, 1] = best[0, 2] = 99.0  # a tie between blocks: the lower stored index
    token = torch.zeros(batch, device="cuda", dtype=torch.int32)
    pos_in = torch.tensor([77], device="cuda", dtype=torch.int32)
    pos_out = torch.zeros(1, device="cuda", dtype=torch.int32)
    args = (view(token).partition((batch,)), view(pos_out).partition((1,)), view(best), view(index))
    kernel(*args, view(pos_in), 3, sync=True)
    want = emulate("greedy_step", g, token, pos_out, best, index, pos_in, 3)
    close(token, want[0], 0.0)
    assert int(pos_out[0]) == 80


@pytest.mark.parametrize("entry", _entries("advance_position"))
def test_advance_position(entry: BundleEntry, device: int) -> None:
    kernel, _ = _kernel(entry, device)
    pos_in = torch.tensor([41], device="cuda", dtype=torch.int32)
    pos_out = torch.zeros(1, device="cuda", dtype=torch.int32)
    kernel(view(pos_out).partition((1,)), view(pos_in), 16, sync=True)
    assert int(pos_out[0]) == 57
