"""Typing of comparisons, `select` and the bitwise tile ops (`parser.prelude.compare`)."""

from __future__ import annotations

import pytest

from parser import codes
from parser.types import Elem, TileTy
from tests.parser.prelude_support import lets, primary_text, the_error

MASK = TileTy(Elem.BOOL, (4, 64))
INTS = "let i: Tile<i32, { [4, 64] }> = convert_tile(t);"


@pytest.mark.parametrize("fn", ["eq_tile", "ne_tile", "lt_tile", "le_tile", "gt_tile", "ge_tile"])
def test_tile_comparisons_give_bool_tiles(fn: str) -> None:
    assert lets(f"let m = {fn}(t, t);")["m"] == MASK


def test_explicit_predicates_select_and_masks() -> None:
    types = lets(
        f"""
        {INTS}
        let a = cmpi(i, i, predicate::LessThanOrEqual);
        let b = cmpf(t, t, predicate::NotEqual, cmp_ordering::Unordered);
        let m = ori(andi(a, b), xori(a, b));
        let c = select(m, t, t);
        let d = shri(shli(i, i, overflow::NoUnsignedWrap), i);
        """
    )
    assert types["a"] == types["b"] == types["m"] == MASK
    assert types["c"] == TileTy(Elem.F32, (4, 64))
    assert types["d"] == TileTy(Elem.I32, (4, 64))


def test_comparison_operands_must_agree() -> None:
    error = the_error("let m = lt_tile(t, t.transpose());")
    assert error.code is codes.MISMATCHED_TYPES
    assert "[4, 64] and [64, 4]" in error.message


def test_select_condition_must_be_a_bool_tile() -> None:
    error = the_error("let a = select(t, t, t);")
    assert error.code is codes.MISMATCHED_TYPES
    assert primary_text(error) == "t"
    assert "must be `Tile<bool, ..>`" in error.message


def test_select_arms_must_agree() -> None:
    error = the_error(f"{INTS}\nlet a = select(lt_tile(t, t), t, i);")
    assert error.code is codes.MISMATCHED_TYPES
    assert primary_text(error) == "i"


def test_select_condition_shape_must_match() -> None:
    error = the_error(
        """
        let small: Tile<f32, { [4] }> = reduce_sum(t, 1);
        let a = select(lt_tile(t, t), small, small);
        """
    )
    assert error.code is codes.MISMATCHED_TYPES
    assert "[4, 64] and [4]" in error.message


def test_cmpi_is_for_integers_and_cmpf_for_floats() -> None:
    assert "integer" in the_error("let a = cmpi(t, t, predicate::Equal);").message
    error = the_error(f"{INTS}\nlet a = cmpf(i, i, predicate::Equal, cmp_ordering::Ordered);")
    assert error.code is codes.UNSUPPORTED_TYPE and "float" in error.message


def test_predicate_marker_kind() -> None:
    error = the_error("let a = cmpf(t, t, predicate::Equal, rounding::Zero);")
    assert error.code is codes.MISMATCHED_TYPES
    assert "`cmp_ordering::Mode`" in error.message


def test_bitwise_ops_reject_floats() -> None:
    error = the_error("let a = andi(t, t);")
    assert error.code is codes.UNSUPPORTED_TYPE
    assert "integer or bool" in error.message
