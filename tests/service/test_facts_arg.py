"""`--facts ENTRY:PARAM[:dims=..][:strides=..][:align=..][:last_stride=..]` parsing and per-entry
selection."""

from __future__ import annotations

import pytest

from parser.specialization import TensorFacts
from service.cli.facts_arg import FactsError, facts_for_entry, parse_facts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gemm:x:dims=16,8:strides=8,1", ("gemm", TensorFacts("x", (16, 8), (8, 1)))),
        ("gemm:y:strides=16,1", ("gemm", TensorFacts("y", (), (16, 1)))),
        ("kernel::gemm:x:dims=16", ("kernel::gemm", TensorFacts("x", (16,)))),
        ("add:x:align=4", ("add", TensorFacts("x", base_align=4))),
        ("add:x:last_stride=any", ("add", TensorFacts("x", unit_last_stride=False))),
        ("add:x:last_stride=1:align=16", ("add", TensorFacts("x"))),
        (
            "gemm:x:dims=16,8:strides=8,2:align=2:last_stride=any",
            ("gemm", TensorFacts("x", (16, 8), (8, 2), base_align=2, unit_last_stride=False)),
        ),
    ],
)
def test_parse(text: str, expected: tuple[str, TensorFacts]) -> None:
    assert parse_facts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "gemm",
        "gemm:x",
        ":x:dims=8",
        "gemm:x:dims=3",
        "gemm:x:sizes=8",
        "gemm:x:dims=8:dims=8",
        "g:x:dims=a",
        "add:x:align=3",
        "add:x:align=32",
        "add:x:align=4,4",
        "add:x:align=",
        "add:x:align=4:align=8",
        "add:x:last_stride=2",
        "add:x:last_stride=",
        # digits `str.isdigit()` or `int()` take but that are not ASCII: int("\u00b2") raised
        "add:x:align=\u00b2",
        "add:x:align=\u0664",
        "add:x:dims=\u0661\u0666",
        "add:x:strides=1_6",
        "add:x:align=" + "1" * 5000,
    ],
)
def test_parse_rejects(text: str) -> None:
    with pytest.raises(FactsError):
        parse_facts(text)


def test_facts_for_an_entry_are_its_own_sorted_by_parameter() -> None:
    given = [
        parse_facts("gemm:y:dims=8"),
        parse_facts("add:x:dims=8"),
        parse_facts("kernel::gemm:x:strides=8,1"),
    ]
    assert [f.param for f in facts_for_entry("kernel::gemm", given)] == ["x", "y"]
    assert [f.param for f in facts_for_entry("gemm", given)] == ["x", "y"]
    assert facts_for_entry("saxpy", given) == ()
