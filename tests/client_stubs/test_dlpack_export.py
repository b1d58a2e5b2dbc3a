"""DeviceTensor's zero-copy export: DLPack capsules and __cuda_array_interface__ (no GPU)."""

from __future__ import annotations

import ctypes
import gc
import weakref

import numpy as np
import pytest

from client_stubs import (
    DeviceTensor,
    ExportedMemoryError,
    Kernel,
    MovedTensorError,
    PendingWorkError,
)
from client_stubs.dlpack_export import DLPACK_CODES, live_exports
from client_stubs.interop import (
    DL_CUDA,
    _DLManagedTensor,
    _DLManagedTensorVersioned,
    describe,
    from_cuda_array_interface,
    from_dlpack,
)
from tests.client_stubs.fake_driver import CUBIN

BASE = 0x7F00_0000_1000
_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi)
)
_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi)
)
_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", ctypes.pythonapi)
)
USED = b"used_dltensor"  # what a consumer renames a capsule it took over to


class Owner:
    """Stands for the allocation a tensor's memory belongs to."""


@pytest.mark.parametrize(
    ("shape", "strides", "dtype"),
    [((4, 6), None, "f32"), ((4, 6), (12, 2), "bf16"), ((3,), (1,), "f8e4m3fn"), ((), (), "i64")],
)
def test_capsules_round_trip_through_the_import_side(shape, strides, dtype) -> None:
    tensor = DeviceTensor(BASE, shape, strides, dtype=dtype, device=1)
    for described in (from_dlpack(tensor), describe(tensor)):
        assert described is not None
        assert (described.ptr, described.shape, described.strides) == (
            BASE,
            tensor.shape,
            tensor.strides,
        )
        assert (described.dtype, described.device_type, described.device_id) == (
            dtype,
            DL_CUDA,
            1,
        )
    assert tensor.__dlpack_device__() == (DL_CUDA, 1)


@pytest.mark.parametrize("max_version", [None, (0, 8), (1, 0), (1, 3)])
def test_the_capsule_structure(max_version) -> None:
    tensor = DeviceTensor(BASE, (4, 6), (12, 2), dtype="bf16", device=1)
    capsule = tensor.__dlpack__(max_version=max_version, stream=None)
    versioned = max_version is not None and max_version[0] >= 1
    name = _name(capsule)
    assert name == (b"dltensor_versioned" if versioned else b"dltensor")
    address = _pointer(capsule, name)
    if versioned:
        managed = _DLManagedTensorVersioned.from_address(address)
        assert (managed.version.major, managed.version.minor, managed.flags) == (1, 0, 0)
    else:
        managed = _DLManagedTensor.from_address(address)
    dl = managed.dl_tensor
    assert (dl.data, dl.byte_offset, dl.ndim) == (BASE, 0, 2)
    assert (dl.device.device_type, dl.device.device_id) == (DL_CUDA, 1)
    assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == DLPACK_CODES["bf16"] == (4, 16, 1)
    assert [dl.shape[i] for i in range(2)] == [4, 6]
    assert [dl.strides[i] for i in range(2)] == [12, 2]
    assert managed.deleter


def test_a_consumer_owns_the_tensor_until_it_calls_the_deleter() -> None:
    owner = Owner()
    alive = weakref.ref(owner)
    tensor = DeviceTensor(BASE, (8,), owner=owner)
    before = live_exports()
    capsule = tensor.__dlpack__()
    address = _pointer(capsule, b"dltensor")
    assert _set_name(capsule, USED) == 0  # what torch.from_dlpack does: it takes it over
    del capsule, tensor, owner
    gc.collect()
    assert live_exports() == before + 1 and alive() is not None  # the memory stays owned
    deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
        _DLManagedTensor.from_address(address).deleter
    )
    deleter(address)  # the consumer is done
    gc.collect()
    assert live_exports() == before and alive() is None


def test_a_capsule_dropped_unconsumed_releases_its_tensor() -> None:
    owner = Owner()
    alive = weakref.ref(owner)
    before = live_exports()
    DeviceTensor(BASE, (8,), owner=owner).__dlpack__()
    del owner
    gc.collect()
    assert live_exports() == before and alive() is None


def test_numpy_takes_the_protocol_but_not_cuda_memory() -> None:
    before = live_exports()
    with pytest.raises((RuntimeError, BufferError), match="device"):
        np.from_dlpack(DeviceTensor(BASE, (8,)))
    assert live_exports() == before


def test_the_cuda_array_interface() -> None:
    contiguous = DeviceTensor(BASE, (4, 6), dtype="f16", device=0).__cuda_array_interface__
    assert contiguous == {
        "shape": (4, 6),
        "typestr": "<f2",
        "data": (BASE, False),
        "strides": None,
        "version": 3,
        "stream": None,
    }
    strided = DeviceTensor(BASE, (4, 6), (12, 2), dtype="i32")
    assert strided.__cuda_array_interface__["strides"] == (48, 8)
    back = from_cuda_array_interface(strided, device_id=0)
    assert (back.ptr, back.shape, back.strides, back.dtype) == (BASE, (4, 6), (12, 2), "i32")
    with pytest.raises(TypeError, match="use DLPack"):
        DeviceTensor(BASE, (4,), dtype="bf16").__cuda_array_interface__  # noqa: B018


def test_a_tensor_moved_into_a_partition_is_not_exported() -> None:
    tensor = DeviceTensor(BASE, (256,))
    part = tensor.partition((128,))
    with pytest.raises(MovedTensorError):
        tensor.__dlpack__()
    with pytest.raises(MovedTensorError):
        tensor.__cuda_array_interface__  # noqa: B018
    with pytest.raises(MovedTensorError):
        tensor.__dlpack_device__()
    part.unpartition().__dlpack__()  # handed back: exported


def test_a_tensor_with_pending_work_is_not_exported(add, fake_driver) -> None:
    fake_driver.auto_complete = False
    z, x, y = (DeviceTensor.empty(4096) for _ in range(3))
    Kernel(CUBIN, add)(z.partition([128]), x, y)
    with pytest.raises(PendingWorkError, match=r"export through DLPack.*kernel `add` reads it"):
        x.__dlpack__()
    with pytest.raises(PendingWorkError, match="__cuda_array_interface__"):
        y.__cuda_array_interface__  # noqa: B018
    fake_driver.complete()
    x.__dlpack__()


def test_copies_and_other_devices_are_refused() -> None:
    tensor = DeviceTensor(BASE, (8,), device=1)
    with pytest.raises(BufferError, match="without copying"):
        tensor.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="cuda:1"):
        tensor.__dlpack__(dl_device=(DL_CUDA, 0))
    tensor.__dlpack__(dl_device=(DL_CUDA, 1), copy=False)


def test_memory_a_consumer_holds_cannot_be_freed_until_it_lets_go(fake_driver) -> None:
    """free() once gave the memory back under a live torch.from_dlpack tensor."""
    tensor = DeviceTensor.empty(64)
    capsule = tensor.__dlpack__()
    address = _pointer(capsule, b"dltensor")
    assert _set_name(capsule, USED) == 0  # a consumer took it over
    with pytest.raises(ExportedMemoryError, match="still held by its consumer"):
        tensor.free()
    assert "mem_free" not in fake_driver.names()
    deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(
        _DLManagedTensor.from_address(address).deleter
    )
    deleter(address)  # the consumer is done
    tensor.free()
    assert "mem_free" in fake_driver.names()
