"""DeviceTensor transfers and zero-copy interop on a real GPU (no compiled kernels needed)."""

from __future__ import annotations

import numpy as np
import pytest

from client_stubs import DeviceTensor, driver

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("device")]


def test_round_trip_and_zeros() -> None:
    host = np.arange(1000, dtype=np.float32).reshape(10, 100)
    t = DeviceTensor.from_numpy(host)
    assert t.shape == (10, 100) and t.dtype == "f32" and t.ptr % 256 == 0
    np.testing.assert_array_equal(t.to_numpy(), host)
    np.testing.assert_array_equal(DeviceTensor.zeros((3, 5), "i32").to_numpy(), np.zeros((3, 5)))


def test_strided_views_copy_back_correctly() -> None:
    host = np.arange(1000, dtype=np.int64).reshape(10, 100)
    t = DeviceTensor.from_numpy(host)
    np.testing.assert_array_equal(t.narrow(1, 20, 30).to_numpy(), host[:, 20:50])
    np.testing.assert_array_equal(t.narrow(0, 3, 2).to_numpy(), host[3:5])


def test_copy_from_numpy() -> None:
    t = DeviceTensor.empty(16, "f16")
    t.copy_from_numpy(np.linspace(0, 1, 16))
    np.testing.assert_allclose(t.to_numpy(), np.linspace(0, 1, 16), rtol=1e-3)


def test_device_sm_is_reported() -> None:
    assert driver.device_sm(0).startswith("sm_")


@pytest.mark.parametrize("module", ["torch", "cupy"])
def test_wrap_foreign_tensors_without_copy(module: str) -> None:
    lib = pytest.importorskip(module)
    if module == "torch":
        if not lib.cuda.is_available():
            pytest.skip("torch has no CUDA")
        base = lib.arange(60, dtype=lib.float32, device="cuda").reshape(6, 10)
        view = base[1:5, 2:8:2]
        pointer = view.data_ptr()
    else:
        base = lib.arange(60, dtype=lib.float32).reshape(6, 10)
        view = base[1:5, 2:8:2]
        pointer = view.data.ptr
    t = DeviceTensor.wrap(view)
    assert (t.ptr, t.shape, t.strides, t.dtype, t.device) == (pointer, (4, 3), (10, 2), "f32", 0)
    expected = np.arange(60, dtype=np.float32).reshape(6, 10)[1:5, 2:8:2]
    np.testing.assert_array_equal(t.to_numpy(), expected)


def test_wrap_torch_bfloat16() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    t = DeviceTensor.wrap(torch.ones(8, dtype=torch.bfloat16, device="cuda"))
    assert t.dtype == "bf16" and t.itemsize == 2


def test_a_free_on_a_thread_with_no_context_pushes_one_and_leaves_none() -> None:
    """A free (the collector's, from any thread) runs in its device's context, pushed when
    the thread has none current, and leaves the thread as it was (driver.on_device)."""
    import threading

    tensor = DeviceTensor.from_numpy(np.arange(64, dtype=np.float32))
    seen: list[object] = []

    def worker() -> None:
        try:
            seen.append(driver.current_context())  # a fresh thread: none
            tensor.free()
            seen.append(driver.current_context())
        except Exception as exc:  # the test's finding
            seen.append(exc)

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [None, None]
    assert driver.context_is_on(0)  # this thread kept its context
