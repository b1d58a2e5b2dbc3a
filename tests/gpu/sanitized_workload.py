"""A small workload of safe kernels for compute-sanitizer: add, gemm_aligned, softmax,
flash attention (causal) and gather_tiles from a bundle, at small ragged shapes, each checked
against numpy. It uses only the client and numpy (no torch), so every kernel the sanitizer
sees is one of ours.

    compute-sanitizer --tool memcheck --error-exitcode 1 \
        python -m tests.gpu.sanitized_workload BUNDLE

Prints one line per kernel and `workload ok` at the end; exits 1 when a result is wrong.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable

import numpy as np

from client_stubs import Bundle, DeviceTensor, driver
from tests.gpu.references import softmax
from tests.gpu.test_launch_gpu import as_float, rounded, upload

TOLERANCE = {"f32": 1e-3, "f16": 1e-2, "bf16": 3e-2}
RNG = np.random.default_rng(7)


def _values(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return rounded(RNG.standard_normal(shape), dtype)


def _error(got: DeviceTensor, expected: np.ndarray, dtype: str) -> tuple[float, float]:
    """(max abs error, tolerance relative to the largest expected magnitude)."""
    host = as_float(got.to_numpy(), dtype)
    return float(np.abs(host - expected).max()), TOLERANCE[dtype] * max(
        1.0, float(np.abs(expected).max())
    )


def add(bundle: Bundle) -> tuple[float, float]:
    kernel = bundle.kernel("add", {"B": "1024"})
    x, y = _values((5000,), "f32"), _values((5000,), "f32")
    z = DeviceTensor.zeros((5000,), "f32").partition((1024,))
    kernel(z, upload(x, "f32"), upload(y, "f32"), sync=True)
    return _error(z.unpartition(), x + y, "f32")


def gemm_aligned(bundle: Bundle) -> tuple[float, float]:
    kernel = bundle.kernel("gemm_aligned", {"E": "f16", "BM": "128", "BN": "128", "BK": "64"})
    m, n, k = 200, 136, 72  # ragged edges; K and the row strides are multiples of 8
    x, y = _values((m, k), "f16"), _values((k, n), "f16")
    z = DeviceTensor.zeros((m, n), "f16").partition((128, 128))
    kernel(z, upload(x, "f16"), upload(y, "f16"), sync=True)
    return _error(z.unpartition(), x @ y, "f16")


def softmax_rows(bundle: Bundle) -> tuple[float, float]:
    kernel = bundle.kernel("softmax", {"BM": "4", "N": "1024"})
    x = _values((37, 1024), "f32")
    out = DeviceTensor.zeros((37, 1024), "f32").partition((4, 1024))
    kernel(out, upload(x, "f32"), sync=True)
    return _error(out.unpartition(), softmax(x), "f32")


def flash_attention(bundle: Bundle) -> tuple[float, float]:
    generics = {"E": "bf16", "BM": "64", "BN": "64", "D": "64", "CAUSAL": "1"}
    kernel = bundle.kernel("flash_attention", generics)
    heads, length, d = 2, 200, 64
    # sequence-major [L, heads, D], the kernel's layout
    q, k, v = (_values((length, heads, d), "bf16") for _ in range(3))
    out = DeviceTensor.zeros((length, heads, d), "bf16").partition((64, 1, d))
    scale = 1.0 / math.sqrt(d)
    args = (upload(q, "bf16"), upload(k, "bf16"), upload(v, "bf16"))
    kernel(out, *args, scale * math.log2(math.e), sync=True)
    qh, kh, vh = (t.transpose(1, 0, 2) for t in (q, k, v))  # [heads, L, D]
    scores = qh @ kh.transpose(0, 2, 1) * scale
    scores[:, np.triu(np.ones((length, length), dtype=bool), 1)] = -np.inf
    weights = np.exp(scores - scores.max(axis=2, keepdims=True))
    expected = (weights / weights.sum(axis=2, keepdims=True) @ vh).transpose(1, 0, 2)
    return _error(out.unpartition(), expected, "bf16")


def gather_tiles(bundle: Bundle) -> tuple[float, float]:
    kernel = bundle.kernel("gather_tiles")
    (tile,) = next(p for p in kernel.spec.params if p.name == "z").tile_shape
    x = np.arange(4 * tile, dtype=np.float64)
    order = np.array([3, 0, 2], dtype=np.int32)  # in bounds: the check stays and passes
    z = DeviceTensor.zeros((3 * tile,), "f32").partition((tile,))
    kernel(z, upload(x, "f32"), DeviceTensor.from_numpy(order), sync=True)
    expected = np.concatenate([x[i * tile : (i + 1) * tile] for i in order])
    return _error(z.unpartition(), expected, "f32")


WORKLOAD: dict[str, Callable[[Bundle], tuple[float, float]]] = {
    "add": add,
    "gemm_aligned": gemm_aligned,
    "softmax": softmax_rows,
    "flash_attention": flash_attention,
    "gather_tiles": gather_tiles,
}


def main(argv: list[str]) -> int:
    (root,) = argv
    driver.ensure_context(0)
    bundle = Bundle.open(root)
    wrong = []
    for name, run in WORKLOAD.items():
        error, tolerance = run(bundle)
        print(f"{name}: max abs error {error:.3g} (tolerance {tolerance:.3g})")
        if not error <= tolerance:
            wrong.append(name)
    if wrong:
        print(f"wrong results: {', '.join(wrong)}", file=sys.stderr)
        return 1
    print("workload ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
