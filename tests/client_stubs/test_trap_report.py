"""client_stubs.trap_report: a trap reported at synchronization names the kernel, its
parameters and its in-kernel checks (fake driver: the error is injected)."""

from __future__ import annotations

import pytest

from client_stubs import CudaError, DeviceTensor, Kernel, KernelTrapError, driver, trap_report
from tests.client_stubs.fake_driver import CUBIN


class DriverError(int):
    """A CUresult as cuda-python returns it: an int with a name."""

    def __new__(cls, code: int, name: str) -> DriverError:
        error = super().__new__(cls, code)
        error.name = name  # type: ignore[attr-defined]
        return error


def _fail_sync(monkeypatch, code: int, name: str) -> None:
    def synchronize(stream: object = None) -> None:
        driver.check(DriverError(code, name), "cuStreamSynchronize")

    monkeypatch.setattr(driver, "synchronize", synchronize)
    monkeypatch.setattr(driver, "synchronize_handle", synchronize)


@pytest.fixture(autouse=True)
def no_recent_launches():
    trap_report.RECENT.clear()
    yield
    trap_report.RECENT.clear()


def test_a_trap_names_the_kernel_its_parameters_and_checks(add, fake_driver, monkeypatch):
    add.safety.checks_in_place, add.safety.checks_hoisted_to_preheader = 1, 2
    add.safety.checks_discharged, add.safety.checks_hoisted_to_host = 3, 4
    kernel = Kernel(CUBIN, add)
    z, x, y = (DeviceTensor.empty(4096) for _ in range(3))
    _fail_sync(monkeypatch, 715, "CUDA_ERROR_ILLEGAL_INSTRUCTION")
    with pytest.raises(KernelTrapError) as info:
        kernel(z.partition([128]), x, y, stream=7, sync=True)
    error = info.value
    assert isinstance(error, CudaError)
    assert (error.name, error.code, error.call) == (
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        715,
        "cuStreamSynchronize",
    )
    assert error.kernels == ("add",)
    text = str(error)
    assert text.startswith(
        "cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_INSTRUCTION (715): a kernel stopped"
    )
    assert "kernel `kernel::add<B=128>` (sm_90) on stream 0x7, grid (32, 1, 1)" in text
    assert "`z`: &mut Tensor<f32> tile [128], bytes [" in text and "(16384 B)" in text
    assert "`x`: &Tensor<f32> shape [-1]" in text
    assert (
        "in-kernel checks: 3 stay in the kernel (1 at the access, 2 hoisted to a loop "
        "preheader): a failed one traps; 3 proven at compile time, 4 checked on the host"
    ) in text
    assert "restart the process" in text


def test_the_most_recent_launches_come_first(add, saxpy, fake_driver, monkeypatch):
    z, x, y = (DeviceTensor.empty(4096) for _ in range(3))
    zp = Kernel(CUBIN, add)(z.partition([128]), x, y)[0]
    w = DeviceTensor.empty(4096)
    Kernel(CUBIN, saxpy)(2.0, x, w.partition([128]))
    _fail_sync(monkeypatch, 719, "CUDA_ERROR_LAUNCH_FAILED")
    with pytest.raises(KernelTrapError) as info:
        driver.synchronize()
    assert info.value.kernels == ("saxpy", "add")
    assert zp is not None


def test_other_errors_and_errors_before_any_launch_stay_plain(add, fake_driver, monkeypatch):
    _fail_sync(monkeypatch, 719, "CUDA_ERROR_LAUNCH_FAILED")
    with pytest.raises(CudaError) as info:
        driver.synchronize()
    assert type(info.value) is CudaError  # no launch to name
    z, x, y = (DeviceTensor.empty(4096) for _ in range(3))
    Kernel(CUBIN, add)(z.partition([128]), x, y)
    _fail_sync(monkeypatch, 2, "CUDA_ERROR_OUT_OF_MEMORY")
    with pytest.raises(CudaError) as info:
        driver.synchronize()
    assert type(info.value) is CudaError and "OUT_OF_MEMORY" in str(info.value)


def test_an_unchecked_kernel_says_nothing_catches_a_bad_index(add, fake_driver, monkeypatch):
    add.safety.unchecked_accesses = True
    kernel = Kernel(CUBIN, add, allow_unchecked=True)
    z, x, y = (DeviceTensor.empty(4096) for _ in range(3))
    _fail_sync(monkeypatch, 700, "CUDA_ERROR_ILLEGAL_ADDRESS")
    with pytest.raises(KernelTrapError, match="compiled with unchecked accesses"):
        kernel(z.partition([128]), x, y, sync=True)
