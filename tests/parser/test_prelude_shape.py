"""Typing of tile creation and shape manipulation (`parser.prelude.shape`)."""

from __future__ import annotations

import pytest

from parser import codes
from parser.types import Elem, ScalarTy, TileTy
from tests.parser.prelude_support import compile_body, lets, primary_text, the_error


def test_constant_takes_its_element_type_from_the_value_or_the_annotation() -> None:
    types = lets(
        """
        let a = constant(1.5f16, const_shape![8]);
        let b: Tile<f32, { [4, 64] }> = constant(0.0, const_shape![4, 64]);
        let c: Tile<f32, { [2] }> = constant(f32::NEG_INFINITY, const_shape![2]);
        let d = constant(-3i64, const_shape![16]);
        let e = constant(true, const_shape![4]);
        let f: Tile<f32, { [2] }> = constant(-f32::INFINITY, const_shape![2]);
        """
    )
    assert types["a"] == TileTy(Elem.F16, (8,))
    assert types["b"] == TileTy(Elem.F32, (4, 64))
    assert types["c"] == types["f"] == TileTy(Elem.F32, (2,))
    assert types["d"] == TileTy(Elem.I64, (16,))
    assert types["e"] == TileTy(Elem.BOOL, (4,))


def test_constant_of_a_generic_zero_and_a_const_generic_shape() -> None:
    result = compile_body(
        "let z0: Tile<E, { [B] }> = constant(E::ZERO, const_shape![B]);",
        values={"E": "bf16", "B": "32"},
        params="<E: ElementType, const B: i32>",
    )
    assert result.ok, [d.message for d in result.diagnostics]


def test_constant_needs_a_compile_time_value() -> None:
    error = the_error("let a = constant(s, const_shape![4]);")
    assert error.code is codes.GENERIC_ARGUMENT
    assert primary_text(error) == "s"
    assert error.help == ("fill a tile with a run-time value: `s.broadcast(const_shape![4])`",)


def test_constant_shape_must_be_powers_of_two() -> None:
    error = the_error("let a = constant(1i32, const_shape![3]);")
    assert error.code is codes.TILE_NOT_POWER_OF_TWO


def test_reshape_permute_transpose_and_relabels() -> None:
    types = lets(
        """
        let a = t.reshape(const_shape![16, 16]);
        let b = reshape(a, const_shape![256]);
        let c = permute(t.reshape(const_shape![4, 8, 8]), const_array![2, 0, 1]);
        let d = t.transpose();
        let e = transpose(d);
        let f = scalar_to_tile(s);
        let g = tile_to_scalar(f);
        """
    )
    assert types["a"] == TileTy(Elem.F32, (16, 16))
    assert types["b"] == TileTy(Elem.F32, (256,))
    assert types["c"] == TileTy(Elem.F32, (8, 4, 8))
    assert types["d"] == TileTy(Elem.F32, (64, 4))
    assert types["e"] == TileTy(Elem.F32, (4, 64))
    assert types["f"] == TileTy(Elem.F32, ())
    assert types["g"] == ScalarTy(Elem.F32)


def test_reshape_keeps_the_element_count() -> None:
    error = the_error("let a = t.reshape(const_shape![4, 4]);")
    assert error.code is codes.MISMATCHED_TYPES
    assert "(256 elements) to shape [4, 4] (16 elements)" in error.message


def test_permutation_must_permute_every_dimension() -> None:
    error = the_error("let a = permute(t, const_array![0, 0]);")
    assert error.code is codes.MISMATCHED_TYPES
    assert "not a permutation" in error.message


def test_permutation_must_be_known_at_compile_time() -> None:
    error = the_error("let p = [1, n];\nlet a = permute(t, p);")
    assert error.code is codes.GENERIC_ARGUMENT


def test_transpose_needs_rank_two() -> None:
    error = the_error("let a = t.reshape(const_shape![256]).transpose();")
    assert error.code is codes.MISMATCHED_TYPES
    assert "rank-2" in error.message


def test_tile_to_scalar_needs_a_rank_zero_tile() -> None:
    error = the_error("let a = tile_to_scalar(t);")
    assert error.code is codes.MISMATCHED_TYPES
    assert error.help == ("reshape it first: `t.reshape(const_shape![])`",)


def test_iota_cat_extract() -> None:
    types = lets(
        """
        let i: Tile<i32, { [64] }> = iota(const_shape![64]);
        let j = iota::<i64, { [32] }>(const_shape![32]);
        let k = cat(j, j, 0);
        let w = cat(t, t, 1i32);
        let part: Tile<f32, { [2, 16] }> = extract(t, [scalar_to_tile(1i32), scalar_to_tile(n)]);
        """
    )
    assert types["j"] == TileTy(Elem.I64, (32,))
    assert types["k"] == TileTy(Elem.I64, (64,))
    assert types["w"] == TileTy(Elem.F32, (4, 128))
    assert types["part"] == TileTy(Elem.F32, (2, 16))


HALF = "let h: Tile<f32, { [128] }> = constant(0.0, const_shape![128]);"
AT_0_0 = "[scalar_to_tile(0i32), scalar_to_tile(0i32)]"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ("let a = iota(const_shape![64]);", codes.TYPE_ANNOTATION_NEEDED),
        ("let a: Tile<f32, { [64] }> = iota(const_shape![64]);", codes.MISMATCHED_TYPES),
        ("let a: Tile<i8, { [512] }> = iota(const_shape![512]);", codes.MISMATCHED_TYPES),
        ("let a = cat(t, t.transpose(), 0);", codes.MISMATCHED_TYPES),
        ("let a = cat(t, t, 2);", codes.MISMATCHED_TYPES),
        ("let a = cat(t, t, n);", codes.GENERIC_ARGUMENT),
        (f"{HALF}\nlet a = cat(t.reshape(const_shape![256]), h, 0);", codes.TILE_NOT_POWER_OF_TWO),
        (f"let a = extract(t, {AT_0_0});", codes.TYPE_ANNOTATION_NEEDED),
        (f"let a: Tile<f32, {{ [8, 64] }}> = extract(t, {AT_0_0});", codes.MISMATCHED_TYPES),
        ("let a: Tile<f32, { [2, 64] }> = extract(t, [0i32, 0i32]);", codes.MISMATCHED_TYPES),
    ],
)
def test_iota_cat_extract_errors(body: str, code: codes.DiagnosticCode) -> None:
    assert the_error(body).code is code


def test_permute_array_reorders_an_index_array() -> None:
    types = lets("let p = permute_array([n, 1i32, 2i32], const_array![2, 0, 1]);")
    assert str(types["p"]) == "[i32; 3]"
    bad = the_error("let p = permute_array([n, 1i32], const_array![0, 0]);")
    assert (bad.code, bad.message) == (
        codes.MISMATCHED_TYPES,
        "`[0, 0]` is not a permutation of the 2 dimensions of the tile",
    )
    tile = the_error("let p = permute_array(t, const_array![1, 0]);")
    assert tile.message == (
        "mismatched types: `permute_array` expects an `[i32; N]`, found `Tile<f32, {[4, 64]}>`"
    )
