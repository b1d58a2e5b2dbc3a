"""Zero-copy views of foreign arrays: DLPack (`__dlpack__`) and `__cuda_array_interface__`.

`describe(obj)` returns an `ArrayDescriptor` (address of element 0, shape, strides in
elements, cuTile dtype, device) plus an owner that keeps the producer's memory alive. It never
copies. DLPack is preferred (it carries the device and bf16); the CUDA array interface is the
fallback. Host arrays are described too (device type CPU) so callers can reject them by name.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass

import numpy as np

from client_stubs.dtypes import dtype_name
from client_stubs.element_table import HOST_ELEMENTS

DL_CPU = 1
DL_CUDA = 2
DL_CUDA_HOST = 3
DL_CUDA_MANAGED = 13
DEVICE_TYPE_NAMES: dict[int, str] = {
    1: "cpu",
    2: "cuda",
    3: "cuda_host",
    4: "opencl",
    7: "vulkan",
    8: "metal",
    9: "vpi",
    10: "rocm",
    11: "rocm_host",
    13: "cuda_managed",
    14: "oneapi",
}
GPU_DEVICE_TYPES = frozenset({DL_CUDA, DL_CUDA_MANAGED})

# DLPack (type code, bits, lanes) -> cuTile name, from the element table.
_DL_DTYPES: dict[tuple[int, int, int], str] = {
    e.dlpack: e.name for e in HOST_ELEMENTS if e.dlpack is not None
}


@dataclass(frozen=True)
class ArrayDescriptor:
    """A strided array somewhere in memory, as a producer described it."""

    ptr: int  # address of element 0 (any byte offset already applied)
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    dtype: str  # cuTile name
    device_type: int  # DLPack device type (DL_CUDA, DL_CPU, ...)
    device_id: int
    owner: object  # keeps the memory alive (the producer object and/or its capsule)

    @property
    def device_name(self) -> str:
        name = DEVICE_TYPE_NAMES.get(self.device_type, f"device type {self.device_type}")
        return f"{name}:{self.device_id}"


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", _DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", _DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", _DLTensor),
    ]


@functools.cache
def _capsule_api() -> tuple[object, object]:
    """PyCapsule_GetName and PyCapsule_GetPointer, typed once (typing them costs ~1 µs)."""
    api = ctypes.pythonapi
    api.PyCapsule_GetName.restype = ctypes.c_char_p
    api.PyCapsule_GetName.argtypes = [ctypes.py_object]
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return api.PyCapsule_GetName, api.PyCapsule_GetPointer


def dlpack_device(obj: object) -> tuple[int, int] | None:
    """`obj.__dlpack_device__()` as (device type, id), or None when obj is no DLPack producer."""
    probe = getattr(obj, "__dlpack_device__", None)
    if probe is None or not hasattr(obj, "__dlpack__"):
        return None
    device_type, device_id = probe()
    return int(device_type), int(device_id)


def _dlpack_capsule(obj: object, device_type: int, stream: int | None) -> object:
    export = obj.__dlpack__  # type: ignore[attr-defined]
    if device_type not in (DL_CUDA, DL_CUDA_MANAGED) or stream is None:
        return export()
    # DLPack stream numbers: 1 = legacy default (driver handle 0 is ambiguous there).
    try:
        return export(stream=1 if stream == 0 else stream)
    except TypeError:
        return export()


def from_dlpack(obj: object, stream: int | None = None) -> ArrayDescriptor:
    """Describe a DLPack producer without copying; `stream` is the consumer's CUDA stream."""
    device = dlpack_device(obj)
    if device is None:
        raise TypeError(f"{type(obj).__name__} does not implement the DLPack protocol")
    capsule = _dlpack_capsule(obj, device[0], stream)
    get_name, get_pointer = _capsule_api()
    name = get_name(capsule)
    address = get_pointer(capsule, name)
    if name == b"dltensor_versioned":
        tensor = _DLManagedTensorVersioned.from_address(address).dl_tensor
    elif name == b"dltensor":
        tensor = _DLManagedTensor.from_address(address).dl_tensor
    else:
        raise TypeError(f"unexpected DLPack capsule name {name!r}")
    return _describe_dltensor(tensor, owner=(obj, capsule))


