"""Run the raw-pointer example `scale_ptr` (rust_examples/scale_ptr.rs) on a GPU:
y[i] = a * x[i] for i < len, through `*mut f32` / `*const f32` params, on the grid the host
passes. Needs a CUDA device and `CUTILE_GPU_ARTIFACTS` = a bundle built by
`python -m tests.gpu.build_artifacts`; skipped otherwise.

The output buffer is longer than `len` and filled with a sentinel: the kernel's mask must
leave everything past `len` untouched (nothing else bounds a raw store)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from client_stubs import Bundle, BundleEntry, DeviceTensor, Kernel, driver

pytestmark = pytest.mark.gpu

ENV = "CUTILE_GPU_ARTIFACTS"
GUARD = 4096
SENTINEL = -7.0


def _entries() -> list[object]:
    root = os.environ.get(ENV)
    if not root:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{ENV} is not set"))]
    found = [
        pytest.param(e, id=e.label())
        for e in Bundle.open(root).entries
        if e.function == "scale_ptr"
    ]
    return found or [pytest.param(None, marks=pytest.mark.skip(reason="no scale_ptr"))]


@pytest.fixture(scope="module")
def device() -> int:
    if driver.device_count() == 0:
        pytest.skip("no CUDA device")
    driver.ensure_context(0)
    return 0


def _kernel(entry: BundleEntry, device: int) -> Kernel:
    sm = driver.device_sm(device)
    if entry.sm != sm:
        pytest.skip(f"{entry.label()} does not run on this {sm} device")
    return Bundle.open(os.environ[ENV]).load(entry, allow_unchecked=True)


@pytest.mark.parametrize("entry", _entries())
@pytest.mark.parametrize("length", [1, 1000, 1024, 1_000_003])
def test_scale_through_raw_pointers(entry: BundleEntry, device: int, length: int) -> None:
    kernel = _kernel(entry, device)
    block = int(dict(kernel.spec.generics)["B"])
    x_host = np.arange(length, dtype=np.float32) - length / 2
    x = DeviceTensor.from_numpy(x_host)
    y = DeviceTensor.from_numpy(np.full(length + GUARD, SENTINEL, dtype=np.float32))
    blocks = -(-length // block)
    kernel(y, x, np.float32(1.5), length, grid=(blocks, 1, 1), sync=True)
    out = y.to_numpy()
    np.testing.assert_array_equal(out[:length], np.float32(1.5) * x_host)
    assert (out[length:] == SENTINEL).all(), "a masked-off lane was written"


@pytest.mark.parametrize("entry", _entries())
def test_device_addresses_work_like_tensors(entry: BundleEntry, device: int) -> None:
    kernel = _kernel(entry, device)
    block = int(dict(kernel.spec.generics)["B"])
    length = 3 * block + 5
    x_host = np.linspace(-1, 1, length, dtype=np.float32)
    x = DeviceTensor.from_numpy(x_host)
    y = DeviceTensor.from_numpy(np.zeros(length, dtype=np.float32))
    kernel(y.ptr, x.ptr, np.float32(-2.0), length, grid=(4, 1, 1), sync=True)
    np.testing.assert_array_equal(y.to_numpy(), np.float32(-2.0) * x_host)
