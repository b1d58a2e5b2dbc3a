"""Typing of element-type conversions (`parser.prelude.convert`)."""

from __future__ import annotations

import pytest

from parser import codes
from parser.types import Elem, ScalarTy, TileTy
from tests.parser.prelude_support import compile_body, lets, the_error

SHAPE = (4, 64)


def test_convert_tile_takes_its_target_from_the_annotation_or_a_turbofish() -> None:
    types = lets(
        """
        let h: Tile<f16, { [4, 64] }> = convert_tile(t);
        let i = convert_tile::<i32>(h);
        let w: Tile<i64, { [4, 64] }> = convert_tile(i);
        let u: Tile<u32, { [4, 64] }> = convert_tile(i);
        let m: Tile<i32, { [4, 64] }> = convert_tile(lt_tile(t, t));
        let same: Tile<f32, { [4, 64] }> = convert_tile(t);
        let x: f32 = convert_scalar(n);
        let y = convert_scalar::<i64>(s);
        """
    )
    assert types["h"] == TileTy(Elem.F16, SHAPE)
    assert types["i"] == TileTy(Elem.I32, SHAPE)
    assert types["w"] == TileTy(Elem.I64, SHAPE)
    assert types["u"] == TileTy(Elem.U32, SHAPE)
    assert types["m"] == TileTy(Elem.I32, SHAPE)
    assert types["x"] == ScalarTy(Elem.F32)
    assert types["y"] == ScalarTy(Elem.I64)


def test_the_target_can_come_from_the_enclosing_call() -> None:
    """`store` expects the output's tile type, so the conversion needs no annotation."""
    result = compile_body(
        "z.store(convert_tile(load_tile_like(x, z)));",
        sig="z: &mut Tensor<f32, { [64] }>, x: &Tensor<f16, { [-1] }>",
        prelude="",
    )
    assert result.ok, [d.message for d in result.diagnostics]


def test_the_target_of_a_generic_element_type() -> None:
    result = compile_body(
        "let e: Tile<E, { [4, 64] }> = convert_tile(t);\nlet back = convert_tile::<f32>(e);",
        params="<E: ElementType>",
        values={"E": "bf16"},
    )
    assert result.ok, [d.message for d in result.diagnostics]


def test_explicit_conversion_ops() -> None:
    types = lets(
        """
        let i: Tile<i32, { [4, 64] }> = ftoi(t, rounding::Zero);
        let w: Tile<i64, { [4, 64] }> = exti(i);
        let n16: Tile<i16, { [4, 64] }> = trunci(i, overflow::NoSignedWrap);
        let b: Tile<u32, { [4, 64] }> = bitcast(t);
        let h = ftof::<f32, f16, { [4, 64] }, rounding::NearestEven>(t, rounding::NearestEven);
        let f: Tile<f64, { [4, 64] }> = itof(n16, rounding::NearestEven);
        """
    )
    assert types["w"] == TileTy(Elem.I64, SHAPE)
    assert types["n16"] == TileTy(Elem.I16, SHAPE)
    assert types["b"] == TileTy(Elem.U32, SHAPE)
    assert types["h"] == TileTy(Elem.F16, SHAPE)
    assert types["f"] == TileTy(Elem.F64, SHAPE)


def test_a_missing_target_needs_an_annotation() -> None:
    error = the_error("let a = convert_tile(t);")
    assert error.code is codes.TYPE_ANNOTATION_NEEDED
    assert "convert_tile" in error.message
    assert error.help and "let y: Tile<" in error.help[0]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("let a: Tile<bool, { [4, 64] }> = convert_tile(t);", "no conversion to `bool`"),
        ("let a: Tile<i64, { [4, 64] }> = bitcast(t);", "bit widths differ"),
        ("let a: Tile<i16, { [4, 64] }> = exti(convert_tile::<i32>(t));", "`exti` widens"),
        ("let a: Tile<i64, { [4, 64] }> = trunci(t, overflow::None);", "integer to integer"),
        ("let a: Tile<f16, { [4, 64] }> = ftoi(t, rounding::Zero);", "float to integer"),
        ("let a: Tile<f16, { [4, 64] }> = ftof(t, rounding::Zero);", "`rounding::Zero`"),
        ("let a: Tile<i32, { [4, 64] }> = ftoi(t, rounding::NearestEven);", "toward zero"),
    ],
)
def test_conversion_errors(body: str, fragment: str) -> None:
    error = the_error(body)
    assert error.code is codes.UNSUPPORTED_TYPE
    assert fragment in error.message


