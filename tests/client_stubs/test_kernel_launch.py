"""Kernel.launch with the driver replaced by a recorder: what reaches cuLaunchKernel, and that
a rejected launch reaches nothing."""

from __future__ import annotations

import ctypes
import hashlib
import struct

import pytest

from client_stubs import (
    ContractError,
    DeviceTensor,
    DTypeMismatchError,
    IntegrityError,
    Kernel,
    TargetMismatchError,
    launcher,
)
from client_stubs.pending import PENDING
from tests.client_stubs.fake_driver import CUBIN

N = 1_000_003


def args(n: int = N) -> list[object]:
    return [
        DeviceTensor(0x1000_0000, n).partition([128]),
        DeviceTensor(0x2000_0000, n),
        DeviceTensor(0x3000_0000, n),
    ]


def test_launch_calls_the_driver_with_plan(add, fake_driver):
    kernel = Kernel(CUBIN, add)
    given = args()
    result = kernel(*given, stream=77)
    assert result == tuple(given) and result[0] is given[0]
    launch = [a for name, a in fake_driver.calls if name == "launch"]
    assert len(launch) == 1
    function, grid, block, smem, stream, address = launch[0]
    assert (function, grid, block, smem, stream) == ("FUNC", (7813, 1, 1), (1, 1, 1), 0, 77)
    pointers = (ctypes.c_void_p * 11).from_address(address)
    base = pointers[0]
    assert [p - base for p in pointers] == [0, 8, 12, 16, 20, 24, 32, 36, 40, 48, 52]
    assert ctypes.string_at(base, 56) == kernel.plan(*given).param_buffer
    assert ctypes.string_at(base, 8) == struct.pack("<Q", 0x1000_0000)
    load = next(a for name, a in fake_driver.calls if name == "load_function")
    assert load == (CUBIN, hashlib.sha256(CUBIN).hexdigest(), "add_entry", 1234)
    verify = next(a for name, a in fake_driver.calls if name == "verify_param_layout")
    assert verify[1][:3] == [(0, 8), (8, 4), (12, 4)]
    # stream 77 is the caller's (it may destroy it): its work is tracked by an event
    assert ("event_record", ("E1", 77)) in fake_driver.calls and len(PENDING) == 1
    kernel(*given)  # the legacy default stream: tracked without an event of its own
    assert fake_driver.names().count("event_record") == 1 and len(PENDING) == 2


def test_a_kernel_that_waits_for_prior_grids_is_launched_early(add, fake_driver, monkeypatch):
    """Its contract says it waits before touching memory: the same launch goes through
    `launch_early` (programmatic stream serialization); CUTILE_EARLY_LAUNCH=0 (read at
    import as `launcher.EARLY_LAUNCH`) and a plain kernel launch it plainly."""
    add.launch.waits_for_prior_grids = True
    add.target.bytecode_version = "13.4"  # where the wait exists (else the contract is refused)
    kernel = Kernel(CUBIN, add)
    kernel(*args(), stream=5)
    early = [a for name, a in fake_driver.calls if name == "launch_early"]
    assert [a[:5] for a in early] == [("FUNC", (7813, 1, 1), (1, 1, 1), 0, 5)]
    assert "launch" not in fake_driver.names()
    kernel.op(*args()).sync()
    assert fake_driver.names().count("launch_early") == 2
    monkeypatch.setattr(launcher, "EARLY_LAUNCH", False)
    Kernel(CUBIN, add)(*args())
    assert fake_driver.names().count("launch") == 1
    monkeypatch.setattr(launcher, "EARLY_LAUNCH", True)
    add.launch.waits_for_prior_grids = False
    Kernel(CUBIN, add)(*args())
    assert fake_driver.names().count("launch") == 2


def test_layout_is_verified_once_per_context(add, fake_driver):
    kernel = Kernel(CUBIN, add)
    kernel(*args())
    kernel(*args())
    assert fake_driver.names().count("verify_param_layout") == 1
    assert fake_driver.names().count("launch") == 2


def test_packed_and_sync_options(add, fake_driver):
    Kernel(CUBIN, add).launch(*args(), packed=True, sync=True)
    assert "launch_packed" in fake_driver.names() and "launch" not in fake_driver.names()
    assert fake_driver.names()[-1] == "synchronize"


def test_stream_objects_are_normalized(add, fake_driver):
    class TorchLikeStream:
        cuda_stream = 0xABC

    Kernel(CUBIN, add)(*args(), stream=TorchLikeStream())
    launch = next(a for name, a in fake_driver.calls if name == "launch")
    assert launch[4] == 0xABC


def test_rejected_launch_reaches_nothing(add, fake_driver):
    bad = args()
    bad[1] = DeviceTensor(0x2000_0000, N, dtype="f16")
    with pytest.raises(DTypeMismatchError):
        Kernel(CUBIN, add)(*bad)
    assert fake_driver.calls == [], fake_driver.calls


def test_wrong_gpu_target_rejected_before_loading(add, fake_driver):
    fake_driver.sm = "sm_100"
    with pytest.raises(TargetMismatchError) as info:
        Kernel(CUBIN, add)(*args())
    assert "sm_90" in str(info.value) and "sm_100" in str(info.value)
    assert "load_function" not in fake_driver.names() and "launch" not in fake_driver.names()


def test_wrong_host_arch_rejected(add, fake_driver, monkeypatch):
    monkeypatch.setattr(launcher, "host_arch", lambda: "aarch64")
    with pytest.raises(TargetMismatchError) as info:
        Kernel(CUBIN, add)(*args())
    assert "host arch x86_64" in str(info.value)


def test_cubin_digest_checked(add):
    with pytest.raises(IntegrityError):
        Kernel(CUBIN, add, cubin_sha256="0" * 64)
    assert Kernel(CUBIN, add, cubin_sha256=hashlib.sha256(CUBIN).hexdigest()).sha256


def test_unchecked_kernel_needs_opt_in(add):
    add.safety.unchecked_accesses = True
    with pytest.raises(ContractError, match="allow_unchecked"):
        Kernel(CUBIN, add)
    assert Kernel(CUBIN, add, allow_unchecked=True).name == "add"


def test_kernel_metadata(add):
    kernel = Kernel(CUBIN, add)
    assert kernel.name == "add" and kernel.entry_symbol == "add_entry" and kernel.sm == "sm_90"
    assert kernel.generics == {"B": "128"}
    assert "add<B=128>" in repr(kernel)
    assert kernel.plan(*args()).grid == (7813, 1, 1)
