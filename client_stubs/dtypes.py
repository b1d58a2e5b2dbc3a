"""cuTile element types: names, sizes, numpy equivalents and scalar packing for ABI slots,
all read from the element table (`client_stubs.element_table`).

Types numpy lacks map to `ml_dtypes` types when that package is importable (`bf16` ->
`bfloat16`, `f8e4m3fn` -> `float8_e4m3fn`, ...) and are otherwise carried as raw bit patterns
(bf16: `uint16`; fp8 and packed fp4 pairs: `uint8`). `float_to_bf16_bits` /
`bf16_bits_to_float` and `float_array_to_bits` / `bits_to_float_array` convert.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from functools import cache

import numpy as np

from client_stubs.element_table import (
    BOOL,
    ELEMENT_BY_NAME,
    FLOAT,
    HOST_ELEMENTS,
    INT,
    PACKED,
    UINT,
    Element,
)
from client_stubs.minifloat import IEEE, FloatFormat


@dataclass(frozen=True)
class DType:
    """One cuTile element type."""

    name: str  # cuTile spelling: "f32", "bf16", "i32", "bool", ...
    itemsize: int  # bytes per element
    kind: str  # "b" bool, "i" signed, "u" unsigned, "f" float
    numpy_name: str  # numpy spelling; "" where numpy has none (see numpy_dtype)

    @property
    def is_integer(self) -> bool:
        return self.kind in ("i", "u")

    @property
    def is_float(self) -> bool:
        return self.kind == "f"


_KIND_CODES = {BOOL: "b", INT: "i", UINT: "u", FLOAT: "f", PACKED: "u"}  # packed: raw bytes
_ALL = tuple(DType(e.name, e.storage_bytes, _KIND_CODES[e.kind], e.numpy) for e in HOST_ELEMENTS)
DTYPES: dict[str, DType] = {d.name: d for d in _ALL}

# struct codes (little-endian) for the scalar ctypes an ABI slot may carry; "" packs specially.
_STRUCT_CODES: dict[str, str] = {e.name: e.struct for e in HOST_ELEMENTS if e.struct}
CTYPE_SIZES: dict[str, int] = {name: d.itemsize for name, d in DTYPES.items()}

_ALIASES: dict[str, str] = {alias: e.name for e in HOST_ELEMENTS for alias in e.aliases}


def dtype(name: str) -> DType:
    """The `DType` named `name` (cuTile spelling); `KeyError` names the known ones."""
    try:
        return DTYPES[name]
    except KeyError:
        raise KeyError(f"unknown cuTile dtype {name!r}; known: {', '.join(DTYPES)}") from None


@cache
def _ml_dtype(attr: str) -> np.dtype | None:
    """`ml_dtypes.<attr>` as a numpy dtype, None when ml_dtypes (or that type) is missing."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    found = getattr(ml_dtypes, attr, None)
    return None if found is None else np.dtype(found)


