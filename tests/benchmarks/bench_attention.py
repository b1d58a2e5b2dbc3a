"""Flash attention forward in bf16, ours vs torch's scaled_dot_product_attention.

Ours: the autotuned fastest of `flash_attention` tile sizes and the latency-hinted
`flash_attention_tuned` (causal by loop bounds in both). L = 1k ... 16k, D = 64 and 128,
causal and not, with B = 16384 / L sequences of H = 32 heads (B = 4 at L = 4096).

    PYTHONPATH=. python3 -m tests.benchmarks.bench_attention BUNDLE [--json OUT.json] [--quick]

FLOPs: 4 * B * H * L^2 * D, halved when causal.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import torch
from torch.nn.functional import scaled_dot_product_attention

from client_stubs import Bundle, DeviceTensor
from client_stubs.autotune import Prepare
from tests.benchmarks import configs
from tests.benchmarks.family import (
    Reference,
    Row,
    checked,
    fastest,
    max_error,
    parse_args,
    report,
)

LENGTHS = (1024, 2048, 4096, 8192, 16384)
HEADS = 32
TOKENS = 16384
TOLERANCE = 2e-2


def candidates(bundle: Bundle, d: int, causal: bool, out, q, k, v) -> dict[str, Prepare]:  # type: ignore[no-untyped-def]
    scale = 1.0 / math.sqrt(d) * math.log2(math.e)

    def prepare(function: str, generics: dict[str, str]) -> Prepare:
        def load():  # type: ignore[no-untyped-def]
            part = DeviceTensor.wrap(out).partition((int(generics["BM"]), 1, d))
            args = (part, *map(DeviceTensor.wrap, (q, k, v)), scale)
            kernel = bundle.kernel(function, generics, for_args=args)
            return lambda: kernel(*args)

        return load

    common = {"E": "bf16", "D": str(d), "CAUSAL": str(int(causal))}
    found = {
        f"BM={bm},BN={bn}": prepare("flash_attention", {**common, "BM": bm, "BN": bn})
        for bm, bn in configs.ATTENTION_TILES[d]
    }
    for bm, bn, lat, occ, warps in configs.ATTENTION_TUNED_TILES[d]:
        generics = {**common, "BM": bm, "BN": bn, "LAT": lat, "OCC": occ, "WARPS": warps}
        found[f"tuned BM={bm},BN={bn} lat{lat} occ{occ} w{warps}"] = prepare(
            "flash_attention_tuned", generics
        )
    return found


def measure(bundle: Bundle, length: int, d: int, causal: bool, tune_cache: Path) -> Row:
    batch = max(1, TOKENS // length)
    torch.manual_seed(0)
    q, k, v = (
        torch.randn(batch, HEADS, length, d, device="cuda", dtype=torch.bfloat16) for _ in range(3)
    )
    out = torch.empty_like(q)
    expected = scaled_dot_product_attention(q, k, v, is_causal=causal)
    # the kernels' sequence-major [L, B * H, D] views of the [B, H, L, D] tensors
    views = [t.view(batch * HEADS, length, d).transpose(0, 1) for t in (out, q, k, v)]
    found = {
        name: checked(prepare, out, expected, TOLERANCE)
        for name, prepare in candidates(bundle, d, causal, *views).items()
    }
    kind = "causal" if causal else "non-causal"
    reference = Reference(lambda: scaled_dot_product_attention(q, k, v, is_causal=causal))
    name, ours, launch, tried = fastest(
        f"flash_attention {kind} D={d}", (length,), found, tune_cache
    )
    launch()
    error = max_error(out, expected)
    theirs = reference.seconds()
    flops = 4 * batch * HEADS * length * length * d // (2 if causal else 1)
    return Row(
        "attention",
        f"flash attention {kind} D={d}",
        f"{batch}x{HEADS}x{length}x{d}",
        flops,
        "TFLOP/s",
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
    tune_cache = args.tune_cache
    lengths = (4096,) if args.quick else LENGTHS
    rows = [
        measure(bundle, length, d, causal, tune_cache)
        for d in configs.ATTENTION_TILES
        for causal in (False, True)
        for length in lengths
    ]
    report("tests.benchmarks.bench_attention", "flash attention", rows, args.json)


if __name__ == "__main__":
    main()
