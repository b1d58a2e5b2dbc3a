"""Launch the row-wise examples on a GPU and compare with numpy: softmax and softmax_mixed
(rust_examples/softmax.rs), rms_norm and layer_norm (rust_examples/rms_norm.rs).

Needs a CUDA device and `CUTILE_GPU_ARTIFACTS` = a bundle folder holding some of them, e.g.

    cutile-compile rust_examples/softmax.rs rust_examples/rms_norm.rs --entry softmax \\
        --entry softmax_mixed --entry rms_norm --entry layer_norm --generics softmax:BM=4,N=1024 \\
        --generics softmax_mixed:E=f16,BM=2,N=512 --generics rms_norm:N=4096,BLOCK_SIZE=1024 \\
        --generics layer_norm:E=bf16,BM=4,N=1024 --arch sm_90 -o OUT

Every entry of those functions in the bundle is tested; skipped otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest

from client_stubs import BundleEntry, DeviceTensor, Kernel
from client_stubs.contract import SCALAR, TENSOR_IN, TENSOR_OUT, ParamSpec
from tests.gpu.references import layer_norm, rms_norm, softmax
from tests.gpu.support import entries as _entries
from tests.gpu.support import load
from tests.gpu.test_launch_gpu import as_float, rounded, upload

pytestmark = pytest.mark.gpu

ROWS = 37  # not a multiple of any block of rows: the last block is partial
EPS = 1e-5
# relative tolerance of the result: the output rounding plus a few f32 roundings
TOLERANCE = {"f32": 2e-5, "f16": 2e-3, "bf16": 1.6e-2}


def roles(kernel: Kernel) -> tuple[ParamSpec, list[ParamSpec], list[ParamSpec]]:
    (out,) = [p for p in kernel.spec.params if p.kind == TENSOR_OUT]
    inputs = [p for p in kernel.spec.params if p.kind == TENSOR_IN]
    scalars = [p for p in kernel.spec.params if p.kind == SCALAR]
    return out, inputs, scalars


def matrix(values: np.ndarray, dtype: str) -> DeviceTensor:
    rows, cols = values.shape
    return upload(values.reshape(-1), dtype).reshape((rows, cols))


def run_rows(
    kernel: Kernel, inputs: dict[str, np.ndarray], scalars: dict[str, float], cols: int
) -> tuple[np.ndarray, str]:
    """Launch with each input (by parameter name) and a [ROWS, cols] output; the output."""
    out, ins, scalar_params = roles(kernel)
    dtype = out.dtype
    z = matrix(np.zeros((ROWS, cols)), dtype)
    part = z.partition(out.tile_shape)
    args: list[object] = [None] * len(kernel.spec.params)
    args[out.index] = part
    for spec in ins:
        values = inputs[spec.name]
        args[spec.index] = (
            matrix(values, spec.dtype) if values.ndim == 2 else upload(values, spec.dtype)
        )
    for spec in scalar_params:
        args[spec.index] = scalars[spec.name]
    kernel(*args, sync=True)
    part.unpartition()
    return as_float(z.to_numpy(), dtype).reshape(ROWS, cols), dtype


def assert_close(got: np.ndarray, expected: np.ndarray, dtype: str) -> None:
    tolerance = TOLERANCE[dtype]
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance * 1e-2)


def columns(out: ParamSpec) -> int:
    return out.tile_shape[-1]


@pytest.mark.parametrize("entry", _entries("softmax", "softmax_mixed"))
def test_softmax(entry: BundleEntry, device: int) -> None:
    kernel = load(entry, device)
    out, (x,), _ = roles(kernel)
    cols = columns(out)
    rng = np.random.default_rng(3)
    values = rounded(rng.standard_normal((ROWS, cols)) * 4, x.dtype)
    got, dtype = run_rows(kernel, {x.name: values}, {}, cols)
    assert_close(got, softmax(values), dtype)


@pytest.mark.parametrize("entry", _entries("rms_norm"))
def test_rms_norm(entry: BundleEntry, device: int) -> None:
    kernel = load(entry, device)
    out, (x, w), _ = roles(kernel)
    cols = columns(out)
    rng = np.random.default_rng(4)
    values = rounded(rng.standard_normal((ROWS, cols)), x.dtype)
    weights = rounded(rng.standard_normal(cols), w.dtype)
    got, dtype = run_rows(kernel, {x.name: values, w.name: weights}, {"eps": EPS}, cols)
    assert_close(got, rms_norm(values, weights, EPS), dtype)


@pytest.mark.parametrize("entry", _entries("layer_norm"))
def test_layer_norm(entry: BundleEntry, device: int) -> None:
    kernel = load(entry, device)
    out, (x,), _ = roles(kernel)
    cols = columns(out)
    rng = np.random.default_rng(5)
    values = rounded(rng.standard_normal((ROWS, cols)) * 3 + 1, x.dtype)
    got, dtype = run_rows(kernel, {x.name: values}, {"eps": EPS}, cols)
    assert_close(got, layer_norm(values, EPS), dtype)
