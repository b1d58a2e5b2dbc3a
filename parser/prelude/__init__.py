"""The DSL surface (cuTile's `cutile::core` prelude), declared once as data.

Each `Intrinsic` names its spellings (free function and/or method), the receiver kind its
methods apply to, the Rust signature (shown in messages), and a typing rule that checks
the arguments through the `CallTyper` it is given and returns the result type. Families
live in sibling modules; lowering has a table keyed by the same ids (`lowering.intrinsics`).
"""

from __future__ import annotations

from parser.prelude.assume import ASSUME_INTRINSICS
from parser.prelude.atomics import ATOMIC_INTRINSICS
from parser.prelude.compare import COMPARE_INTRINSICS
from parser.prelude.convert import CONVERT_INTRINSICS
from parser.prelude.dims import DIM_INTRINSICS
from parser.prelude.math import MATH_INTRINSICS
from parser.prelude.mma import MMA_INTRINSICS
from parser.prelude.packing import PACKING_INTRINSICS
from parser.prelude.pointers import POINTER_INTRINSICS
from parser.prelude.raw_views import RAW_VIEW_INTRINSICS
from parser.prelude.reduce import REDUCE_INTRINSICS
from parser.prelude.shape import SHAPE_INTRINSICS
from parser.prelude.spec import CallTyper, Intrinsic, Receiver, receiver_kind
from parser.prelude.tensors import TENSOR_INTRINSICS
from parser.prelude.tokens import TOKEN_INTRINSICS
from parser.prelude.unsafe_views import UNSAFE_VIEW_INTRINSICS
from parser.prelude.views import VIEW_INTRINSICS

PRELUDE: tuple[Intrinsic, ...] = (
    *TENSOR_INTRINSICS,
    *UNSAFE_VIEW_INTRINSICS,
    *VIEW_INTRINSICS,
    *MATH_INTRINSICS,
    *COMPARE_INTRINSICS,
    *SHAPE_INTRINSICS,
    *REDUCE_INTRINSICS,
    *MMA_INTRINSICS,
    *CONVERT_INTRINSICS,
    *PACKING_INTRINSICS,
    *POINTER_INTRINSICS,
    *ASSUME_INTRINSICS,
    *DIM_INTRINSICS,
    *TOKEN_INTRINSICS,
    *ATOMIC_INTRINSICS,
    *RAW_VIEW_INTRINSICS,
)

FUNCTIONS: dict[str, Intrinsic] = {}
METHODS: dict[tuple[Receiver, str], Intrinsic] = {}
for _intrinsic in PRELUDE:
    for _name in _intrinsic.functions:
        FUNCTIONS.setdefault(_name, _intrinsic)
    for _name in _intrinsic.methods:
        assert _intrinsic.receiver is not None
        METHODS[(_intrinsic.receiver, _name)] = _intrinsic

# A receiver kind's methods, then those it inherits (a `PartitionMut` is also a partition).
_INHERITS = {Receiver.PARTITION_MUT: (Receiver.PARTITION,)}


def receiver_kinds(kind: Receiver) -> tuple[Receiver, ...]:
    return (kind, *_INHERITS.get(kind, ()))


def find_method(kind: Receiver, name: str) -> Intrinsic | None:
    """The intrinsic `name` names on a receiver of `kind` (its own methods first)."""
    for candidate in receiver_kinds(kind):
        if (candidate, name) in METHODS:
            return METHODS[(candidate, name)]
    return None


__all__ = [
    "FUNCTIONS",
    "METHODS",
    "PRELUDE",
    "CallTyper",
    "Intrinsic",
    "Receiver",
    "find_method",
    "receiver_kind",
    "receiver_kinds",
]
