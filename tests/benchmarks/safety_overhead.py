"""What bounds safety costs on the GPU: each safe kernel next to its `unchecked_accesses`
twin, timed in turns in one run.

    PYTHONPATH=. python3 -m tests.benchmarks.safety_overhead BUNDLE [--repeats N]

Pairs (a bundle from `python -m tests.gpu.build_artifacts`): `gemm_aligned` vs
`gemm_unchecked` (f16, BM=BN=128, BK=64, at 4096^3 and 8192^3) and `flash_attention` vs
`flash_attention_unchecked` (bf16, BM=128, BN=64, D=128, B=4, H=32, L=4096, causal and not).
Each row: median seconds per launch over N rounds (each round times 3 back-to-back
launches of each kernel, in alternating order, after warm-up), TFLOP/s, the time ratio
safe/unchecked (1.00 = parity; above 1 the checks cost time), the safe kernel's in-kernel
checks (at the access, and hoisted to a loop preheader), and the largest difference
between the two kernels' outputs (they compute the same thing).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from client_stubs import Bundle, DeviceTensor, Kernel
from tests.benchmarks.timing import interleaved_medians

GEMM_TILES = {"BM": "128", "BN": "128", "BK": "64"}
ATTENTION_TILES = {"BM": "128", "BN": "64", "D": "128"}
BATCH, HEADS, LENGTH, HEAD_DIM = 4, 32, 4096, 128


@dataclass(frozen=True)
class Pair:
    label: str
    flops: float
    safe: Kernel
    unchecked: Kernel
    output: Callable[[], torch.Tensor]  # a fresh output tensor
    arguments: Callable[[torch.Tensor], tuple[object, ...]]  # the launch arguments for it


@dataclass(frozen=True)
class Row:
    label: str
    safe_s: float
    unchecked_s: float
    flops: float
    checks_in_place: int  # the safe kernel's, at the access
    checks_in_preheader: int  # the safe kernel's, hoisted before a loop
    output_difference: float


def gemm_pair(bundle: Bundle, size: int) -> Pair:
    generics = {"E": "f16", **GEMM_TILES}
    x = torch.randn(size, size, device="cuda", dtype=torch.float16)
    y = torch.randn(size, size, device="cuda", dtype=torch.float16)
    inputs = (DeviceTensor.wrap(x), DeviceTensor.wrap(y))
    return Pair(
        f"gemm f16 {size}^3",
        2.0 * size**3,
        bundle.kernel("gemm_aligned", generics),
        bundle.kernel("gemm_unchecked", generics, allow_unchecked=True),
        lambda: torch.empty(size, size, device="cuda", dtype=torch.float16),
        lambda z: (DeviceTensor.wrap(z).partition((128, 128)), *inputs),
    )


def attention_pair(bundle: Bundle, causal: bool) -> Pair:
    generics = {"E": "bf16", **ATTENTION_TILES, "CAUSAL": str(int(causal))}
    shape = (BATCH * HEADS, LENGTH, HEAD_DIM)

    def tensor() -> torch.Tensor:  # the kernels' sequence-major [L, B * H, D] view
        return torch.randn(shape, device="cuda", dtype=torch.bfloat16).transpose(0, 1)

    inputs = tuple(DeviceTensor.wrap(tensor()) for _ in range(3))
    qk_scale = math.log2(math.e) / math.sqrt(HEAD_DIM)
    tiles = (int(ATTENTION_TILES["BM"]), 1, HEAD_DIM)
    # two products of L x L x D per head; the causal kernel skips the blocks past the diagonal
    flops = 4.0 * BATCH * HEADS * LENGTH * LENGTH * HEAD_DIM * (0.5 if causal else 1.0)
    # the variants specialized for 16-multiples when the bundle has them (the TMA path)
    fit = (DeviceTensor.wrap(tensor()).partition(tiles), *inputs, qk_scale)
    return Pair(
        f"flash attention bf16 {BATCH}x{HEADS}x{LENGTH}x{HEAD_DIM}" + (" causal" if causal else ""),
        flops,
        bundle.kernel("flash_attention", generics, for_args=fit),
        bundle.kernel("flash_attention_unchecked", generics, allow_unchecked=True, for_args=fit),
        tensor,
        lambda out: (DeviceTensor.wrap(out).partition(tiles), *inputs, qk_scale),
    )


def measure(pair: Pair, repeats: int) -> Row:
    safe_out, unchecked_out = pair.output(), pair.output()
    safe_args, unchecked_args = pair.arguments(safe_out), pair.arguments(unchecked_out)
    safe_s, unchecked_s = interleaved_medians(
        [lambda: pair.safe(*safe_args), lambda: pair.unchecked(*unchecked_args)],
        warmup=5,
        repeats=repeats,
        inner=3,
    )
    difference = (safe_out.float() - unchecked_out.float()).abs().max().item()
    safety = pair.safe.contract.safety
    return Row(
        pair.label,
        safe_s,
        unchecked_s,
        pair.flops,
        safety.checks_in_place,
        safety.checks_hoisted_to_preheader,
        difference,
    )


def print_table(rows: list[Row]) -> None:
    header = (
        f"{'kernel':<42} {'safe ms':>9} {'unchk ms':>9} {'safe TF/s':>10} {'unchk TF/s':>10} "
        f"{'safe/unchk':>10} {'in place':>8} {'preheader':>9} {'max diff':>9}"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        print(
            f"{row.label:<42} {row.safe_s * 1e3:>9.3f} {row.unchecked_s * 1e3:>9.3f} "
            f"{row.flops / row.safe_s / 1e12:>10.1f} {row.flops / row.unchecked_s / 1e12:>10.1f} "
            f"{row.safe_s / row.unchecked_s:>10.4f} {row.checks_in_place:>8} "
            f"{row.checks_in_preheader:>9} "
            f"{row.output_difference:>9.2g}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle")
    parser.add_argument("--repeats", type=int, default=30, help="timed rounds per pair")
    args = parser.parse_args(argv)
    bundle = Bundle.open(args.bundle)
    torch.manual_seed(0)
    rows = []
    for make in (
        lambda: gemm_pair(bundle, 4096),
        lambda: gemm_pair(bundle, 8192),
        lambda: attention_pair(bundle, causal=False),
        lambda: attention_pair(bundle, causal=True),
    ):
        rows.append(measure(make(), args.repeats))
        torch.cuda.empty_cache()
    print(f"{torch.cuda.get_device_name()}, median of {args.repeats} interleaved rounds")
    print_table(rows)


if __name__ == "__main__":
    main()
