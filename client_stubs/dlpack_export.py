"""Export a `DeviceTensor` zero-copy: DLPack capsules and `__cuda_array_interface__`.

`DeviceTensor.__dlpack__` / `__dlpack_device__` / `__cuda_array_interface__` use these, so
torch (`torch.from_dlpack(t)`), cupy, jax and numba take a `DeviceTensor` without a copy.
Ownership is respected at the hand-over: a tensor moved into a partition raises
`MovedTensorError`, and one that unfinished GPU work still reads or writes raises
`PendingWorkError` (the consumer could read or write it at once), like any host access.
After the hand-over the consumer holds an alias that our pending-work tracking cannot see:
synchronize on its side before launching our kernels on the same memory again.

A capsule is built by hand with ctypes, the mirror of `interop`'s parser: a
`DLManagedTensor` (capsule "dltensor", DLPack 0.x) or, when the consumer passes
`max_version` >= (1, 0), a `DLManagedTensorVersioned` ("dltensor_versioned", 1.0). The
struct, its shape and strides arrays and a reference to the memory's owner are kept in
`_LIVE` until the consumer calls the deleter; the allocation cannot be freed under the
consumer. A capsule has no destructor (a destructor written in Python would run inside a
consumer's failing call, with its exception set, where no Python code may run): `_LIVE` holds
each capsule until a consumer renames it (takes it over), and the next export releases
capsules that were dropped unconsumed.
Element types come from the element table's DLPack codes (bf16, fp8... included); the CUDA
array interface has no type strings for the narrow types numpy lacks and refuses them (use
DLPack for those).

The import side stays the hand-written parser in `interop`, not `cuda.core`'s
`StridedMemoryView` (installed with cuda-python): measured on a CPU array the view is faster
to build (about 4 µs against 11), but it reports a numpy dtype, so bf16 needs the optional
`ml_dtypes` (not part of the host install) and the DLPack fp8/fp4/e8m0 codes have no numpy
type at all; and it reports whether memory is device-accessible, not the DLPack device type
(CUDA, managed, pinned host, other accelerators) our host-argument errors name. Launches
with `DeviceTensor` arguments never parse anything; foreign arrays pay the parse once per
launch plan.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from dataclasses import dataclass

import numpy as np

from client_stubs.dtypes import ELEMENT_BY_NAME
from client_stubs.element_table import HOST_ELEMENTS
from client_stubs.interop import (
    DL_CUDA,
    _DLManagedTensor,
    _DLManagedTensorVersioned,
    _DLTensor,
)

DLPACK_VERSION = (1, 0)
NAME = b"dltensor"
NAME_VERSIONED = b"dltensor_versioned"
DLPACK_CODES: dict[str, tuple[int, int, int]] = {
    e.name: e.dlpack for e in HOST_ELEMENTS if e.dlpack is not None
}

_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# private prototypes: ctypes.pythonapi's functions are shared, and `interop` sets their types
_capsule_new = ctypes.PYFUNCTYPE(
    ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p
)(("PyCapsule_New", ctypes.pythonapi))
_capsule_name = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(
    ("PyCapsule_GetName", ctypes.pythonapi)
)


@dataclass
class _Export:
    """What a live capsule points into, kept alive until its deleter runs."""

    managed: _DLManagedTensor | _DLManagedTensorVersioned
    shape: ctypes.Array[ctypes.c_int64]
    strides: ctypes.Array[ctypes.c_int64]
    owner: object  # the memory's owner (the allocation, or the producer we wrap)
    capsule: object  # until a consumer renamed it ("used_dltensor"): then it owns the tensor


_LIVE: dict[int, _Export] = {}
_LOCK = threading.Lock()


@_Deleter
def _delete(address: int | None) -> None:
    """The DLPack deleter: the consumer is done with the tensor."""
    with _LOCK:
        _LIVE.pop(int(address or 0), None)


def _collect() -> None:
    """Release the tensors of capsules dropped unconsumed (only `_LIVE` still holds them,
    under their first name), and stop holding capsules a consumer took over (renamed)."""
    with _LOCK:
        for address, export in list(_LIVE.items()):
            capsule = export.capsule
            if capsule is None:
                continue
            if _capsule_name(capsule) not in (NAME, NAME_VERSIONED):
                export.capsule = None  # consumed: its deleter will come
            elif sys.getrefcount(capsule) <= 3:  # `export`, `capsule` and the argument
                del _LIVE[address]


def exported(owner: object) -> bool:
    """Whether a consumer still holds a tensor exported from `owner`'s memory."""
    _collect()
    with _LOCK:
        return any(export.owner is owner for export in _LIVE.values())


def live_exports() -> int:
    """How many exported tensors are still held (after releasing those dropped unconsumed)."""
    _collect()
    return len(_LIVE)


def dlpack_capsule(
    ptr: int,
    shape: tuple[int, ...],
    strides: tuple[int, ...],
    dtype: str,
    device: int,
    owner: object,
    *,
    versioned: bool,
) -> object:
    """A DLPack capsule of the CUDA array described; `owner` stays alive while it is used."""
    code = DLPACK_CODES.get(dtype)
    if code is None:
        raise BufferError(f"element type {dtype} has no DLPack type code")
    ndim = len(shape)
    shape_array = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_array = (ctypes.c_int64 * max(ndim, 1))(*strides)
    tensor = _DLTensor()
    tensor.data = ptr or None
    tensor.device.device_type, tensor.device.device_id = DL_CUDA, device
    tensor.ndim = ndim
    tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes = code
    tensor.shape = ctypes.cast(shape_array, ctypes.POINTER(ctypes.c_int64))
    tensor.strides = ctypes.cast(strides_array, ctypes.POINTER(ctypes.c_int64))
    tensor.byte_offset = 0
    managed: _DLManagedTensor | _DLManagedTensorVersioned
    if versioned:
        managed = _DLManagedTensorVersioned()
        managed.version.major, managed.version.minor = DLPACK_VERSION
        managed.flags = 0
    else:
        managed = _DLManagedTensor()
    managed.dl_tensor = tensor
    managed.manager_ctx = None
    managed.deleter = ctypes.cast(_delete, ctypes.c_void_p)
    address = ctypes.addressof(managed)
    _collect()
    capsule = _capsule_new(address, NAME_VERSIONED if versioned else NAME, None)
    with _LOCK:
        _LIVE[address] = _Export(managed, shape_array, strides_array, owner, capsule)
    return capsule


def cuda_array_interface(
    ptr: int, shape: tuple[int, ...], strides: tuple[int, ...], dtype: str, itemsize: int
) -> dict[str, object]:
    """The CUDA array interface (version 3) of the array described; no stream to wait on
    (the export refused pending work)."""
    element = ELEMENT_BY_NAME[dtype]
    if not element.numpy:  # a narrow type numpy lacks (bf16, fp8...): no typestr
        raise TypeError(f"{dtype} has no __cuda_array_interface__ typestr; use DLPack")
    typestr = np.dtype(element.numpy).str
    contiguous = strides == _contiguous(shape)
    return {
        "shape": shape,
        "typestr": typestr,
        "data": (ptr, False),
        "strides": None if contiguous else tuple(s * itemsize for s in strides),
        "version": 3,
        "stream": None,
    }


def _contiguous(shape: tuple[int, ...]) -> tuple[int, ...]:
    from client_stubs.interop import contiguous_strides

    return contiguous_strides(shape)
