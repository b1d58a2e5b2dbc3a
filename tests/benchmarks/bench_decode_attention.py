"""Decode-shaped attention: one query token per sequence over a long KV cache with GQA (Qwen3-4B's
heads: 32 query heads sharing 8 KV heads, D = 128), bf16. Ours: rust_examples/decoder.rs's
split-K `attention_partial` + `attention_merge` (autotuned among key tiles and split counts)
vs the faster of torch's scaled_dot_product_attention with `enable_gqa=True` and with the KV
heads expanded beforehand (the expansion untimed).

    PYTHONPATH=. python3 -m tests.benchmarks.bench_decode_attention BUNDLE [--json F] [--quick]

Work: the KV cache bytes read (2 * B * 8 * L * D * 2), in TB/s.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from torch.nn.functional import scaled_dot_product_attention

from client_stubs import Bundle, DeviceTensor
from client_stubs.autotune import Prepare
from tests.benchmarks import configs
from tests.benchmarks.family import Reference, Row, checked, fastest, max_error, parse_args, report
from tests.benchmarks.timing import median_seconds

KV_HEADS, GROUP, D = 8, 4, 128
SMS = 132
# (batch, KV length)
SHAPES = ((1, 8192), (1, 32768), (8, 8192), (32, 8192), (64, 4096))
TOLERANCE = 2e-2
LOG2E = math.log2(math.e)


def split_counts(batch: int, length: int, block_n: int) -> list[int]:
    """Split-K factors to try: around one and two blocks per SM, at least two key tiles each."""
    rows = batch * KV_HEADS
    counts = {max(1, -(-SMS * f // rows)) for f in (1, 2, 4)}
    return sorted(c for c in counts if c * 2 * block_n <= length) or [1]


def candidates(bundle: Bundle, batch: int, length: int, att3, q3, k, v, pos) -> dict[str, Prepare]:  # type: ignore[no-untyped-def]
    rows_per_split = GROUP
    merge = bundle.kernel("attention_merge", configs.DECODE_ATTENTION_SHAPE)
    scale = LOG2E / math.sqrt(D)

    def prepare(tiles: dict[str, str], splits: int) -> Prepare:
        def load() -> Callable[[], object]:
            generics = {**configs.DECODE_ATTENTION_SHAPE, **tiles}
            partial = bundle.kernel("attention_partial", generics)
            acc = torch.empty(batch * KV_HEADS, splits * rows_per_split, D, device="cuda")
            m_max = torch.empty(batch * KV_HEADS, splits * rows_per_split, device="cuda")
            l_sum = torch.empty_like(m_max)
            wrap = DeviceTensor.wrap
            first = (
                wrap(acc).partition((1, rows_per_split, D)),
                wrap(m_max).partition((1, rows_per_split)),
                wrap(l_sum).partition((1, rows_per_split)),
                *map(wrap, (q3, k, v, pos)),
                scale,
            )
            second = (wrap(att3).partition((1, 1, GROUP * D)), *map(wrap, (acc, m_max, l_sum)))

            def launch() -> None:
                partial(*first)
                merge(*second)

            return launch

        return load

    found = {}
    for bn, lat, occ in configs.DECODE_ATTENTION_TILES:
        for splits in split_counts(batch, length, int(bn)):
            tiles = {"BN": bn, "LAT": lat, "OCC": occ, "R": "2"}  # 8 query rows: wgmma
            found[f"BN={bn} lat{lat} occ{occ} {splits} splits"] = prepare(tiles, splits)
    return found


def torch_reference(q, k, v) -> Callable[[], torch.Tensor]:  # type: ignore[no-untyped-def]
    """The faster of SDPA with enable_gqa and SDPA over expanded KV heads."""
    expanded_k = k.repeat_interleave(GROUP, dim=1)
    expanded_v = v.repeat_interleave(GROUP, dim=1)
    ways = {
        "gqa": lambda: scaled_dot_product_attention(q, k, v, enable_gqa=True),
        "expanded": lambda: scaled_dot_product_attention(q, expanded_k, expanded_v),
    }
    return min(ways.values(), key=median_seconds)


def measure(bundle: Bundle, batch: int, length: int, tune_cache: Path) -> Row:
    torch.manual_seed(0)
    bf16 = torch.bfloat16
    q = torch.randn(batch, KV_HEADS * GROUP, 1, D, device="cuda", dtype=bf16)
    k, v = (torch.randn(batch, KV_HEADS, length, D, device="cuda", dtype=bf16) for _ in range(2))
    expected = scaled_dot_product_attention(q, k, v, enable_gqa=True)
    # ours: q3 [B * HKV, 1, G * D] (query head h * G + g), caches [B * HKV, L, D]
    q3 = q.view(batch * KV_HEADS, 1, GROUP * D)
    k3, v3 = (t.view(batch * KV_HEADS, length, D) for t in (k, v))
    att3 = torch.empty_like(q3)
    pos = torch.tensor([length - 1], device="cuda", dtype=torch.int32)
    expected3 = expected.reshape(batch * KV_HEADS, 1, GROUP * D)
    found = {
        name: checked(prepare, att3, expected3, TOLERANCE)
        for name, prepare in candidates(bundle, batch, length, att3, q3, k3, v3, pos).items()
    }
    reference = Reference(torch_reference(q, k, v))
    name, ours, launch, tried = fastest("decode attention", (batch, length), found, tune_cache)
    launch()
    error = max_error(att3, expected3)
    theirs = reference.seconds()
    kv_bytes = 2 * batch * KV_HEADS * length * D * 2
    return Row(
        "decode_attention",
        "decode attention GQA 32/8 D=128",
        f"B={batch} L={length}",
        kv_bytes,
        "TB/s",
        ours,
        theirs,
        name,
        error,
        TOLERANCE,
        tried=tried,
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(__doc__.splitlines()[0], argv)
    bundle = Bundle.open(args.bundle)
    shapes = SHAPES[:2] if args.quick else SHAPES
    rows = [measure(bundle, b, n, args.tune_cache) for b, n in shapes]
    report("tests.benchmarks.bench_decode_attention", "decode attention", rows, args.json)


if __name__ == "__main__":
    main()
