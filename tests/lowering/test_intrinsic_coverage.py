"""Every prelude intrinsic the checker can accept has a lowering, and every lowering a prelude
entry: a missing one would otherwise surface only when a kernel calls it (CT0999)."""

from __future__ import annotations

from lowering.intrinsics import INTRINSIC_LOWERINGS
from parser.prelude import PRELUDE

# intrinsics whose calls the checker accepts only as a construct that lowers them itself
LOWERED_AS_CONSTRUCTS = {
    "iter_indices": "the iterator of a persistent `for` loop (lowering.lower_persistent)",
}


def test_every_accepted_intrinsic_has_a_lowering() -> None:
    implemented = {i.id for i in PRELUDE if i.rule is not None}
    missing = sorted(implemented - set(INTRINSIC_LOWERINGS) - set(LOWERED_AS_CONSTRUCTS))
    assert not missing, f"prelude intrinsics without a lowering: {missing}"


def test_every_lowering_has_a_prelude_entry() -> None:
    declared = {i.id for i in PRELUDE}
    stray = sorted(set(INTRINSIC_LOWERINGS) - declared)
    assert not stray, f"lowerings of no prelude intrinsic: {stray}"
    assert set(LOWERED_AS_CONSTRUCTS) <= declared - set(INTRINSIC_LOWERINGS)
