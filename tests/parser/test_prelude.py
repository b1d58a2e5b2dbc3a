"""The prelude as a whole (parser/prelude/__init__.py): every DSL name is declared once."""

from __future__ import annotations

from collections import Counter

from lowering.intrinsics import INTRINSIC_LOWERINGS
from parser.prelude import FUNCTIONS, PRELUDE, find_method


def _repeated(names: list[object]) -> list[object]:
    return [name for name, count in Counter(names).items() if count > 1]


def test_no_two_families_declare_the_same_name() -> None:
    """Two families declaring one name would shadow each other silently (the first
    wins in FUNCTIONS, the last in METHODS): a merge of two branches that each added it."""
    assert _repeated([i.id for i in PRELUDE]) == []
    assert _repeated([n for i in PRELUDE for n in i.functions]) == []
    assert _repeated([(i.receiver, n) for i in PRELUDE for n in i.methods]) == []


def test_each_name_finds_the_intrinsic_that_declares_it() -> None:
    for intrinsic in PRELUDE:
        for name in intrinsic.functions:
            assert FUNCTIONS[name] is intrinsic
        for name in intrinsic.methods:
            assert intrinsic.receiver is not None
            assert find_method(intrinsic.receiver, name) is intrinsic


def test_every_intrinsic_but_the_persistent_loop_has_a_lowering() -> None:
    """`iter_indices` is lowered as the loop it drives (lowering/lower_persistent.py)."""
    missing = {i.id for i in PRELUDE} - set(INTRINSIC_LOWERINGS)
    assert missing == {"iter_indices"}
