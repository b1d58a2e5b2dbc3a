"""Attribute values of tile IR ops: enums and small frozen records, never bare ints."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from lowering.ir.types import ElementType


class RoundingMode(enum.Enum):
    NEAREST_EVEN = 0
    ZERO = 1
    NEGATIVE_INF = 2
    POSITIVE_INF = 3
    APPROX = 4
    FULL = 5
    NEAREST_INT_TO_ZERO = 6


class IntegerOverflow(enum.Enum):
    NONE = 0
    NSW = 1
    NUW = 2
    NW = 3


class Signedness(enum.Enum):
    UNSIGNED = 0
    SIGNED = 1


class ComparisonPredicate(enum.Enum):
    EQ = 0
    NE = 1
    LT = 2
    LE = 3
    GT = 4
    GE = 5


class ComparisonOrdering(enum.Enum):
    UNORDERED = 0
    ORDERED = 1


class MemoryOrdering(enum.Enum):
    WEAK = 0
    RELAXED = 1
    ACQUIRE = 2
    RELEASE = 3
    ACQ_REL = 4


class MemoryScope(enum.Enum):
    TILE_BLOCK = 0
    DEVICE = 1
    SYSTEM = 2


class AtomicMode(enum.Enum):
    """The read-modify-write of an atomic op (Tile IR `AtomicRMWMode`)."""

    AND = 0
    OR = 1
    XOR = 2
    ADD = 3
    ADDF = 4
    MAX = 5
    MIN = 6
    UMAX = 7
    UMIN = 8
    XCHG = 9


@dataclass(frozen=True)
class DivBy:
    """`assume div_by<divisor>`: the value (or address) is a multiple of `divisor`."""

    divisor: int

    def __str__(self) -> str:
        return f"div_by<{self.divisor}>"


@dataclass(frozen=True)
class Bounded:
    """`assume bounded<lower, upper>`; `None` leaves a side open."""

    lower: int | None = None
    upper: int | None = None

    def __str__(self) -> str:
        lo = "?" if self.lower is None else str(self.lower)
        hi = "?" if self.upper is None else str(self.upper)
        return f"bounded<{lo}, {hi}>"


@dataclass(frozen=True)
class SameElements:
    """`assume same_elements<[g0, g1, ..]>`: within each block of g0 x g1 x .. elements
    (one group size per tile dimension) every element has the same value."""

    groups: tuple[int, ...]

    def __str__(self) -> str:
        return f"same_elements<[{', '.join(map(str, self.groups))}]>"


AssumePredicate = DivBy | Bounded | SameElements


@dataclass(frozen=True)
class EntryHints:
    """Per-architecture entry hints; `arch` is "default" or "sm_90" etc."""

    arch: str
    num_cta_in_cga: int | None = None
    occupancy: int | None = None
    num_worker_warps_per_cta: int | None = None


HINTS_ARCH = "default"  # hints for every target (bytecode 13.3+)


@dataclass(frozen=True)
class LoadStoreHints:
    """Per-architecture hints of one view load/store; `arch` is "default" (13.3+) or "sm_90" etc.

    `latency` (1..10) is the expected latency class of the access; `allow_tma=False` keeps
    the assembler from using TMA. `None` leaves a hint out.
    """

    arch: str
    latency: int | None = None
    allow_tma: bool | None = None

    def __str__(self) -> str:
        items = [
            f"{name} = {str(value).lower()}"
            for name, value in (("allow_tma", self.allow_tma), ("latency", self.latency))
            if value is not None
        ]
        return f"{self.arch} = {{{', '.join(items)}}}"


@dataclass(frozen=True)
class IntegerAttr:
    """A typed integer constant, e.g. a reduce/scan identity; `type` is an integer type."""

    value: int
    type: ElementType

    def __str__(self) -> str:
        return f"{self.value} : {self.type}"


@dataclass(frozen=True)
class FloatAttr:
    """A typed float constant (inf and nan allowed), e.g. a reduce/scan identity."""

    value: float
    type: ElementType

    def __str__(self) -> str:
        return f"{self.value!r} : {self.type}"


TypedAttr = IntegerAttr | FloatAttr
