"""DeviceTensor / Partition bookkeeping and zero-copy interop (no GPU: fake pointers)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from client_stubs import DeviceTensor, HostArrayError, MovedTensorError, Partition, interop
from client_stubs.interop import DL_CPU, describe, from_cuda_array_interface, from_dlpack


def test_defaults_are_contiguous():
    t = DeviceTensor(0x1000, (4, 5, 6), dtype="f16")
    assert t.strides == (30, 6, 1) and t.ndim == 3 and t.itemsize == 2
    assert t.numel == 120 and t.nbytes == 240 and t.is_contiguous
    assert t.byte_extent == (0x1000, 0x1000 + 240)


def test_byte_extent_from_strides():
    t = DeviceTensor(0x1000, (3, 4), (10, 2), dtype="f32")
    # last element at offset 2*10 + 3*2 = 26 elements -> 27 elements span
    assert t.byte_extent == (0x1000, 0x1000 + 27 * 4)
    assert not t.is_contiguous
    assert DeviceTensor(0x1000, (0, 4)).byte_extent == (0x1000, 0x1000)


def test_negative_stride_extent():
    t = DeviceTensor(0x2000, (4,), (-1,), dtype="f32")
    assert t.byte_extent == (0x2000 - 12, 0x2004)


def test_layouts_stay_in_int64_as_dlpack_and_the_driver_keep_them():
    assert DeviceTensor(2**64 - 16, (2**62,), (1,)).shape == (2**62,)
    for ptr, shape, strides in (
        (2**64, (4,), None),  # past a 64-bit address
        (-16, (4,), None),
        (0, (2**63,), None),  # an extent past int64
        (0, (4,), (2**63,)),  # a stride past int64
        (0, (2**32, 2**32, 2**32), None),  # contiguous strides past int64: (2^64, 2^32, 1)
    ):
        with pytest.raises(ValueError, match="int64"):
            DeviceTensor(ptr, shape, strides)


def test_dtype_specs_are_normalized():
    assert DeviceTensor(0, 4, dtype=np.float16).dtype == "f16"
    assert DeviceTensor(0, 4, dtype="float32").dtype == "f32"
    with pytest.raises(ValueError):
        DeviceTensor(0, (2, 2), strides=(1,))
    with pytest.raises(ValueError):
        DeviceTensor(0, (-1,))


def test_narrow_and_reshape_share_memory():
    base = DeviceTensor(0x1000, (10, 8), dtype="f32", owner="OWNER")
    rows = base.narrow(0, 2, 3)
    assert rows.ptr == 0x1000 + 2 * 8 * 4 and rows.shape == (3, 8) and rows.owner == "OWNER"
    cols = base.narrow(1, 4, 4)
    assert cols.ptr == 0x1000 + 16 and cols.strides == (8, 1) and not cols.is_contiguous
    assert base.reshape(80).shape == (80,)
    with pytest.raises(ValueError):
        cols.reshape(12)
    with pytest.raises(IndexError):
        base.narrow(0, 8, 3)


def test_partition_moves_and_unpartition_returns_the_same_handle():
    t = DeviceTensor(0x1000, (300, 200), dtype="f32")
    p = t.partition([128, 64])
    assert isinstance(p, Partition) and t.moved
    assert p.grid == (3, 4) and p.tile_shape == (128, 64) and p.shape == (300, 200)
    for attribute in ("ptr", "shape", "strides", "dtype", "nbytes", "byte_extent"):
        with pytest.raises(MovedTensorError, match="unpartition"):
            getattr(t, attribute)
    with pytest.raises(MovedTensorError):
        t.partition([1, 1])
    assert "moved" in repr(t)
    back = p.unpartition()
    assert back is t and t.ptr == 0x1000 and not t.moved
    with pytest.raises(MovedTensorError):
        p.unpartition()
    with pytest.raises(MovedTensorError):
        _ = p.ptr
    assert "consumed" in repr(p)


def test_partition_shape_checks():
    t = DeviceTensor(0x1000, (8, 8))
    with pytest.raises(ValueError, match="rank"):
        t.partition([8])
    with pytest.raises(ValueError, match="positive"):
        t.partition([0, 8])
    assert not t.moved


def test_wrap_rejects_host_arrays():
    with pytest.raises(HostArrayError, match="cpu"):
        DeviceTensor.wrap(np.zeros(4, np.float32))
    with pytest.raises(TypeError):
        DeviceTensor.wrap(object())


def test_wrap_returns_device_tensors_unchanged():
    t = DeviceTensor(0x1000, 4)
    assert DeviceTensor.wrap(t) is t


class FakeCudaArray:
    def __init__(self, ptr: int, shape: tuple[int, ...], typestr: str, strides=None) -> None:
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": typestr,
            "data": (ptr, False),
            "strides": strides,
            "version": 3,
        }
        self.device = type("Device", (), {"id": 1})()


def test_wrap_cuda_array_interface_converts_byte_strides():
    obj = FakeCudaArray(0xA000, (4, 6), "<f2", strides=(24, 2))
    t = DeviceTensor.wrap(obj)
    assert (t.ptr, t.shape, t.strides, t.dtype, t.device) == (0xA000, (4, 6), (12, 1), "f16", 1)
    assert t.owner is obj


def test_cuda_array_interface_rejects_odd_strides():
    with pytest.raises(TypeError, match="multiples"):
        from_cuda_array_interface(FakeCudaArray(0xA000, (4,), "<f4", strides=(6,)))


def test_dlpack_reader_on_a_numpy_slice():
    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    view = base[1:5, 2:8:2]
    d = from_dlpack(view)
    assert d.device_type == DL_CPU and d.dtype == "f32"
    assert d.shape == (4, 3) and d.strides == (10, 2)
    assert d.ptr == view.ctypes.data == base.ctypes.data + (10 + 2) * 4
    assert describe(view).device_type == DL_CPU


@pytest.mark.parametrize(
    ("np_dtype", "name"),
    [(np.int8, "i8"), (np.uint16, "u16"), (np.float64, "f64"), (np.bool_, "bool")],
)
def test_dlpack_dtypes(np_dtype, name):
    assert from_dlpack(np.zeros(3, np_dtype)).dtype == name


def test_describe_non_arrays():
    assert describe(object()) is None
    assert describe(3.0) is None


@pytest.mark.parametrize(
    ("code", "bits", "lanes", "name"),
    [
        (10, 8, 1, "f8e4m3fn"),
        (12, 8, 1, "f8e5m2"),
        (14, 8, 1, "f8e8m0fnu"),
        (17, 4, 2, "f4e2m1fnx2"),
    ],
)
def test_dlpack_low_precision_dtypes(code, bits, lanes, name):
    """torch's float8_e4m3fn / float8_e5m2 / float8_e8m0fnu and float4_e2m1fn_x2 (two fp4
    values per byte: bits 4, lanes 2) as DLPack describes them."""
    shape = (ctypes.c_int64 * 1)(16)
    tensor = interop._DLTensor(
        data=0xB000,
        device=interop._DLDevice(interop.DL_CUDA, 0),
        ndim=1,
        dtype=interop._DLDataType(code, bits, lanes),
        shape=shape,
        strides=None,
        byte_offset=0,
    )
    d = interop._describe_dltensor(tensor, owner=None)
    assert (d.dtype, d.shape, d.strides, d.ptr) == (name, (16,), (1,), 0xB000)


def test_dlpack_unknown_lanes_are_rejected():
    shape = (ctypes.c_int64 * 1)(4)
    tensor = interop._DLTensor(
        data=0xB000,
        device=interop._DLDevice(interop.DL_CUDA, 0),
        ndim=1,
        dtype=interop._DLDataType(10, 8, 4),
        shape=shape,
        byte_offset=0,
    )
    with pytest.raises(TypeError, match="unsupported DLPack dtype"):
        interop._describe_dltensor(tensor, owner=None)


def test_a_view_of_an_allocation_addresses_only_its_bytes(fake_driver):
    """The checks go by the owner: a view past it, or over another (freed) allocation, once
    launched on memory none of them looked at."""
    x, other = DeviceTensor.empty(256), DeviceTensor.empty(256)
    inside = DeviceTensor(x.ptr + 512, 128, owner=x.owner)
    assert inside.byte_extent == (x.ptr + 512, x.ptr + 1024)
    reversed_view = DeviceTensor(x.ptr + 1020, 256, strides=(-1,), owner=x.owner)
    assert reversed_view.byte_extent == (x.ptr, x.ptr + 1024)
    for ptr, shape in ((x.ptr, 257), (x.ptr - 4, 8), (other.ptr, 4), (x.ptr + 1024, 1)):
        with pytest.raises(ValueError, match="not all inside DeviceAllocation"):
            DeviceTensor(ptr, shape, owner=x.owner)
    x.free()
    DeviceTensor(0x1234, 4, owner=x.owner)  # freed: made, then refused wherever it is used
