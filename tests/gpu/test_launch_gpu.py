"""Launch real cubins from a cutile-compile bundle on a GPU and check the results.

Needs a CUDA device and `CUTILE_GPU_ARTIFACTS` = a bundle folder (manifest.json) holding `add`
and/or `saxpy` kernels (any dtype variant, any block size B); skipped otherwise. Every kernel of
those functions in the manifest is tested; param roles and dtypes come from its contract.

    add<const B: i32>(z: &mut Tensor<E, {[B]}>, x: &Tensor<E, {[-1]}>, y: &Tensor<E, {[-1]}>)
    saxpy<const B: i32>(a: E, x: &Tensor<E, {[-1]}>, y: &mut Tensor<E, {[B]}>)
"""

from __future__ import annotations

import numpy as np
import pytest

from client_stubs import BundleEntry, DeviceTensor, Kernel
from client_stubs.contract import SCALAR, TENSOR_IN, TENSOR_OUT, ParamSpec
from client_stubs.dtypes import bf16_bits_to_f32_array, f32_array_to_bf16_bits, numpy_dtype
from tests.gpu.support import entries as _entries
from tests.gpu.support import load

pytestmark = pytest.mark.gpu

N = 1_000_003
GUARD = 4096
SENTINEL = -7.0
# unit roundoff per dtype: results may differ from exact arithmetic by a few of these
UNIT_ROUNDOFF = {"f16": 2.0**-11, "bf16": 2.0**-8, "f32": 2.0**-24, "f64": 2.0**-53}


def params(kernel: Kernel, kind: str) -> list[ParamSpec]:
    return [p for p in kernel.spec.params if p.kind == kind]


def upload(values: np.ndarray, dtype: str) -> DeviceTensor:
    """Values (float64) rounded to `dtype` on the device."""
    if dtype == "bf16" and numpy_dtype("bf16") == np.dtype(np.uint16):
        return DeviceTensor.from_numpy(f32_array_to_bf16_bits(values), dtype="bf16")
    return DeviceTensor.from_numpy(values.astype(numpy_dtype(dtype)), dtype=dtype)


def as_float(host: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bf16" and host.dtype == np.dtype(np.uint16):
        return bf16_bits_to_f32_array(host).astype(np.float64)
    return host.astype(np.float64)


def rounded(values: np.ndarray, dtype: str) -> np.ndarray:
    """What `values` look like after a round trip through `dtype`."""
    if dtype == "bf16":
        return bf16_bits_to_f32_array(f32_array_to_bf16_bits(values)).astype(np.float64)
    return values.astype(numpy_dtype(dtype)).astype(np.float64)


def random_values(dtype: str, rng: np.random.Generator) -> np.ndarray:
    """N values exactly representable in `dtype` (float64 on the host)."""
    if dtype == "bool":
        pytest.skip("no arithmetic test for bool kernels")
    if dtype.startswith(("i", "u")):
        return rng.integers(0 if dtype.startswith("u") else -100, 100, N).astype(np.float64)
    return rounded(rng.standard_normal(N), dtype)


def guarded_output(initial: np.ndarray, dtype: str) -> tuple[DeviceTensor, DeviceTensor]:
    """A buffer of N + GUARD elements whose tail holds SENTINEL, and a view of its first N."""
    full = upload(np.concatenate([initial, np.full(GUARD, SENTINEL)]), dtype)
    return full, full.narrow(0, 0, N)


def check(full: DeviceTensor, expected: np.ndarray, scale: np.ndarray, dtype: str) -> None:
    """Compare with the exact result, allowing 3 roundings of the operands' magnitude
    (`scale`); the guard region after N must still hold the sentinel."""
    host = as_float(full.to_numpy(), dtype)
    error = np.abs(host[:N] - expected)
    bound = 3 * UNIT_ROUNDOFF.get(dtype, 0.0) * scale
    worst = int(np.argmax(error - bound))
    assert np.all(error <= bound), (
        f"element {worst}: got {host[worst]}, expected {expected[worst]} (bound {bound[worst]})"
    )
    assert np.all(host[N:] == SENTINEL), "the kernel wrote past the end of its output"


@pytest.mark.parametrize(
    "entry", _entries("add", "add_tuned", "add_clustered", "add_generic", "add_generic_tuned")
)
@pytest.mark.parametrize("packed", [False, True], ids=["kernelParams", "extra"])
def test_add(entry: BundleEntry, packed: bool, device: int) -> None:
    kernel = load(entry, device)
    (out,), inputs = params(kernel, TENSOR_OUT), params(kernel, TENSOR_IN)
    assert len(inputs) == 2
    dtype = out.dtype
    rng = np.random.default_rng(1)
    x_values, y_values = (random_values(dtype, rng) for _ in range(2))
    full, z = guarded_output(np.zeros(N), dtype)
    part = z.partition(out.tile_shape)
    args: list[object] = [None] * len(kernel.spec.params)
    args[out.index] = part
    args[inputs[0].index] = upload(x_values, dtype)
    args[inputs[1].index] = upload(y_values, dtype)
    result = kernel(*args, sync=True, packed=packed)
    assert result[out.index] is part
    assert part.unpartition() is z
    check(full, x_values + y_values, np.abs(x_values) + np.abs(y_values), dtype)


@pytest.mark.parametrize("entry", _entries("saxpy"))
def test_saxpy(entry: BundleEntry, device: int) -> None:
    kernel = load(entry, device)
    (scalar,), (inp,), (out,) = (params(kernel, k) for k in (SCALAR, TENSOR_IN, TENSOR_OUT))
    dtype = out.dtype
    rng = np.random.default_rng(2)
    a = 2 if dtype.startswith(("i", "u")) else 2.5
    x_values, y_values = (random_values(dtype, rng) for _ in range(2))
    full, y = guarded_output(y_values, dtype)
    part = y.partition(out.tile_shape)
    args: list[object] = [None] * len(kernel.spec.params)
    args[scalar.index] = a
    args[inp.index] = upload(x_values, dtype)
    args[out.index] = part
    kernel(*args, sync=True)
    part.unpartition()
    check(full, a * x_values + y_values, np.abs(a * x_values) + np.abs(y_values), dtype)


@pytest.mark.parametrize("entry", _entries("add", "add_generic"))
def test_add_with_torch_tensors_on_the_current_stream(entry: BundleEntry, device: int) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    kernel = load(entry, device)
    (out,), inputs = params(kernel, TENSOR_OUT), params(kernel, TENSOR_IN)
    torch_dtype = {
        "f32": torch.float32,
        "f16": torch.float16,
        "bf16": torch.bfloat16,
        "f64": torch.float64,
    }.get(out.dtype)
    if torch_dtype is None:
        pytest.skip(f"no torch dtype for {out.dtype}")
    x = torch.randn(N, device="cuda", dtype=torch_dtype)
    y = torch.randn(N, device="cuda", dtype=torch_dtype)
    z = torch.full((N + GUARD,), SENTINEL, device="cuda", dtype=torch_dtype)
    part = DeviceTensor.wrap(z[:N]).partition(out.tile_shape)
    args: list[object] = [None] * len(kernel.spec.params)
    args[out.index], args[inputs[0].index], args[inputs[1].index] = part, x, y
    kernel(*args, stream=torch.cuda.current_stream())
    torch.cuda.current_stream().synchronize()
    tolerance = 3 * UNIT_ROUNDOFF.get(out.dtype, 0.0)
    torch.testing.assert_close(z[:N], x + y, rtol=tolerance, atol=tolerance)
    assert bool((z[N:] == SENTINEL).all())
