"""The one table of cuTile element types: every layer reads it, so adding a type is one row here.

Two tables:

* `ELEMENTS`: the element types a kernel names (`f32`, `u8`, `bf16`, ...), one row each with
  what the front end, the lowering, the launch contract and the Python client need: kind,
  width, the Tile IR element that carries it, bytes in memory, the numpy / DLPack / `struct`
  spellings of host data, the largest finite value of a float.
* `IR_ELEMENTS`: Tile IR's element types (no signedness: ops carry it), with their bytecode
  type tags and the bytecode version that introduced them (tileir-facts §2.5).

Home: the client package, because a GPU host installs only `client_stubs/`, which must not
import the compiler (tests/client_stubs/test_package_boundaries.py forbids `parser`,
`lowering`, `service` and `tree_sitter` imports there). The compiler (`parser.types`,
`lowering.ir.types`, `lowering.element_types`, `lowering.bytecode.tables`) imports this module.
The module itself uses only the standard library; importing it runs the client package's
`__init__`, which brings numpy but neither grpc nor CUDA (the boundary test checks that too).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from client_stubs.minifloat import F4E2M1FN, F8E4M3FN, F8E5M2, F8E8M0FNU, FloatFormat

# Kinds. PACKED: bytes that each hold several narrower values (`packs` says which).
BOOL, INT, UINT, FLOAT, PACKED = "bool", "int", "uint", "float", "packed"


@dataclass(frozen=True)
class Element:
    """One element type of the kernel language, by its Rust spelling."""

    name: str
    kind: str  # BOOL, INT, UINT, FLOAT or PACKED
    bits: int  # width of one value (bool 1; tf32 is stored in 32; sub-byte types 4)
    ir: str  # the Tile IR element type that carries it (an `IR_ELEMENTS` name)
    numpy: str = ""  # numpy dtype name; "" when numpy has none (see `ml_dtypes` / `raw`)
    ml_dtypes: str = ""  # the `ml_dtypes` type used when that package is importable
    raw: str = ""  # numpy dtype carrying raw bit patterns when neither exists
    struct: str = ""  # `struct` code of a scalar ABI slot; "" packs by `float_format`
    float_format: FloatFormat | None = None  # bit layout of a float `struct` cannot pack
    dlpack: tuple[int, int, int] | None = None  # DLPack (type code, bits, lanes)
    float_max: float | None = None  # largest finite value of a float type
    mantissa: int | None = None  # fraction bits of a float type (f32: 23)
    computes: bool = True  # Tile IR's arithmetic, comparison and math ops take it
    packs: tuple[str, int] | None = None  # PACKED: (the element, how many per byte)
    host: bool = True  # the client can hold it (tensors and scalar slots)
    aliases: tuple[str, ...] = ()  # numpy / torch / ml_dtypes spellings

    @property
    def is_float(self) -> bool:
        return self.kind == FLOAT

    @property
    def is_integer(self) -> bool:
        return self.kind in (INT, UINT)

    @property
    def is_signed(self) -> bool:
        """Signed integers and floats (ops on them take signed semantics)."""
        return self.kind in (INT, FLOAT)

    @property
    def storage_bytes(self) -> int:
        """Bytes per element in memory (bool takes a whole byte)."""
        return max(1, self.bits // 8)

    @property
    def addressable(self) -> bool:
        """Whole bytes per element: it can be a tensor element or a scalar parameter
        (`f4e2m1fn` and `i4` exist only inside kernels, packed by `pack`)."""
        return self.kind == BOOL or self.bits % 8 == 0

    @property
    def overflow_threshold(self) -> float | None:
        """The smallest magnitude that rounds to infinity, half a unit in the last place past
        `float_max` (rustc's `overflowing_literals`); inf where a Python float cannot reach it
        (f64), None for types that are not floats."""
        if self.float_max is None or self.mantissa is None:
            return None
        exponent = math.frexp(self.float_max)[1] - 1
        return self.float_max + math.ldexp(1.0, exponent - self.mantissa - 1)

    @property
    def is_byte(self) -> bool:
        """One byte of storage: what `pack` writes and `unpack` reads (cuTile's
        `ByteElement`: `i8`, `u8`, `f4e2m1fnx2`)."""
        return self.ir == "i8"


def _int(name: str, bits: int, signed: bool) -> Element:
    numpy = f"{'' if signed else 'u'}int{bits}"
    codes = {8: "b", 16: "h", 32: "i", 64: "q"}
    return Element(
        name,
        INT if signed else UINT,
        bits,
        f"i{bits}",
        numpy=numpy,
        struct=codes[bits] if signed else codes[bits].upper(),
        dlpack=(0 if signed else 1, bits, 1),
        aliases=(numpy,),
    )


ELEMENTS: tuple[Element, ...] = (
    Element("bool", BOOL, 1, "i1", numpy="bool", struct="?", dlpack=(6, 8, 1), aliases=("bool_",)),
    _int("i8", 8, signed=True),
    _int("i16", 16, signed=True),
    _int("i32", 32, signed=True),
    _int("i64", 64, signed=True),
    _int("u8", 8, signed=False),
    _int("u16", 16, signed=False),
    _int("u32", 32, signed=False),
    _int("u64", 64, signed=False),
    Element(
        "f16",
        FLOAT,
        16,
        "f16",
        numpy="float16",
        struct="e",
        dlpack=(2, 16, 1),
        float_max=65504.0,
        mantissa=10,
        aliases=("float16",),
    ),
    Element(
        "bf16",
        FLOAT,
        16,
        "bf16",
        ml_dtypes="bfloat16",
        raw="uint16",
        dlpack=(4, 16, 1),
        float_max=3.3895313892515355e38,
        mantissa=7,
        aliases=("bfloat16",),
    ),
    Element(
        "f32",
        FLOAT,
        32,
        "f32",
        numpy="float32",
        struct="f",
        dlpack=(2, 32, 1),
        float_max=3.4028234663852886e38,
        mantissa=23,
        aliases=("float32",),
    ),
    # tf32 is an mma operand format: Tile IR's arithmetic takes f16/bf16/f32/f64 only. In
    # memory it is an f32 bit pattern (cuTile Rust's `tf32(u32)`): tensors of it are raw
    # `uint32` on the host (floats rounded to 10 fraction bits), scalars pack as f32.
    Element(
        "tf32",
        FLOAT,
        32,
        "tf32",
        raw="uint32",
        struct="f",
        float_max=3.4011621342146535e38,  # (2 - 2^-10) * 2^127: f32's range, 10 fraction bits
        mantissa=10,
        computes=False,
    ),
    Element(
        "f64",
        FLOAT,
        64,
        "f64",
        numpy="float64",
        struct="d",
        dlpack=(2, 64, 1),
        float_max=1.7976931348623157e308,
        mantissa=52,
        aliases=("float64",),
    ),
)
ELEMENTS += (
    *(
        Element(
            name,
            FLOAT,
            8,
            ir,
            ml_dtypes=f"float8_{name[2:]}",
            raw="uint8",
            float_format=fmt,
            dlpack=(code, 8, 1),
            float_max=fmt.max,
            computes=False,
            aliases=(f"float8_{name[2:]}",),
        )
        for name, ir, fmt, code in (
            ("f8e4m3fn", "f8E4M3FN", F8E4M3FN, 10),
            ("f8e5m2", "f8E5M2", F8E5M2, 12),
            ("f8e8m0fnu", "f8E8M0FNU", F8E8M0FNU, 14),
        )
    ),
    Element(
        "f4e2m1fnx2",
        PACKED,
        8,
        "i8",
        raw="uint8",
        struct="B",
        dlpack=(17, 4, 2),
        computes=False,
        packs=("f4e2m1fn", 2),
        aliases=("float4_e2m1fn_x2",),
    ),
    Element(
        "f4e2m1fn",
        FLOAT,
        4,
        "f4E2M1FN",
        float_format=F4E2M1FN,
        float_max=F4E2M1FN.max,
        computes=False,
        host=False,
    ),
    Element("i4", INT, 4, "i4", computes=False, host=False),
)
ELEMENT_BY_NAME: dict[str, Element] = {e.name: e for e in ELEMENTS}
HOST_ELEMENTS: tuple[Element, ...] = tuple(e for e in ELEMENTS if e.host)


_F8 = ("f16", "f32")  # the accumulators of fp8 and fp4 mma operands


@dataclass(frozen=True)
class IRElement:
    """One Tile IR element type (MLIR spelling, as `tileirdisasm` prints it)."""

    name: str
    bits: int
    is_float: bool
    tag: int  # bytecode type tag
    since: tuple[int, int] = (13, 1)  # first bytecode version that has it
    float_format: FloatFormat | None = None  # constants: a float `struct` cannot pack
    min_sm: int = 0  # the oldest GPU (sm_XY as XY) tileiras compiles it for
    # accumulator elements of `mmaf` / `mmai` on operands of this type (Tile IR 13.3
    # `MmaFOp::verify`, `MmaIOp::verify`); () where it is no mma operand
    mma_accumulators: tuple[str, ...] = ()

    @property
    def storage_bytes(self) -> int:
        """Bytes one value takes in memory and in a constant (i1 takes a byte)."""
        return max(1, self.bits // 8)


IR_ELEMENTS: tuple[IRElement, ...] = (
    IRElement("i1", 1, False, 0),
    IRElement("i8", 8, False, 1, mma_accumulators=("i32",)),
    IRElement("i16", 16, False, 2),
    IRElement("i32", 32, False, 3),
    IRElement("i64", 64, False, 4),
    IRElement("f16", 16, True, 5, mma_accumulators=("f16", "f32")),
    IRElement("bf16", 16, True, 6, mma_accumulators=("f32",)),
    IRElement("f32", 32, True, 7, mma_accumulators=("f32",)),
    IRElement("tf32", 32, True, 8, mma_accumulators=("f32",)),
    IRElement("f64", 64, True, 9, mma_accumulators=("f64",)),
    # tileiras 13.5: fp8 from Ada/Hopper (sm_89) on, the block-scale and fp4 types from
    # Blackwell (sm_100) on ("Incompatibility with architecture 'sm_90': unsupported type").
    IRElement("f8E4M3FN", 8, True, 10, float_format=F8E4M3FN, min_sm=89, mma_accumulators=_F8),
    IRElement("f8E5M2", 8, True, 11, float_format=F8E5M2, min_sm=89, mma_accumulators=_F8),
    IRElement("f8E8M0FNU", 8, True, 18, (13, 2), F8E8M0FNU, min_sm=100),
    IRElement("f4E2M1FN", 4, True, 19, (13, 3), F4E2M1FN, min_sm=100, mma_accumulators=_F8),
    IRElement("i4", 4, False, 22, (13, 3)),
)
IR_ELEMENT_BY_NAME: dict[str, IRElement] = {e.name: e for e in IR_ELEMENTS}

# Block-scaled mma (Tile IR 13.3 `MmaFScaledOp::verify`): scale element -> operand element ->
# how many consecutive K elements one scale covers (IR spellings).
MMA_SCALE_BLOCKS: dict[str, dict[str, tuple[int, ...]]] = {
    "f8E8M0FNU": {"f8E4M3FN": (32,), "f8E5M2": (32,), "f4E2M1FN": (16, 32)},
    "f8E4M3FN": {"f4E2M1FN": (16,)},
}
