"""DeviceTensor exported zero-copy to torch (DLPack) and cupy (the CUDA array interface) on a
real GPU; each skips when its library or its CUDA support is missing."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from client_stubs import DeviceTensor, MovedTensorError
from client_stubs.dlpack_export import live_exports

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("device")]


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    return torch


def test_torch_takes_a_device_tensor_without_a_copy() -> None:
    torch = _torch()
    host = np.arange(24, dtype=np.float32).reshape(4, 6)
    tensor = DeviceTensor.from_numpy(host)
    before = live_exports()
    view = torch.from_dlpack(tensor)
    assert view.is_cuda and view.data_ptr() == tensor.ptr and tuple(view.shape) == (4, 6)
    np.testing.assert_array_equal(view.cpu().numpy(), host)
    view.mul_(2)  # torch writes our memory
    torch.cuda.synchronize()
    np.testing.assert_array_equal(tensor.to_numpy(), host * 2)
    del view
    gc.collect()
    assert live_exports() == before  # torch called the deleter


def test_torch_takes_strided_views_and_bfloat16() -> None:
    torch = _torch()
    host = np.arange(100, dtype=np.float32).reshape(10, 10)
    tensor = DeviceTensor.from_numpy(host).narrow(1, 2, 5)
    view = torch.from_dlpack(tensor)
    assert view.stride() == (10, 1) and view.data_ptr() == tensor.ptr
    np.testing.assert_array_equal(view.cpu().numpy(), host[:, 2:7])
    bf16 = torch.from_dlpack(DeviceTensor.zeros(8, "bf16"))
    assert bf16.dtype == torch.bfloat16 and float(bf16.sum()) == 0.0


def test_a_partitioned_tensor_is_refused() -> None:
    torch = _torch()
    tensor = DeviceTensor.zeros(256)
    tensor.partition((128,))
    with pytest.raises(MovedTensorError):
        torch.from_dlpack(tensor)


def test_cupy_reads_the_cuda_array_interface() -> None:
    cupy = pytest.importorskip("cupy")
    host = np.arange(12, dtype=np.int32)
    tensor = DeviceTensor.from_numpy(host)
    view = cupy.asarray(tensor)
    assert view.data.ptr == tensor.ptr
    np.testing.assert_array_equal(cupy.asnumpy(view), host)
