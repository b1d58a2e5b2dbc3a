"""Typing of the element-wise arithmetic and math family (`parser.prelude.math`)."""

from __future__ import annotations

import pytest

from parser import codes
from parser.types import Elem, ScalarTy, TileTy
from tests.parser.prelude_support import lets, primary_text, the_error

T = TileTy(Elem.F32, (4, 64))
F16 = "let h: Tile<f16, { [4, 64] }> = convert_tile(t);"
INTS = "let i: Tile<i32, { [4, 64] }> = convert_tile(t);"


def test_math_functions_keep_the_tile_type() -> None:
    types = lets(
        """
        let a = exp(t);
        let b = exp2(a, ftz::Enabled);
        let c = log(b) + log2(b) + tanh(b) + sin(b) + cos(b) + tan(b);
        let d = sinh(c) + cosh(c) + negf(c) + absf(c) + ceil(c) + floor(c);
        let e = sqrt(d, rounding::NearestEven, ftz::Disabled);
        let f = rsqrt(e, ftz::Enabled);
        let g = pow(f, e) + atan2(f, e) + remf(f, e);
        let h = true_div(g, t);
        """
    )
    assert {types[name] for name in "abcdefgh"} == {T}


def test_explicit_mode_arithmetic() -> None:
    types = lets(
        f"""
        {INTS}
        let a = addf(t, t, rounding::Zero, ftz::Enabled);
        let b = subf(a, t, rounding::PositiveInf, ftz::Disabled);
        let c = mulf(b, t, rounding::NegativeInf, ftz::Disabled);
        let d = divf(c, t, rounding::Approx, ftz::Enabled);
        let e = fma(a, b, d, rounding::NearestEven, ftz::Disabled);
        let m = maxf(e, t, nan::Enabled, ftz::Disabled);
        let j = addi(i, i, overflow::NoSignedWrap);
        let k = divi(subi(j, i, overflow::None), muli(i, i, overflow::NoWrap), rounding::Zero);
        let l = maxi(mini(k, i), remi(k, i)) + negi(absi(k), overflow::None) + mulhii(k, k);
        """
    )
    assert types["e"] == types["m"] == T
    assert types["l"] == TileTy(Elem.I32, (4, 64))


def test_scalar_helpers_and_tile_min_max() -> None:
    types = lets(
        """
        let a: i32 = ceil_div(n, 16);
        let b = max(n, 0);
        let c = min(1.5, s);
        let d = max_tile(t, min_tile(t, t));
        """
    )
    assert types["a"] == types["b"] == ScalarTy(Elem.I32)
    assert types["c"] == ScalarTy(Elem.F32)  # the literal takes the other operand's type
    assert types["d"] == T


def test_operands_must_have_one_type_no_broadcasting() -> None:
    error = the_error("let a = true_div(t, t.reshape(const_shape![64, 4]));")
    assert error.code is codes.MISMATCHED_TYPES
    assert "[4, 64] and [64, 4]" in error.message
    assert primary_text(error) == "t.reshape(const_shape![64, 4])"
    assert [label.span.text for label in error.labels][1] == "t"  # the other operand


def test_scalar_and_tile_do_not_mix() -> None:
    error = the_error("let a = max_tile(t, 1.0f32);")
    assert error.code is codes.MISMATCHED_TYPES
    assert "`Tile<f32, {[4, 64]}>` and `f32`" in error.message


def test_scalar_min_max_point_at_their_tile_forms() -> None:
    error = the_error("let a = max(t, t);")
    assert error.code is codes.MISMATCHED_TYPES
    assert error.help == ("for tiles use `max_tile`",)


def test_math_needs_a_tile_not_a_scalar() -> None:
    error = the_error("let a = exp(s);")
    assert error.code is codes.MISMATCHED_TYPES
    assert "expects a `Tile<..>`, found `f32`" in error.message
    assert error.help == ("make it a rank-0 tile: `scalar_to_tile(s)`",)


def test_float_math_rejects_integer_tiles() -> None:
    error = the_error(f"{INTS}\nlet a = exp(i);")
    assert error.code is codes.UNSUPPORTED_TYPE
    assert "`exp` needs float elements" in error.message


def test_ceil_div_is_integer_only() -> None:
    error = the_error("let a = ceil_div(s, s);")
    assert error.code is codes.UNSUPPORTED_TYPE
    assert "integer" in error.message


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (
            "let a = exp2(t, rounding::Zero);",
            "expects a `ftz::Mode` marker, found `rounding::Zero`",
        ),
        ("let a = sqrt(t, ftz::Enabled, ftz::Enabled);", "expects a `rounding::Mode` marker"),
        ("let a = maxf(t, t, ftz::Enabled, nan::Enabled);", "expects a `nan::Mode` marker"),
        (f"{INTS}\nlet a = addi(i, i, rounding::Zero);", "expects a `overflow::Mode` marker"),
    ],
)
def test_wrong_marker_kind(body: str, fragment: str) -> None:
    error = the_error(body)
    assert error.code is codes.MISMATCHED_TYPES
    assert fragment in error.message


def test_exp2_requires_its_ftz_marker() -> None:
    error = the_error("let a = exp2(t);")
    assert error.code is codes.WRONG_ARG_COUNT
    assert any("ftz: F" in note for note in error.notes)


def test_flush_to_zero_is_f32_only() -> None:
    error = the_error(f"{F16}\nlet a = exp2(h, ftz::Enabled);")
    assert error.code is codes.UNSUPPORTED_TYPE
    assert primary_text(error) == "ftz::Enabled"
    assert "only supported for `f32`" in error.message


@pytest.mark.parametrize(
    "body",
    [
        "let a = addf(t, t, rounding::Approx, ftz::Disabled);",  # IEEE modes only
        "let a = sqrt(t, rounding::Full, ftz::Disabled);",
        f"{F16}\nlet a = divf(h, h, rounding::Approx, ftz::Disabled);",  # f32 only
        f"{INTS}\nlet u: Tile<u32, {{ [4, 64] }}> = bitcast(i);\n"
        "let a = divi(u, u, rounding::NegativeInf);",  # floor needs a signed type
    ],
)
def test_rounding_modes_tile_ir_rejects(body: str) -> None:
    error = the_error(body)
    assert error.code is codes.UNSUPPORTED_TYPE
    assert "does not support `rounding::" in error.message
    assert error.help and error.help[0].startswith("use one of")