def _describe_dltensor(tensor: _DLTensor, owner: object) -> ArrayDescriptor:
    ndim = tensor.ndim
    element = tensor.dtype
    key = (element.code, element.bits, element.lanes)
    name = _DL_DTYPES.get(key)
    if name is None:
        code, bits, lanes = key
        raise TypeError(f"unsupported DLPack dtype code={code} bits={bits} lanes={lanes}")
    shape = tuple(tensor.shape[:ndim])  # one slice of the int64 array: a list of ints
    strides = tuple(tensor.strides[:ndim]) if tensor.strides else contiguous_strides(shape)
    device = tensor.device
    return ArrayDescriptor(
        ptr=(tensor.data or 0) + tensor.byte_offset,
        shape=shape,
        strides=strides,
        dtype=name,
        device_type=device.device_type,
        device_id=device.device_id,
        owner=owner,
    )


def from_cuda_array_interface(obj: object, device_id: int | None = None) -> ArrayDescriptor:
    """Describe an object exposing `__cuda_array_interface__` (strides given in bytes there)."""
    cai = obj.__cuda_array_interface__  # type: ignore[attr-defined]
    if cai.get("mask") is not None:
        raise TypeError("masked __cuda_array_interface__ arrays are not supported")
    name, itemsize = _cai_element(cai["typestr"])
    shape = tuple(int(d) for d in cai["shape"])
    byte_strides = cai.get("strides")
    if byte_strides is None:
        strides = contiguous_strides(shape)
    else:
        if any(int(s) % itemsize for s in byte_strides):
            raise TypeError(f"strides {tuple(byte_strides)} are not multiples of {itemsize} bytes")
        strides = tuple(int(s) // itemsize for s in byte_strides)
    ptr = int(cai["data"][0] or 0)
    if device_id is None:
        device_id = _cai_device_id(obj, ptr)
    return ArrayDescriptor(ptr, shape, strides, name, DL_CUDA, device_id, owner=obj)


@functools.cache
def _cai_element(typestr: str) -> tuple[str, int]:
    """The cuTile name and the bytes of a `__cuda_array_interface__` typestr ("<f4")."""
    element = np.dtype(typestr)
    return dtype_name(element), element.itemsize


def _cai_device_id(obj: object, ptr: int) -> int:
    device = getattr(obj, "device", None)
    for attr in ("id", "index"):
        value = getattr(device, attr, None)
        if isinstance(value, int):
            return value
    if ptr:
        from client_stubs import driver

        ordinal = driver.pointer_device(ptr)
        if ordinal is not None:
            return ordinal
    return 0


def from_host_array(obj: object) -> ArrayDescriptor:
    """Describe a host array (anything numpy can view without copying) as a CPU array."""
    array = np.asarray(obj)
    itemsize = array.dtype.itemsize or 1
    return ArrayDescriptor(
        ptr=int(array.ctypes.data),
        shape=tuple(array.shape),
        strides=tuple(s // itemsize for s in array.strides),
        dtype=dtype_name(array.dtype) if array.dtype != object else "object",
        device_type=DL_CPU,
        device_id=0,
        owner=array,
    )


def describe(obj: object, stream: int | None = None) -> ArrayDescriptor | None:
    """Describe any array-like object without copying; None when it is not an array at all."""
    if dlpack_device(obj) is not None:
        try:
            return from_dlpack(obj, stream)
        except (TypeError, BufferError, RuntimeError):
            if not hasattr(obj, "__cuda_array_interface__"):
                raise
    if hasattr(obj, "__cuda_array_interface__"):
        return from_cuda_array_interface(obj)
    if isinstance(obj, np.ndarray) or hasattr(obj, "__array_interface__"):
        return from_host_array(obj)
    return None


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides, in elements, for `shape`."""
    strides: list[int] = []
    running = 1
    for extent in reversed(shape):
        strides.append(running)
        running *= max(int(extent), 1)
    return tuple(reversed(strides))
