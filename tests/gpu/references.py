"""numpy references for the example kernels, in float64 (compare with a dtype's tolerance).

One function per entry point, named after it; each takes the kernel's inputs (and scalars)
as float64 arrays and returns the expected output.
"""

from __future__ import annotations

import numpy as np


def softmax(x: np.ndarray) -> np.ndarray:
    """rust_examples/softmax.rs `softmax` and `softmax_mixed`: row-wise softmax of [M, N]."""
    shifted = x - x.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    """rust_examples/rms_norm.rs `rms_norm`: x [M, N], w [N]."""
    mean_square = (x * x).mean(axis=1, keepdims=True)
    return x / np.sqrt(mean_square + eps) * w[None, :]


def layer_norm(x: np.ndarray, eps: float) -> np.ndarray:
    """rust_examples/rms_norm.rs `layer_norm` (no affine parameters): x [M, N]."""
    centered = x - x.mean(axis=1, keepdims=True)
    variance = (centered * centered).mean(axis=1, keepdims=True)
    return centered / np.sqrt(variance + eps)


REFERENCES = {
    "softmax": softmax,
    "softmax_mixed": softmax,
    "rms_norm": rms_norm,
    "layer_norm": layer_norm,
}
