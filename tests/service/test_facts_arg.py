"""`--facts ENTRY:PARAM[:dims=..][:strides=..]` parsing and per-entry selection."""

from __future__ import annotations

import pytest

from parser.specialization import TensorFacts
from service.facts_arg import FactsError, facts_for_entry, parse_facts


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("gemm:x:dims=16,8:strides=8,1", ("gemm", TensorFacts("x", (16, 8), (8, 1)))),
        ("gemm:y:strides=16,1", ("gemm", TensorFacts("y", (), (16, 1)))),
        ("kernel::gemm:x:dims=16", ("kernel::gemm", TensorFacts("x", (16,)))),
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
