"""The `preconditions = (...)` entry option, parsed into SameExtent / ExtentDivisible."""

from __future__ import annotations

from parser import codes
from parser.preconditions import ExtentDivisible, SameExtent, StrideDivisible
from tests.parser.test_entry_signature import signature

SIG = (
    "z: &mut Tensor<f32, { [128] }>, x: &Tensor<f32, { [-1, -1] }>, y: &Tensor<f32, { [-1] }>, "
    "s: &Tensor<f32, { [128] }>"
)


def _options(conditions: str) -> tuple:
    return signature(SIG, attr=f"#[cutile::entry(preconditions = ({conditions}))]")


def test_equal_extents_and_divisibility_are_parsed() -> None:
    result, diagnostics, _ = _options("dim(x, 1) == dim(y, 0), dim(x, 0) % 16 == 0")
    assert diagnostics == []
    assert result is not None
    equal, divisible = result.options.preconditions
    assert equal == SameExtent((1, 1), (2, 0), "dim(x, 1) == dim(y, 0)")
    assert divisible == ExtentDivisible(1, 0, 16, "dim(x, 0) % 16 == 0")


def test_stride_divisibility_is_parsed() -> None:
    result, diagnostics, _ = _options("stride(x, 0) % 8 == 0")
    assert diagnostics == [] and result is not None
    assert result.options.preconditions == (StrideDivisible(1, 0, 8, "stride(x, 0) % 8 == 0"),)


def test_a_single_precondition_needs_no_tuple() -> None:
    result, diagnostics, _ = signature(
        SIG, attr="#[cutile::entry(preconditions = dim(z, 0) == dim(y, 0))]"
    )
    assert diagnostics == []
    assert result is not None
    assert result.options.preconditions == (SameExtent((0, 0), (2, 0), "dim(z, 0) == dim(y, 0)"),)


def test_without_the_option_there_are_none() -> None:
    result, diagnostics, _ = signature(SIG)
    assert diagnostics == [] and result is not None
    assert result.options.preconditions == ()


def test_bad_forms_are_reported_each_at_its_own_span() -> None:
    bad = [
        "dim(x, 2) == dim(y, 0)",
        "dim(q, 0) == dim(y, 0)",
        "dim(y, 0) % 0 == 0",
        "dim(y, 0) < dim(x, 0)",
        "dim(y, 0) % n == 0",
        "stride(y, 1) == 8",
        "dim(x, 0) % 3 == 0",  # not a power of two
        "stride(x, 1) % 8 == 0",  # the last stride is 1
        "dim(s, 0) % 256 == 0",  # its static extent is 128
    ]
    _, diagnostics, _ = _options(", ".join(bad))
    assert [d.code for d in diagnostics] == [codes.INVALID_ENTRY_OPTION] * len(bad)
    assert [d.primary_span.text for d in diagnostics] == bad


def test_divisibility_of_a_static_extent_or_an_output_tile_is_fine() -> None:
    result, diagnostics, _ = _options("dim(s, 0) % 16 == 0, dim(z, 0) % 256 == 0")
    assert diagnostics == [] and result is not None  # z's 128 is its tile, not its extent
    assert len(result.options.preconditions) == 2


def test_an_option_given_twice_is_an_error() -> None:
    attr = (
        "#[cutile::entry(preconditions = (dim(y, 0) % 8 == 0), "
        "preconditions = (stride(x, 0) % 8 == 0))]"
    )
    _, diagnostics, _ = signature(SIG, attr=attr)
    assert [d.message for d in diagnostics] == ["entry option `preconditions` is given twice"]
