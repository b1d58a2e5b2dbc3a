"""Typing of reductions and scans (`parser.prelude.reduce`)."""

from __future__ import annotations

import pytest

from parser import codes
from parser.types import Elem, TileTy
from tests.parser.prelude_support import lets, primary_text, the_error

T = TileTy(Elem.F32, (4, 64))


@pytest.mark.parametrize("kind", ["sum", "max", "min", "prod"])
def test_reductions_remove_the_dimension(kind: str) -> None:
    types = lets(f"let rows = reduce_{kind}(t, 1);\nlet cols = reduce_{kind}(t, 0i32);")
    assert types["rows"] == TileTy(Elem.F32, (4,))
    assert types["cols"] == TileTy(Elem.F32, (64,))


def test_an_annotation_that_only_regroups_the_result_is_kept() -> None:
    """Real kernels write `Tile<f32, {[1]}>` for a full reduction of a rank-1 tile and
    `Tile<f32, {[BM, 1]}>` for a row reduction; both keep the reduced element count."""
    types = lets(
        """
        let flat = t.reshape(const_shape![256]);
        let total: Tile<f32, { [1] }> = reduce_sum(flat, 0i32);
        let scalar_tile = reduce_max(flat, 0);
        let column: Tile<f32, { [4, 1] }> = reduce_max(t, 1);
        """
    )
    assert types["total"] == TileTy(Elem.F32, (1,))
    assert types["scalar_tile"] == TileTy(Elem.F32, ())
    assert types["column"] == TileTy(Elem.F32, (4, 1))


def test_a_const_generic_dimension_is_accepted() -> None:
    types = lets("let r = reduce_sum(t, D);", params="<const D: i32>", values={"D": "0"})
    assert types["r"] == TileTy(Elem.F32, (64,))


def test_an_annotation_with_another_element_count_is_a_mismatch() -> None:
    error = the_error("let a: Tile<f32, { [8] }> = reduce_sum(t, 1);")
    assert error.code is codes.MISMATCHED_TYPES
    assert "expected `Tile<f32, {[8]}>`, found `Tile<f32, {[4]}>`" in error.message


def test_the_dimension_must_be_a_compile_time_integer() -> None:
    error = the_error("let a = reduce_sum(t, n);")
    assert error.code is codes.GENERIC_ARGUMENT
    assert primary_text(error) == "n"


def test_the_dimension_must_exist() -> None:
    error = the_error("let a = reduce_max(t, 2);")
    assert error.code is codes.MISMATCHED_TYPES
    assert "dimension 2 is out of range" in error.message


def test_reductions_need_number_tiles() -> None:
    error = the_error("let a = reduce_sum(lt_tile(t, t), 1);")
    assert error.code is codes.UNSUPPORTED_TYPE


def test_closures_and_scans() -> None:
    types = lets(
        """
        let a: Tile<f32, { [4] }> = reduce(t, 1, f32::NEG_INFINITY, |acc, x| max(acc, x));
        let b = reduce(t, 0, 0.0f32, |acc, x| acc + x * x);
        let c = scan_sum(t, 1, reverse::Forward, 0.0f32);
        let d = scan(t, 0, reverse::Reverse, 1.0, |acc, x| acc * x);
        """
    )
    assert types["a"] == TileTy(Elem.F32, (4,))
    assert types["b"] == TileTy(Elem.F32, (64,))
    assert types["c"] == types["d"] == T


@pytest.mark.parametrize(
    ("body", "code", "fragment"),
    [
        ("let a = reduce(t, 1, s, |a, x| a + x);", codes.GENERIC_ARGUMENT, "compile-time"),
        ("let a = reduce(t, 1, 0i32, |a, x| a + x);", codes.MISMATCHED_TYPES, "must be `f32`"),
        ("let a = reduce(t, 1, 0.0f32, |a, x| a < x);", codes.MISMATCHED_TYPES, "return `f32`"),
        ("let a = reduce(t, 1, 0.0f32, |a| a);", codes.MISMATCHED_TYPES, "two parameters"),
        ("let a = scan_sum(t, 1, ftz::Enabled, 0.0f32);", codes.MISMATCHED_TYPES, "`reverse::"),
    ],
)
def test_reduce_and_scan_errors(body: str, code: codes.DiagnosticCode, fragment: str) -> None:
    error = the_error(body)
    assert error.code is code
    assert fragment in error.message
