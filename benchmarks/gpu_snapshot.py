"""A first look at kernel speed on the GPU: example kernels from a bundle next to torch.

    PYTHONPATH=. python3 -m benchmarks.gpu_snapshot BUNDLE

Times each launch with CUDA events (median of 20 after 3 warm-ups) and prints bandwidth
or TFLOP/s for: element-wise add (f32, 2^28 elements) and GEMM (f16 4096^3 without facts
and as the `--facts` variant; f16 and bf16 at 4096^3 and 8192^3 with declared stride
preconditions, `gemm_aligned`).
"""

from __future__ import annotations

import sys

import torch

from benchmarks.timing import median_seconds
from client_stubs import Bundle, DeviceTensor


def add(bundle: Bundle) -> None:
    n = 1 << 28
    kernel = bundle.kernel("add", {"B": "1024"})
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    z = torch.empty_like(x)
    part = DeviceTensor.wrap(z).partition((1024,))
    args = (part, DeviceTensor.wrap(x), DeviceTensor.wrap(y))
    ours = median_seconds(lambda: kernel(*args))
    theirs = median_seconds(lambda: torch.add(x, y, out=z))
    moved = 3 * 4 * n
    print(
        f"add f32 2^28: ours {moved / ours / 1e12:.2f} TB/s, torch {moved / theirs / 1e12:.2f} TB/s"
    )


def gemm(
    bundle: Bundle,
    function: str = "gemm",
    dtype: str = "f16",
    size: int = 4096,
    *,
    general: bool = False,
) -> None:
    """`general`: the kernel compiled without tensor facts even when a variant with facts
    exists (otherwise the bundle picks the most specialized variant these tensors meet)."""
    m = n = k = size
    generics = {"E": dtype, "BM": "128", "BN": "128", "BK": "64"}
    element = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    x = torch.randn(m, k, device="cuda", dtype=element)
    y = torch.randn(k, n, device="cuda", dtype=element)
    z = torch.empty(m, n, device="cuda", dtype=element)
    args = (DeviceTensor.wrap(z).partition((128, 128)), DeviceTensor.wrap(x), DeviceTensor.wrap(y))
    if general:
        found = [e for e in bundle.entries if e.function == function and e.matches(generics)]
        kernel = bundle.load(next(e for e in found if not e.specificity))
        function += " (no facts)"
    else:
        kernel = bundle.kernel(function, generics, for_args=args)
    ours = median_seconds(lambda: kernel(*args))
    theirs = median_seconds(lambda: torch.matmul(x, y, out=z))
    flops = 2 * m * n * k
    print(
        f"{function} {dtype} {size}^3: ours {flops / ours / 1e12:.0f} TFLOP/s, "
        f"torch {flops / theirs / 1e12:.0f} TFLOP/s"
    )


def main() -> None:
    bundle = Bundle.open(sys.argv[1])
    add(bundle)
    gemm(bundle, general=True)
    gemm(bundle)  # the --facts variant (see tests/gpu/build_artifacts.py)
    for dtype in ("f16", "bf16"):
        for size in (4096, 8192):
            gemm(bundle, "gemm_aligned", dtype, size)


if __name__ == "__main__":
    main()
