"""Run the raw-pointer example `scale_ptr` (rust_examples/scale_ptr.rs) on a GPU:
y[i] = a * x[i] for i < len, through `*mut f32` / `*const f32` params, on the grid the host
passes. Needs a CUDA device and `CUTILE_GPU_ARTIFACTS` = a bundle built by
`python -m tests.gpu.build_artifacts`; skipped otherwise.

The output buffer is longer than `len` and filled with a sentinel: the kernel's mask must
leave everything past `len` untouched (nothing else bounds a raw store)."""

from __future__ import annotations

import numpy as np
import pytest

from client_stubs import BundleEntry, DeviceTensor, Kernel
from tests.gpu.support import entries, load

pytestmark = pytest.mark.gpu

GUARD = 4096
SENTINEL = -7.0


def _kernel(entry: BundleEntry, device: int) -> Kernel:
    return load(entry, device, allow_unchecked=True)


@pytest.mark.parametrize("entry", entries("scale_ptr"))
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


@pytest.mark.parametrize("entry", entries("scale_ptr"))
def test_device_addresses_work_like_tensors(entry: BundleEntry, device: int) -> None:
    kernel = _kernel(entry, device)
    block = int(dict(kernel.spec.generics)["B"])
    length = 3 * block + 5
    x_host = np.linspace(-1, 1, length, dtype=np.float32)
    x = DeviceTensor.from_numpy(x_host)
    y = DeviceTensor.from_numpy(np.zeros(length, dtype=np.float32))
    kernel(y.ptr, x.ptr, np.float32(-2.0), length, grid=(4, 1, 1), sync=True)
    np.testing.assert_array_equal(y.to_numpy(), np.float32(-2.0) * x_host)
