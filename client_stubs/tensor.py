"""Device tensors and partitions with move semantics.

`DeviceTensor` is a strided view of device memory (pointer, shape, strides in elements, cuTile
dtype, device ordinal) that keeps its memory's owner alive. `tensor.partition(tile)` MOVES the
tensor into a `Partition`, the only thing a kernel output accepts: the old handle raises
`MovedTensorError` until `partition.unpartition()` hands it back. This is the Python stand-in for
cuTile Rust's `&mut` ownership; overlapping foreign views are caught at launch instead.

A persistent kernel's `MappedPartitionMut` output takes a `MappedPartition` instead:
`tensor.partition(tile).map(map_shape, num_tile_blocks)` (cuTile Rust's
`z.partition([bm, bn]).map([m0, m1], n)`) moves the partition in and fixes the launch grid to
(num_tile_blocks, 1, 1); `mapped.unmap()` gives the partition back, `mapped.unpartition()` the
tensor.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from client_stubs import driver
from client_stubs.dlpack_export import cuda_array_interface, dlpack_capsule, exported
from client_stubs.dtypes import as_element_array, dtype, dtype_name, numpy_dtype
from client_stubs.errors import ExportedMemoryError, HostArrayError, MovedTensorError
from client_stubs.interop import DL_CUDA, GPU_DEVICE_TYPES, contiguous_strides, describe
from client_stubs.pending import PENDING

T = TypeVar("T")


class cached(Generic[T]):  # lower case: used like functools.cached_property
    """`functools.cached_property` without its lock (Python 3.11 takes one on every first
    access, a cost on each new tensor's first launch): the value is computed on first access
    and stored in the instance, which shadows this descriptor afterwards. Computing it twice
    in a race gives the same value (layouts are immutable)."""

    def __init__(self, function: Any) -> None:
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __get__(self, instance: object, owner: type | None = None) -> T:
        if instance is None:
            return self  # type: ignore[return-value]
        value = self.function(instance)
        instance.__dict__[self.name] = value
        return value


class Moves:
    """A counter bumped by every ownership move (partition, unpartition, map, unmap) and every
    `free()`: while it is unchanged, every handle is in the state it was in, which lets the
    launch memo trust object identity alone."""

    count = 0


@dataclass(frozen=True)
class TensorLayout:
    """Where a tensor's elements are: the data behind a `DeviceTensor` or `Partition`."""

    ptr: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    dtype: str
    device: int
    owner: object = field(default=None, compare=False, repr=False)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def freed(self) -> bool:
        """Whether `DeviceTensor.free()` gave this memory back (through any view of it).
        Inlined in the handles' `plan_key`, on the launch memo's path."""
        owner = self.owner
        return type(owner) is driver.DeviceAllocation and not owner.ptr

    @cached
    def values(self) -> tuple[object, ...]:
        """Everything but the owner: what a launch plan depends on (`plan_memo.value_key`)."""
        return (self.ptr, self.shape, self.strides, self.dtype, self.device)

    @cached
    def itemsize(self) -> int:
        return dtype(self.dtype).itemsize

    @cached
    def numel(self) -> int:
        return math.prod(self.shape)

    @cached
    def nbytes(self) -> int:
        return self.numel * self.itemsize

    @cached
    def byte_extent(self) -> tuple[int, int]:
        """Half-open byte range [lo, hi) holding every element; (ptr, ptr) when empty."""
        if self.numel == 0:
            return self.ptr, self.ptr
        low = sum((d - 1) * s for d, s in zip(self.shape, self.strides, strict=False) if s < 0)
        high = sum((d - 1) * s for d, s in zip(self.shape, self.strides, strict=False) if s > 0)
        return self.ptr + low * self.itemsize, self.ptr + (high + 1) * self.itemsize

    @cached
    def is_contiguous(self) -> bool:
        live = [(d, s) for d, s in zip(self.shape, self.strides, strict=False) if d != 1]
        expected = contiguous_strides(tuple(d for d, _ in live))
        return all(s == c for (_, s), c in zip(live, expected, strict=False))


_I64_MIN, _I64_MAX, _U64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


def _normalize_shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    for extent in dims:
        if not isinstance(extent, (int, np.integer)) or isinstance(extent, bool) or extent < 0:
            raise ValueError(f"shape {dims} must hold non-negative integers")
    return tuple(int(d) for d in dims)


class DeviceTensor:
    """A strided view of device memory. Cheap to construct: nothing is checked against the GPU."""

    __slots__ = ("__weakref__", "_layout", "_moved_into")

    def __init__(
        self,
        ptr: int,
        shape: int | Sequence[int],
        strides: Sequence[int] | None = None,
        dtype: object = "f32",
        device: int = 0,
        owner: object = None,
    ) -> None:
        dims = _normalize_shape(shape)
        steps = contiguous_strides(dims) if strides is None else tuple(int(s) for s in strides)
        if len(steps) != len(dims):
            raise ValueError(f"shape {dims} and strides {steps} differ in rank")
        values = dims + steps
        if not 0 <= int(ptr) <= _U64_MAX or (
            values and (min(values) < _I64_MIN or max(values) > _I64_MAX)
        ):
            raise ValueError(
                f"a device tensor's address is 64-bit and its extents and strides are int64 "
                f"(as in DLPack and the driver), got address {int(ptr):#x}, shape {dims}, "
                f"strides {steps}"
            )
        layout = TensorLayout(int(ptr), dims, steps, dtype_name(dtype), int(device), owner)
        if type(owner) is driver.DeviceAllocation:
            _check_inside(layout, owner)
        self._layout: TensorLayout | None = layout
        self._moved_into: Partition | None = None

    # ---- constructors -------------------------------------------------------------------

    @classmethod
    def empty(
        cls, shape: int | Sequence[int], dtype: object = "f32", device: int | None = None
    ) -> DeviceTensor:
        """Uninitialized contiguous device memory (cuMemAlloc)."""
        dims = _normalize_shape(shape)
        name = dtype_name(dtype)
        ordinal = driver.current_device() if device is None else device
        allocation = driver.DeviceAllocation(math.prod(dims) * _itemsize(name), ordinal)
        return cls(allocation.ptr, dims, None, name, ordinal, allocation)

    @classmethod
    def zeros(
        cls, shape: int | Sequence[int], dtype: object = "f32", device: int | None = None
    ) -> DeviceTensor:
        """Zero-filled contiguous device memory."""
        tensor = cls.empty(shape, dtype, device)
        driver.memset_d8(tensor.ptr, 0, tensor.nbytes)
        return tensor

    @classmethod
    def from_numpy(
        cls, array: np.ndarray, dtype: object = None, device: int | None = None
    ) -> DeviceTensor:
        """Copy a host array to new contiguous device memory.

        `dtype` converts first; "bf16" without ml_dtypes takes float arrays (rounded) or raw
        `uint16` bit patterns.
        """
        host = np.asarray(array)
        name = dtype_name(host.dtype) if dtype is None else dtype_name(dtype)
        host = np.ascontiguousarray(as_element_array(host, name))
        tensor = cls.empty(host.shape, name, device)
        driver.memcpy_htod(tensor.ptr, host.ctypes.data, host.nbytes)
        return tensor

    @classmethod
    def wrap(cls, obj: object, stream: int | None = None) -> DeviceTensor:
        """A zero-copy view of a GPU array from torch, cupy, jax... (DLPack or the CUDA array
        interface). The producer object stays alive as long as the view. Host arrays raise
        `HostArrayError`."""
        if isinstance(obj, DeviceTensor):
            return obj
        descriptor = describe(obj, stream)
        if descriptor is None:
            raise TypeError(
                f"{type(obj).__name__} is not an array (no __dlpack__ or __cuda_array_interface__)"
            )
        if descriptor.device_type not in GPU_DEVICE_TYPES:
            raise HostArrayError(
                f"{type(obj).__name__} lives on {descriptor.device_name}, not on a GPU; copy it "
                "with DeviceTensor.from_numpy(...) or move it to CUDA first"
            )
        return cls(
            descriptor.ptr,
            descriptor.shape,
            descriptor.strides,
            descriptor.dtype,
            descriptor.device_id,
            descriptor.owner,
        )

    # ---- the data -----------------------------------------------------------------------

    @property
    def layout(self) -> TensorLayout:
        """The tensor's data; `MovedTensorError` while it is moved into a partition."""
        if self._layout is None:
            raise MovedTensorError(
                "this tensor was moved into a Partition by partition(); call "
                "partition.unpartition() to get it back before using it"
            )
        return self._layout

    @property
    def moved(self) -> bool:
        return self._layout is None

    def plan_key(self) -> tuple[TensorLayout | None, object]:
        """(live layout or None when moved or freed, tiling): what a launch plan depends on."""
        lay = self._layout
        if lay is not None and type(lay.owner) is driver.DeviceAllocation and not lay.owner.ptr:
            return None, None
        return lay, None

    ptr = property(lambda self: self.layout.ptr)
    shape = property(lambda self: self.layout.shape)
    strides = property(lambda self: self.layout.strides)
    dtype = property(lambda self: self.layout.dtype)
    device = property(lambda self: self.layout.device)
    owner = property(lambda self: self.layout.owner)
    ndim = property(lambda self: self.layout.ndim)
    itemsize = property(lambda self: self.layout.itemsize)
    numel = property(lambda self: self.layout.numel)
    nbytes = property(lambda self: self.layout.nbytes)
    byte_extent = property(lambda self: self.layout.byte_extent)
    is_contiguous = property(lambda self: self.layout.is_contiguous)

    # ---- views --------------------------------------------------------------------------

    def narrow(self, axis: int, start: int, length: int) -> DeviceTensor:
        """A view of `length` elements along `axis` from `start` (shares memory and owner)."""
        lay = _allocated(self.layout)
        if not 0 <= axis < lay.ndim:
            raise IndexError(f"axis {axis} out of range for rank {lay.ndim}")
        if start < 0 or length < 0 or start + length > lay.shape[axis]:
            raise IndexError(
                f"[{start}, {start + length}) out of range for extent "
                f"{lay.shape[axis]} on axis {axis}"
            )
        shape = (*lay.shape[:axis], length, *lay.shape[axis + 1 :])
        ptr = lay.ptr + start * lay.strides[axis] * lay.itemsize
        return DeviceTensor(ptr, shape, lay.strides, lay.dtype, lay.device, lay.owner)

    def reshape(self, shape: int | Sequence[int]) -> DeviceTensor:
        """A contiguous view with another shape of the same element count."""
        lay = _allocated(self.layout)
        dims = _normalize_shape(shape)
        if math.prod(dims) != lay.numel:
            raise ValueError(f"cannot reshape {lay.shape} to {dims}")
        if not lay.is_contiguous:
            raise ValueError(f"reshape needs a contiguous tensor, strides are {lay.strides}")
        return DeviceTensor(lay.ptr, dims, None, lay.dtype, lay.device, lay.owner)

    def partition(self, tile_shape: int | Sequence[int]) -> Partition:
        """Move this tensor into a `Partition` of `tile_shape` tiles (for a kernel output)."""
        lay = _allocated(self.layout)
        PENDING.check_release(self, "partition")
        tiles = _normalize_shape(tile_shape)
        if len(tiles) != lay.ndim:
            raise ValueError(
                f"tile shape {tiles} has rank {len(tiles)}, tensor has rank {lay.ndim}"
            )
        if any(t <= 0 for t in tiles):
            raise ValueError(f"tile shape {tiles} must be positive")
        partition = Partition(self, lay, tiles)
        self._layout = None
        self._moved_into = partition
        Moves.count += 1
        return partition

    def _restore(self, layout: TensorLayout) -> None:
        self._layout = layout
        self._moved_into = None
        Moves.count += 1

    # ---- host transfer ------------------------------------------------------------------

    def to_numpy(self) -> np.ndarray:
        """Copy to a new host array (synchronous; any strides, via the byte extent).
        `PendingWorkError` while unfinished GPU work writes it."""
        lay = _allocated(self.layout)
        PENDING.check_host(self, "read on the host", reads_only=True)
        return _layout_to_numpy(lay)

    def copy_from_numpy(self, array: np.ndarray) -> None:
        """Overwrite this contiguous tensor with a host array of the same shape.
        `PendingWorkError` while unfinished GPU work uses it."""
        lay = _allocated(self.layout)
        PENDING.check_host(self, "overwrite from the host", reads_only=False)
        host = np.ascontiguousarray(as_element_array(np.asarray(array), lay.dtype))
        if host.shape != lay.shape:
            raise ValueError(f"shape {host.shape} differs from the tensor's {lay.shape}")
        if not lay.is_contiguous:
            raise ValueError("copy_from_numpy needs a contiguous tensor")
        driver.ensure_context(lay.device)
        driver.memcpy_htod(lay.ptr, host.ctypes.data, host.nbytes)

    # ---- zero-copy export (see `dlpack_export`) -------------------------------------------

    def _exported(self, how: str) -> TensorLayout:
        """The layout to hand a consumer: not moved or freed, and no unfinished work on it."""
        lay = _allocated(self.layout)
        PENDING.check_host(self, f"export through {how}", reads_only=False)
        return lay

    def __dlpack__(
        self,
        *,
        stream: int | None = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> object:
        """A DLPack capsule of this tensor's memory, without copying (`torch.from_dlpack`,
        `cupy.from_dlpack`, `jax.dlpack`...). `MovedTensorError` while it is moved into a
        partition, `PendingWorkError` while unfinished GPU work uses it; `stream` needs no
        wait then. `copy=True` and other devices raise `BufferError`."""
        lay = self._exported("DLPack")
        if copy:
            raise BufferError("a DeviceTensor exports its memory without copying (copy=True)")
        if dl_device is not None and tuple(dl_device) != (DL_CUDA, lay.device):
            raise BufferError(f"a DeviceTensor lives on cuda:{lay.device}, not on {dl_device}")
        versioned = max_version is not None and int(max_version[0]) >= 1
        return dlpack_capsule(
            lay.ptr, lay.shape, lay.strides, lay.dtype, lay.device, lay.owner,
            versioned=versioned,
        )  # fmt: skip

    def __dlpack_device__(self) -> tuple[int, int]:
        return DL_CUDA, self.layout.device

    @property
    def __cuda_array_interface__(self) -> dict[str, object]:
        """The CUDA array interface (v3), without copying; refuses like `__dlpack__`, and
        element types numpy lacks (bf16, fp8...: use DLPack)."""
        lay = self._exported("__cuda_array_interface__")
        return cuda_array_interface(lay.ptr, lay.shape, lay.strides, lay.dtype, lay.itemsize)

    def free(self) -> None:
        """Free the device memory this tensor owns (allocated by `empty`, `zeros`,
        `from_numpy`). Every view and partition of it then raises `MovedTensorError` where its
        memory would be used (a launch: `MovedArgumentError`). `PendingWorkError` while
        unfinished GPU work or a live CUDA graph uses any of it, `ExportedMemoryError` while
        a DLPack consumer (`torch.from_dlpack`) holds it; `ValueError` for foreign memory."""
        lay = self.layout
        allocation = lay.owner
        if not isinstance(allocation, driver.DeviceAllocation):
            raise ValueError(
                f"{self!r} does not own its memory (it wraps {type(allocation).__name__}); "
                "free it through its owner"
            )
        PENDING.check_release(_AllocationSpan(allocation), "free")
        if exported(allocation):
            raise ExportedMemoryError(
                f"cannot free {allocation!r}: a tensor exported from it through DLPack is "
                "still held by its consumer; drop that tensor first"
            )
        allocation._release()  # the one way safe code frees device memory
        Moves.count += 1  # a launch remembered with any view of it is checked (refused) again

    def __repr__(self) -> str:
        if self._layout is None:
            return "DeviceTensor(<moved into a Partition>)"
        lay = self._layout
        return (
            f"DeviceTensor(ptr={lay.ptr:#x}, shape={lay.shape}, strides={lay.strides}, "
            f"dtype={lay.dtype}, device={lay.device})"
        )


def _check_inside(layout: TensorLayout, allocation: driver.DeviceAllocation) -> None:
    """A view said to be of `allocation` must address only its bytes: the checks (pending
    work, freed memory, overlap) go by the owner, so a view past it, or of other memory,
    once let launches write memory no check looked at."""
    low, high = layout.byte_extent
    start = allocation.ptr
    if not start:  # freed: the view may exist, its every use is refused (`freed`)
        return
    if low < start or high > start + allocation.nbytes:
        raise ValueError(
            f"bytes {low:#x}..{high:#x} are not all inside {allocation!r}: a view of an "
            "allocation addresses only its memory"
        )


class Partition:
    """A tensor moved in for use as a kernel output, split into tiles of `tile_shape`."""

    __slots__ = ("__weakref__", "_layout", "_mapped_into", "_tensor", "_tile_shape")

    def __init__(self, tensor: DeviceTensor, layout: TensorLayout, tile_shape: tuple[int, ...]):
        self._tensor: DeviceTensor | None = tensor
        self._layout = layout
        self._tile_shape = tile_shape
        self._mapped_into: MappedPartition | None = None

    @property
    def layout(self) -> TensorLayout:
        if self._tensor is None:
            raise MovedTensorError(
                "this Partition was consumed by unpartition(); use the tensor it returned"
            )
        if self._mapped_into is not None:
            raise MovedTensorError(
                "this Partition was moved into a MappedPartition by map(); call "
                "mapped.unmap() to get it back before using it"
            )
        return self._layout

    @property
    def moved(self) -> bool:
        return self._tensor is None or self._mapped_into is not None

    def plan_key(self) -> tuple[TensorLayout | None, object]:
        """(live layout or None when moved, consumed or freed, tile shape)."""
        lay = self._layout
        if self._tensor is None or self._mapped_into is not None:
            return None, None
        if type(lay.owner) is driver.DeviceAllocation and not lay.owner.ptr:
            return None, None
        return lay, self._tile_shape

    @property
    def tile_shape(self) -> tuple[int, ...]:
        return self._tile_shape

    @property
    def grid(self) -> tuple[int, ...]:
        """Tiles per axis: ceil(extent / tile)."""
        return tuple(-(-d // t) for d, t in zip(self.layout.shape, self._tile_shape, strict=False))

    ptr = property(lambda self: self.layout.ptr)
    shape = property(lambda self: self.layout.shape)
    strides = property(lambda self: self.layout.strides)
    dtype = property(lambda self: self.layout.dtype)
    device = property(lambda self: self.layout.device)
    ndim = property(lambda self: self.layout.ndim)
    byte_extent = property(lambda self: self.layout.byte_extent)

    @property
    def num_tiles(self) -> int:
        """Tiles in all: the product of `grid`."""
        return math.prod(self.grid)

    def to_numpy(self) -> np.ndarray:
        """Copy the partitioned tensor to the host without unpartitioning it (e.g. between
        graph replays). `PendingWorkError` while unfinished GPU work writes it."""
        lay = _allocated(self.layout)
        PENDING.check_host(self, "read on the host", reads_only=True)
        return _layout_to_numpy(lay)

    def map(self, map_shape: int | Sequence[int], num_tile_blocks: int) -> MappedPartition:
        """Move this partition into a `MappedPartition` for a persistent kernel's
        `MappedPartitionMut` output: `num_tile_blocks` blocks walk its tiles in the grouped
        order `map_shape` names (it must equal the kernel's MAP; the launch checks it, and
        that 1 <= num_tile_blocks <= num_tiles)."""
        lay = _allocated(self.layout)
        PENDING.check_release(self, "map")
        groups = _normalize_shape(map_shape)
        if len(groups) != lay.ndim:
            raise ValueError(
                f"map shape {groups} has rank {len(groups)}, the partition has rank {lay.ndim}"
            )
        if any(g < 0 for g in groups) or not any(groups):
            raise ValueError(
                f"map shape {groups} must hold group sizes or 0 (an OWNED axis), "
                "with at least one group"
            )
        if (
            not isinstance(num_tile_blocks, (int, np.integer))
            or isinstance(num_tile_blocks, bool)
            or num_tile_blocks < 1
        ):
            raise ValueError(f"num_tile_blocks must be a positive integer, got {num_tile_blocks!r}")
        mapped = MappedPartition(self, groups, int(num_tile_blocks))
        self._mapped_into = mapped
        Moves.count += 1
        return mapped

    def _unmap(self) -> None:
        self._mapped_into = None
        Moves.count += 1

    def unpartition(self) -> DeviceTensor:
        """Give the tensor back (the same handle that was partitioned); consumes the partition."""
        tensor = self._tensor
        if tensor is None:
            raise MovedTensorError("unpartition() was already called on this Partition")
        if self._mapped_into is not None:
            raise MovedTensorError(
                "this Partition is moved into a MappedPartition; call mapped.unpartition() "
                "or mapped.unmap() first"
            )
        PENDING.check_release(self, "unpartition")
        self._tensor = None
        tensor._restore(self._layout)  # counts the move
        return tensor

    def __repr__(self) -> str:
        if self._tensor is None:
            state = "consumed"
        elif self._mapped_into is not None:
            state = "moved into a MappedPartition"
        else:
            state = f"shape={self._layout.shape}"
        return f"Partition({state}, tile_shape={self._tile_shape})"


class MappedPartition:
    """A `Partition` moved in for a persistent kernel's `MappedPartitionMut` output:
    `num_tile_blocks` tile blocks walk its tiles in the grouped order `map_shape`."""

    __slots__ = ("__weakref__", "_map_shape", "_num_tile_blocks", "_partition")

    def __init__(
        self, partition: Partition, map_shape: tuple[int, ...], num_tile_blocks: int
    ) -> None:
        self._partition: Partition | None = partition
        self._map_shape = map_shape
        self._num_tile_blocks = num_tile_blocks

    def _live(self) -> Partition:
        if self._partition is None:
            raise MovedTensorError(
                "this MappedPartition was consumed by unmap() or unpartition(); use what it "
                "returned"
            )
        return self._partition

    @property
    def layout(self) -> TensorLayout:
        return self._live()._layout

    @property
    def moved(self) -> bool:
        return self._partition is None

    def plan_key(self) -> tuple[TensorLayout | None, object]:
        """(live layout or None when consumed or freed, (tiles, map, num_tile_blocks))."""
        partition = self._partition
        if partition is None:
            return None, None
        lay = partition._layout
        if type(lay.owner) is driver.DeviceAllocation and not lay.owner.ptr:
            return None, None
        return lay, (partition._tile_shape, self._map_shape, self._num_tile_blocks)

    @property
    def tile_shape(self) -> tuple[int, ...]:
        return self._live().tile_shape

    @property
    def map_shape(self) -> tuple[int, ...]:
        return self._map_shape

    @property
    def num_tile_blocks(self) -> int:
        """The persistent grid: the kernel launches (num_tile_blocks, 1, 1) blocks."""
        return self._num_tile_blocks

    @property
    def grid(self) -> tuple[int, ...]:
        """Tiles per axis: ceil(extent / tile)."""
        return tuple(-(-d // t) for d, t in zip(self.layout.shape, self.tile_shape, strict=False))

    @property
    def num_tiles(self) -> int:
        return math.prod(self.grid)

    @property
    def work_items(self) -> int:
        """What the persistent loop hands out: one item per tile of the streamed axes (an
        OWNED axis, map entry 0, is all of one item)."""
        return math.prod(g for g, m in zip(self.grid, self._map_shape, strict=True) if m)

    ptr = property(lambda self: self.layout.ptr)
    shape = property(lambda self: self.layout.shape)
    strides = property(lambda self: self.layout.strides)
    dtype = property(lambda self: self.layout.dtype)
    device = property(lambda self: self.layout.device)
    ndim = property(lambda self: self.layout.ndim)
    byte_extent = property(lambda self: self.layout.byte_extent)

    def to_numpy(self) -> np.ndarray:
        """Copy the tensor to the host without unmapping (`PendingWorkError` while unfinished
        GPU work writes it)."""
        lay = _allocated(self.layout)
        PENDING.check_host(self, "read on the host", reads_only=True)
        return _layout_to_numpy(lay)

    def unmap(self) -> Partition:
        """Give the partition back (the same object that was mapped); consumes this one."""
        partition = self._live()
        PENDING.check_release(self, "unmap")
        self._partition = None
        partition._unmap()  # counts the move
        return partition

    def unpartition(self) -> DeviceTensor:
        """Give the tensor back: `unmap().unpartition()`."""
        return self.unmap().unpartition()

    def __repr__(self) -> str:
        if self._partition is None:
            return f"MappedPartition(consumed, map_shape={self._map_shape})"
        return (
            f"MappedPartition(shape={self.layout.shape}, tile_shape={self.tile_shape}, "
            f"map_shape={self._map_shape}, num_tile_blocks={self._num_tile_blocks})"
        )


def _itemsize(name: str) -> int:
    return dtype(name).itemsize


def _allocated(lay: TensorLayout) -> TensorLayout:
    """`lay`, unless `DeviceTensor.free()` gave its memory back (the allocator may have handed
    it to another tensor since): then `MovedTensorError`."""
    if lay.freed:
        raise MovedTensorError(
            "this tensor's memory was freed by free() (of it or of another view of the same "
            "allocation); the allocator may have handed it out again"
        )
    return lay


def _layout_to_numpy(lay: TensorLayout) -> np.ndarray:
    """Copy `lay`'s elements to a new host array (any strides, via the byte extent)."""
    host_dtype = numpy_dtype(lay.dtype)
    if lay.numel == 0:
        return np.empty(lay.shape, host_dtype)
    low, high = lay.byte_extent
    raw = np.empty(high - low, np.uint8)
    driver.ensure_context(lay.device)
    driver.memcpy_dtoh(raw.ctypes.data, low, high - low)
    view = np.lib.stride_tricks.as_strided(
        raw[lay.ptr - low :].view(host_dtype),
        shape=lay.shape,
        strides=tuple(s * lay.itemsize for s in lay.strides),
    )
    return np.array(view, copy=True)


@dataclass(frozen=True)
class _AllocationSpan:
    """The whole of one `DeviceAllocation`, as `PENDING` sees it."""

    allocation: driver.DeviceAllocation

    @property
    def device(self) -> int:
        return self.allocation.device

    @property
    def byte_extent(self) -> tuple[int, int]:
        return self.allocation.ptr, self.allocation.ptr + self.allocation.nbytes

    def __repr__(self) -> str:
        return repr(self.allocation)