def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype holding elements of `name`: numpy's own, else the element table's
    ml_dtypes type when ml_dtypes is importable, else raw bit patterns (bf16: `uint16`)."""
    element = ELEMENT_BY_NAME[dtype(name).name]
    if element.numpy:
        return np.dtype(element.numpy)
    return (element.ml_dtypes and _ml_dtype(element.ml_dtypes)) or np.dtype(element.raw)


_NAMES: dict[tuple[type, object], str] = {}  # (type of a spec, the spec) -> its cuTile name


def dtype_name(spec: object) -> str:
    """Normalize a dtype spec to its cuTile name.

    Accepts cuTile names ("f32"), numpy dtypes and type objects (np.float16), their string
    spellings ("float16"), torch dtypes (torch.bfloat16) and ml_dtypes.bfloat16. Every
    wrapped array asks: answers are remembered per (type, spec), so a numpy dtype (whose
    `.name` numpy computes in Python, ~5 µs) is looked up once; the type in the key keeps a
    spec apart from an equal one of another kind (numpy's dtype("f16") == "f16").
    """
    try:
        key = (type(spec), spec)
        known = _NAMES.get(key)
    except TypeError:  # unhashable: not remembered
        return _dtype_name(spec)
    if known is None:
        known = _dtype_name(spec)
        if len(_NAMES) < 256:
            _NAMES[key] = known
    return known


def _dtype_name(spec: object) -> str:
    if isinstance(spec, str):
        text = spec.removeprefix("torch.").removeprefix("numpy.")
        if text in DTYPES:
            return text
        if text in _ALIASES:
            return _ALIASES[text]
        try:
            return dtype_name(np.dtype(text))
        except TypeError:
            raise KeyError(f"unknown dtype {spec!r}") from None
    if type(spec).__module__.startswith("torch"):
        return dtype_name(str(spec))
    try:
        np_dtype = np.dtype(spec)  # type: ignore[call-overload]
    except TypeError:
        raise KeyError(f"unknown dtype {spec!r}") from None
    if np_dtype.name == "bool":
        return "bool"
    if np_dtype.name in _ALIASES:  # numpy's names and ml_dtypes' ("bfloat16")
        return _ALIASES[np_dtype.name]
    raise KeyError(f"numpy dtype {np_dtype} has no cuTile equivalent")


def float_to_bf16_bits(value: float) -> int:
    """Round a Python float to bfloat16 (round to nearest even) and return its 16-bit pattern."""
    if math.isnan(value):
        return 0x7FC0
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    bits += 0x7FFF + ((bits >> 16) & 1)
    return (bits >> 16) & 0xFFFF


def bf16_bits_to_float(bits: int) -> float:
    """The float value of a 16-bit bfloat16 pattern."""
    return float(struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0])


def f32_array_to_bf16_bits(values: np.ndarray) -> np.ndarray:
    """Round an array to bfloat16 (nearest even), returned as `uint16` bit patterns."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    return np.where(nan, np.uint16(0x7FC0), rounded)


def bf16_bits_to_f32_array(bits: np.ndarray) -> np.ndarray:
    """Widen `uint16` bfloat16 bit patterns to float32."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def float_array_to_bits(values: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Round an array to a small float format (nearest, ties to the even code), returned as
    `uint8` bit patterns. Past the largest value: infinity (IEEE formats), NaN ("fn"
    formats) or the largest value (formats without either); NaN becomes the format's NaN."""
    v = np.asarray(values, dtype=np.float64)
    magnitudes, codes = (np.array(t) for t in fmt.finite)
    mag = np.abs(v)
    above = np.searchsorted(magnitudes, mag).clip(0, len(magnitudes) - 1)
    below = (above - 1).clip(0)
    d_above, d_below = magnitudes[above] - mag, mag - magnitudes[below]
    take_below = (d_below < d_above) | ((d_below == d_above) & (codes[below] % 2 == 0))
    out = np.where(take_below & (above > 0), codes[below], codes[above]).astype(np.int64)
    top = len(magnitudes) - 1
    overflow = mag - magnitudes[top] >= (magnitudes[top] - magnitudes[top - 1]) / 2
    past = fmt.nan_code if fmt.specials != IEEE else ((1 << fmt.exponent) - 1) << fmt.mantissa
    out = np.where(overflow, codes[top] if past is None else past, out)
    if fmt.signed:
        out |= np.signbit(v).astype(np.int64) << (fmt.exponent + fmt.mantissa)
    elif np.any((v < 0) & ~np.isnan(v)):
        raise ValueError(f"negative values have no encoding in the unsigned format {fmt}")
    nan = np.isnan(v)
    if np.any(nan):
        if fmt.nan_code is None:
            raise ValueError(f"NaN has no encoding in {fmt}")
        out = np.where(nan, fmt.nan_code, out)
    return out.astype(np.uint8)


def bits_to_float_array(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Widen `uint8` bit patterns of a small float format to float32."""
    values = np.array([fmt.decode(code) for code in range(1 << fmt.bits)], dtype=np.float32)
    return values[np.asarray(bits, dtype=np.uint8) & ((1 << fmt.bits) - 1)]


def f32_array_to_tf32_bits(values: np.ndarray) -> np.ndarray:
    """f32 values rounded to tf32 (10 fraction bits, nearest even) as `uint32` f32 bit
    patterns; infinities and NaNs keep their bits."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0xFFF + ((bits >> 13) & 1)) & 0xFFFFE000
    finite = np.isfinite(values)
    return np.where(finite, rounded, bits).astype(np.uint32)


def _round_to_raw(host: np.ndarray, element: Element) -> np.ndarray:
    """Float values as raw bit patterns of an element numpy cannot hold."""
    if element.float_format is not None:
        return float_array_to_bits(host, element.float_format)
    if element.name == "bf16":
        return f32_array_to_bf16_bits(host.astype(np.float32))
    if element.name == "tf32":
        return f32_array_to_tf32_bits(host.astype(np.float32))
    raise TypeError(f"{element.name} takes raw {element.raw} bytes, got {host.dtype} values")


def as_element_array(host: np.ndarray, name: str) -> np.ndarray:
    """`host` as an array of `numpy_dtype(name)`. Elements numpy has no type for (bf16, fp8,
    packed fp4 without ml_dtypes) take raw bit patterns of their width as they are (bf16:
    `uint16`, fp8: `uint8`), and float arrays rounded."""
    target = numpy_dtype(name)
    if host.dtype == target:
        return host
    element = ELEMENT_BY_NAME[name]
    if not element.numpy and host.dtype == np.dtype(element.raw):
        return host.view(target)  # raw bit patterns
    if not element.numpy and target == np.dtype(element.raw):
        return _round_to_raw(host, element)
    return host.astype(target)


def struct_code(ctype: str) -> str | None:
    """The `struct` code of an ABI ctype, None when it needs custom packing (bf16, fp8)."""
    return _STRUCT_CODES.get(ctype)


def ctype_size(ctype: str) -> int:
    """Size in bytes of an ABI slot ctype; `KeyError` for unknown ctypes."""
    try:
        return CTYPE_SIZES[ctype]
    except KeyError:
        raise KeyError(f"unknown ABI ctype {ctype!r}; known: {', '.join(CTYPE_SIZES)}") from None


def pack_ctype(ctype: str, value: int | float | bool, buffer: bytearray, offset: int) -> None:
    """Write `value` as `ctype` (little-endian) into `buffer` at `offset`.

    Raises `OverflowError` when an integer does not fit and `TypeError` for a wrong kind.
    """
    code = _STRUCT_CODES.get(ctype)
    fmt = ELEMENT_BY_NAME[dtype(ctype).name].float_format
    if fmt is not None:  # fp8: the nearest code; OverflowError past the largest value
        struct.pack_into("<B", buffer, offset, fmt.encode(float(value)))
        return
    if code is None:  # bf16: no struct code
        struct.pack_into("<H", buffer, offset, float_to_bf16_bits(float(value)))
        return
    if code in "efd":
        value = float(value)  # struct raises OverflowError past the format's range
    if code in "bBhHiIqQ":
        if isinstance(value, float):
            raise TypeError(f"{ctype} slot needs an integer, got float {value}")
        value = int(value)
        d = DTYPES[ctype]
        lo, hi = _int_range(d)
        if not lo <= value <= hi:
            raise OverflowError(f"{value} does not fit in {ctype} [{lo}, {hi}]")
    struct.pack_into("<" + code, buffer, offset, value)


def _int_range(d: DType) -> tuple[int, int]:
    bits = d.itemsize * 8
    if d.kind == "u":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def int_range(name: str) -> tuple[int, int]:
    """Inclusive value range of an integer dtype."""
    d = dtype(name)
    if not d.is_integer:
        raise KeyError(f"{name} is not an integer dtype")
    return _int_range(d)
