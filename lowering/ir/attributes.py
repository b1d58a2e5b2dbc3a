"""Attribute values of tile IR ops: enums and small frozen records, never bare ints."""

from __future__ import annotations

import enum
from dataclasses import dataclass


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


AssumePredicate = DivBy | Bounded


@dataclass(frozen=True)
class EntryHints:
    """Per-architecture entry hints; `arch` is "default" or "sm_90" etc."""

    arch: str
    num_cta_in_cga: int | None = None
    occupancy: int | None = None
    num_worker_warps_per_cta: int | None = None
