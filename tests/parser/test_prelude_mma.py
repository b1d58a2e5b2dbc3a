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


FP8_SIG = (
    "z: &mut Tensor<f32, { [16, 16] }>, x: &Tensor<f8e4m3fn, { [-1, -1] }>, "
    "y: &Tensor<f8e5m2, { [-1, -1] }>, s: &Tensor<f8e8m0fnu, { [-1, -1] }>, "
    "p: &Tensor<f4e2m1fnx2, { [-1, -1] }>, e: &Tensor<f8e4m3fn, { [-1, -1] }>"
)
FP8_OPERANDS = """
let a: Tile<f8e4m3fn, { [16, 64] }> = x.partition(const_shape![16, 64]).load([0, 0]);
let b: Tile<f8e4m3fn, { [64, 16] }> = x.partition(const_shape![64, 16]).load([0, 0]);
let b5: Tile<f8e5m2, { [64, 16] }> = y.partition(const_shape![64, 16]).load([0, 0]);
let acc: Tile<f32, { [16, 16] }> = constant(0.0f32, const_shape![16, 16]);
let sa: Tile<f8e8m0fnu, { [16, 2] }> = s.partition(const_shape![16, 2]).load([0, 0]);
let sb: Tile<f8e8m0fnu, { [2, 16] }> = s.partition(const_shape![2, 16]).load([0, 0]);
"""


def _fp8(body: str) -> dict:
    return lets(FP8_OPERANDS + body, sig=FP8_SIG, prelude="", arch="sm_100")


def _fp8_error(body: str):
    return the_error(FP8_OPERANDS + body, sig=FP8_SIG, prelude="", arch="sm_100")


def test_fp8_mma_accumulates_in_f32_or_f16() -> None:
    types = _fp8(
        """
        let c = mma(a, b, acc);
        let h: Tile<f16, { [16, 16] }> = constant(0.0f16, const_shape![16, 16]);
        let d = mmaf(a, b, h);
        """
    )
    assert types["c"] == TileTy(Elem.F32, (16, 16))
    assert types["d"] == TileTy(Elem.F16, (16, 16))


def test_fp8_operands_must_share_one_format() -> None:
    error = _fp8_error("let c = mma(a, b5, acc);")
    assert error.code is codes.MISMATCHED_TYPES
    assert "`f8e4m3fn` and `f8e5m2`" in error.message


def test_fp4_has_no_plain_mma() -> None:
    error = _fp8_error(
        """
        let q: Tile<f4e2m1fnx2, { [16, 32] }> = p.partition(const_shape![16, 32]).load([0, 0]);
        let f = q.unpack(const_shape![16, 64]);
        let g = q.unpack(const_shape![64, 16]);
        let c = mma(f, g, acc);
        """
    )
    assert error.code is codes.UNSUPPORTED_TYPE
    assert "does not support `f4e2m1fn` operands" in error.message


def test_mmaf_scaled_types() -> None:
    types = _fp8(
        """
        let c = mmaf_scaled(a, b, acc, sa, sb);
        let q: Tile<f4e2m1fnx2, { [16, 32] }> = p.partition(const_shape![16, 32]).load([0, 0]);
        let f = q.unpack(const_shape![16, 64]);
        let g = q.unpack(const_shape![16, 64]).transpose();
        let se: Tile<f8e4m3fn, { [16, 4] }> = e.partition(const_shape![16, 4]).load([0, 0]);
        let d = mmaf_scaled(f, g, acc, se, se.transpose());
        let m = mmaf_scaled(f, g, acc, sa, sb);
        """
    )
    assert types["c"] == types["d"] == types["m"] == TileTy(Elem.F32, (16, 16))


@pytest.mark.parametrize(
    ("call", "code", "message", "primary"),
    [
        ("(a, b, acc, sa, sa)", codes.MISMATCHED_TYPES, "scales [16, 2] and [2, 16], found", "sa"),
        ("(a, b, acc, sa, f)", codes.MISMATCHED_TYPES, "one element type for both scales", "f"),
        ("(a, b, h, sa, sb)", codes.UNSUPPORTED_TYPE, "accumulates in `f32`, found", "h"),
        ("(a, b, acc, h, h)", codes.UNSUPPORTED_TYPE, "scale `f8e4m3fn` operands by `f16`", "h"),
    ],
)
def test_mmaf_scaled_rules(call: str, code: object, message: str, primary: str) -> None:
    error = _fp8_error(
        f"""
        let h: Tile<f16, {{ [16, 16] }}> = convert_tile(acc);
        let f: Tile<f32, {{ [2, 16] }}> = convert_tile(sb);
        let c = mmaf_scaled{call};
        """
    )
    assert error.code is code
    assert message in error.message
    assert primary_text(error) == primary


def test_fp8_scales_cover_32_k_elements() -> None:
    error = _fp8_error(
        """
        let s4: Tile<f8e8m0fnu, { [16, 4] }> = s.partition(const_shape![16, 4]).load([0, 0]);
        let t4: Tile<f8e8m0fnu, { [4, 16] }> = s.partition(const_shape![4, 16]).load([0, 0]);
        let c = mmaf_scaled(a, b, acc, s4, t4);
        """
    )
    assert error.code is codes.MISMATCHED_TYPES
    assert "scales `f8e4m3fn` in blocks of 32 K elements, but K = 64 with 4 scale groups" in (
        error.message
    )
