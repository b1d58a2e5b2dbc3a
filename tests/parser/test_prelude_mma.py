"""Typing of matrix multiply-accumulate (`parser.prelude.mma`)."""

from __future__ import annotations

import pytest

from parser import codes
from parser.types import Elem, TileTy
from tests.parser.prelude_support import lets, primary_text, the_error

OPERANDS = """
let a: Tile<f16, { [64, 32] }> = constant(1.0f16, const_shape![64, 32]);
let b: Tile<f16, { [32, 16] }> = constant(1.0f16, const_shape![32, 16]);
let acc: Tile<f32, { [64, 16] }> = constant(0.0f32, const_shape![64, 16]);
"""


def test_mma_returns_the_accumulator_type() -> None:
    types = lets(
        OPERANDS
        + """
        let c = mma(a, b, acc);
        let d = mmaf(a, b, constant(0.0f16, const_shape![64, 16]));
        let p: Tile<i8, { [16, 32] }> = constant(1i8, const_shape![16, 32]);
        let q: Tile<i8, { [32, 16] }> = constant(1i8, const_shape![32, 16]);
        let r: Tile<i32, { [16, 16] }> = constant(0i32, const_shape![16, 16]);
        let e = mma(p, q, r);
        let f = mmai(p, q, r, signedness::Signed, signedness::Unsigned);
        """
    )
    assert types["c"] == TileTy(Elem.F32, (64, 16))
    assert types["d"] == TileTy(Elem.F16, (64, 16))
    assert types["e"] == types["f"] == TileTy(Elem.I32, (16, 16))


def test_batched_mma() -> None:
    types = lets(
        """
        let a: Tile<f32, { [2, 16, 8] }> = constant(1.0f32, const_shape![2, 16, 8]);
        let b: Tile<f32, { [2, 8, 32] }> = constant(1.0f32, const_shape![2, 8, 32]);
        let c: Tile<f32, { [2, 16, 32] }> = constant(0.0f32, const_shape![2, 16, 32]);
        let d = mma(a, b, c);
        """
    )
    assert types["d"] == TileTy(Elem.F32, (2, 16, 32))


def test_inner_dimensions_must_agree() -> None:
    error = the_error(OPERANDS + "let c = mma(a, a, acc);")
    assert error.code is codes.MISMATCHED_TYPES
    assert "lhs [64, 32] has K = 32 but rhs [64, 32] has K = 64" in error.message
    assert [label.message for label in error.labels] == ["K = 64", "K = 32"]


def test_accumulator_shape_must_be_m_by_n() -> None:
    error = the_error(OPERANDS + "let c = mma(a, b, t);")
    assert error.code is codes.MISMATCHED_TYPES
    assert primary_text(error) == "t"
    assert "needs an accumulator of shape [64, 16], found [4, 64]" in error.message


F64_ACC = "constant(0.0f64, const_shape![64, 16])"


@pytest.mark.parametrize(
    ("body", "code", "fragment"),
    [
        (f"let c = mma(a, b, {F64_ACC});", codes.UNSUPPORTED_TYPE, "a `f16` or `f32` accumulator"),
        ("let c = mma(a, convert_tile::<f32>(b), acc);", codes.MISMATCHED_TYPES, "one element"),
        ("let c = mma(t, t.transpose(), t);", codes.MISMATCHED_TYPES, "accumulator"),
        ("let c = mma(s, b, acc);", codes.MISMATCHED_TYPES, "expects a `Tile<..>`"),
        ("let c = mmaf(lt_tile(t, t), lt_tile(t, t), t);", codes.UNSUPPORTED_TYPE, "`bool`"),
        ("let c = mma(a.reshape(const_shape![2048]), b, acc);", codes.MISMATCHED_TYPES, "rank 2"),
    ],
)
def test_mma_errors(body: str, code: codes.DiagnosticCode, fragment: str) -> None:
    error = the_error(OPERANDS + body)
    assert error.code is code
    assert fragment in error.message