def test_convert_scalar_needs_a_scalar() -> None:
    error = the_error("let a: f16 = convert_scalar(t);")
    assert error.code is codes.MISMATCHED_TYPES


LOW = (
    "z: &mut Tensor<f32, { [64] }>, x: &Tensor<f8e4m3fn, { [-1] }>, "
    "p: &Tensor<f4e2m1fnx2, { [-1] }>"
)
LOW_PRELUDE = "let a: Tile<f8e4m3fn, { [64] }> = load_tile_like(x, z);"


def test_fp8_converts_like_other_floats() -> None:
    types = lets(
        """
        let f: Tile<f32, { [64] }> = convert_tile(a);
        let e5: Tile<f8e5m2, { [64] }> = convert_tile(f);
        let h: Tile<f16, { [64] }> = ftof(e5, rounding::NearestEven);
        let i: Tile<i32, { [64] }> = ftoi(a, rounding::Zero);
        let back: Tile<f8e4m3fn, { [64] }> = itof(i, rounding::NearestEven);
        let scale: Tile<f8e8m0fnu, { [64] }> = ftof(f, rounding::PositiveInf);
        let raw: Tile<u8, { [64] }> = bitcast(a);
        """,
        sig=LOW,
        prelude=LOW_PRELUDE,
        arch="sm_100",
    )
    assert types["e5"] == TileTy(Elem.F8E5M2, (64,))
    assert types["back"] == TileTy(Elem.F8E4M3FN, (64,))
    assert types["scale"] == TileTy(Elem.F8E8M0FNU, (64,))
    assert types["raw"] == TileTy(Elem.U8, (64,))


@pytest.mark.parametrize(
    ("body", "message", "help_"),
    [
        (
            "let s: Tile<f8e8m0fnu, { [64] }> = convert_tile(a);",
            "needs a rounding direction",
            "rounding::PositiveInf",
        ),
        (
            "let s: Tile<f8e8m0fnu, { [64] }> = ftof(a, rounding::NearestEven);",
            "toward zero or up",
            "rounding::Zero",
        ),
        (
            "let q: Tile<f4e2m1fnx2, { [64] }> = load_tile_like(p, z);\n"
            "let f: Tile<f32, { [64] }> = convert_tile(q);",
            "`f4e2m1fnx2` values are packed bytes",
            "`unpack` bytes",
        ),
    ],
)
def test_conversions_that_fp8_and_fp4_do_not_have(body: str, message: str, help_: str) -> None:
    error = the_error(body, sig=LOW, prelude=LOW_PRELUDE, arch="sm_100")
    assert error.code is codes.UNSUPPORTED_TYPE
    assert message in error.message
    assert any(help_ in h for h in error.help)


def test_i4_has_no_bitcast_or_value_conversion() -> None:
    prelude = (
        "let w: Tile<u8, { [64] }> = constant(0u8, const_shape![64]);\n"
        "let n: Tile<i4, { [128] }> = unpack(w);"
    )
    error = the_error("let i: Tile<i8, { [128] }> = convert_tile(n);", prelude=prelude)
    assert "`i4` values are storage" in error.message
    error = the_error("let f: Tile<f4e2m1fn, { [128] }> = bitcast(n);", prelude=prelude)
    assert "`i4` values are storage" in error.message
