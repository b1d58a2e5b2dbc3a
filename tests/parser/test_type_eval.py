"""Const folding of generic expressions and resolution of written types."""

from __future__ import annotations

import pytest

from parser import ast_nodes as A
from parser import codes
from parser.diagnostics import DiagnosticSink
from parser.type_eval import NotConstant, TypeEnv, TypeResolver, eval_const
from parser.types import (
    SLICE,
    TOKEN,
    ArrayTy,
    Elem,
    MarkerTy,
    OptionTy,
    PointerTileTy,
    PointerTy,
    RefTy,
    ScalarTy,
    ShapeTy,
    TensorTy,
    TileTy,
    TupleTy,
)
from tests.parser.support import parse

ENV = TypeEnv(
    generics={"B": 128, "S": (64, 32), "E": Elem.F16, "F": True},
    consts={"TILE": 16, "ON": False},
)


def const_expr(expression: str) -> A.Expr:
    parsed, diagnostics = parse(
        f"#[cutile::module]\nmod k {{\n    const X: i32 = {expression};\n}}\n"
    )
    assert not diagnostics, [d.message for d in diagnostics]
    return parsed.modules[0].consts[0].value


def fold(expression: str, env: TypeEnv = ENV) -> object:
    return eval_const(const_expr(expression), env)


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("42", 42),
        ("-7", -7),
        ("--7", 7),
        ("true", True),
        ("1.5", 1.5),
        ("B", 128),
        ("-B", -128),
        ("TILE", 16),
        ("F", True),
        ("ON", False),
        ("B + 2 * 3", 134),
        ("(B + 2) * 3", 390),
        ("B - TILE - 1", 111),
        ("{ B * 2 }", 256),
        ("B / 3", 42),
        ("B % 3", 2),
        ("-7 % 2", -1),
        ("7 % -2", 1),
        ("-8 / 2", -4),
        ("B == 128", True),
        ("B != 128", False),
        ("B < TILE", False),
        ("B >= 128", True),
        ("S[0]", 64),
        ("S[1] * 2", 64),
        ("S", (64, 32)),
        ("[B, 64, -1]", (128, 64, -1)),
        ("[S[1], S[0] / 2, TILE]", (32, 32, 16)),
        ("[]", ()),
        ("i32::MAX", 2**31 - 1),
        ("E::ZERO", 0.0),
        ("u8::MIN", 0),
    ],
)
def test_folding(expression: str, value: object) -> None:
    assert fold(expression) == value


def test_integer_remainder_truncates_toward_zero() -> None:
    assert fold("-7 % 3") == -1
    assert fold("7 % -3") == 1
    assert fold("-7 % -3") == -1


@pytest.mark.parametrize(("a", "b"), [(-7, 2), (7, -2), (-1, 128)])
def test_integer_division_truncates_like_rust(a: int, b: int) -> None:
    quotient = fold(f"{a} / {b}")
    assert quotient == int(a / b)
    assert quotient * b + fold(f"{a} % {b}") == a  # type: ignore[operator]


@pytest.mark.parametrize(
    ("expression", "culprit", "what"),
    [
        ("N", "N", "cannot find constant `N`"),
        ("B + N", "N", "cannot find constant `N`"),
        ("E", "E", "`E` is a type, not a value"),
        ("B / 0", "B / 0", "cannot evaluate `/` at compile time"),
        ("B % (TILE - 16)", "B % (TILE - 16)", "cannot evaluate `%` at compile time"),
        ("S[2]", "S[2]", "this expression is not a compile-time constant"),
        ("S[-1]", "S[-1]", "this expression is not a compile-time constant"),
        ("f(1)", "f(1)", "this expression is not a compile-time constant"),
        ("a.len()", "a.len()", "this expression is not a compile-time constant"),
        ("[B, true]", "true", "expected an integer"),
        ("[1.5]", "1.5", "expected an integer"),
        ("1.5 + 1", "1.5 + 1", "cannot evaluate `+` at compile time"),
        ("B << 1", "B << 1", "cannot evaluate `<<` at compile time"),
        ("-true", "-true", "this expression is not a compile-time constant"),
        ("{ let a = 1; a }", "{ let a = 1; a }", "this expression is not a compile-time constant"),
        ("f32::WIDTH", "f32::WIDTH", "cannot find constant `f32::WIDTH`"),
    ],
)
def test_non_constants_raise_with_the_offending_span(
    expression: str, culprit: str, what: str
) -> None:
    with pytest.raises(NotConstant) as caught:
        fold(expression)
    assert caught.value.what == what
    assert caught.value.span.text == culprit


def test_module_const_shadowed_by_a_generic_uses_the_generic() -> None:
    env = TypeEnv(generics={"X": 1}, consts={"X": 2})
    assert fold("X", env) == 1


# ----------------------------------------------------------------------------- types


def resolve(written: str, env: TypeEnv = ENV) -> tuple[object, list]:
    """Resolve the type of a parameter written as `p: <written>`."""
    parsed, diagnostics = parse(f"#[cutile::module]\nmod k {{\n    fn g(p: {written}) {{}}\n}}\n")
    assert not diagnostics, [d.message for d in diagnostics]
    sink = DiagnosticSink()
    ty = TypeResolver(env, sink).resolve(parsed.modules[0].functions[0].params[0].type)
    return ty, list(sink)


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("f32", ScalarTy(Elem.F32)),
        ("bool", ScalarTy(Elem.BOOL)),
        ("E", ScalarTy(Elem.F16)),
        ("&Tensor<f32, { [-1] }>", RefTy(TensorTy(Elem.F32, (-1,)), False)),
        ("&mut Tensor<E, { [B] }>", RefTy(TensorTy(Elem.F16, (128,)), True)),
        ("&mut Tensor<u8, S>", RefTy(TensorTy(Elem.U8, (64, 32)), True)),
        ("&Tensor<i64, { [-1, -1, B, 2] }>", RefTy(TensorTy(Elem.I64, (-1, -1, 128, 2)), False)),
        ("Tile<E, { [S[0], B / 2] }>", TileTy(Elem.F16, (64, 64))),
        ("Tile<bf16, { [] }>", TileTy(Elem.BF16, ())),
        ("Tile<f32, S>", TileTy(Elem.F32, (64, 32))),
        ("Shape<{ [B, 1] }>", ShapeTy((128, 1))),
        ("(f32, E)", TupleTy((ScalarTy(Elem.F32), ScalarTy(Elem.F16)))),
        ("()", TupleTy(())),
        ("cutile::core::Tensor<f32, { [4] }>", TensorTy(Elem.F32, (4,))),
        ("*mut E", PointerTy(Elem.F16, mutable=True)),
        ("*const f32", PointerTy(Elem.F32, mutable=False)),
        ("PointerTile<*mut f32, { [B] }>", PointerTileTy(Elem.F32, (128,))),
        ("PointerTile<*const u8, { [] }>", PointerTileTy(Elem.U8, (), mutable=False)),
        ("[i32; 2]", ArrayTy(ScalarTy(Elem.I32), 2)),
        ("&[i32; 3]", ArrayTy(ScalarTy(Elem.I32), 3)),
        ("&[i32]", ArrayTy(ScalarTy(Elem.I32), SLICE)),
        ("[Token; B / 64]", ArrayTy(TOKEN, 2)),
        ("Token", TOKEN),
        ("Option<Tile<bool, { [B] }>>", OptionTy(TileTy(Elem.BOOL, (128,)))),
        ("Option<scope::Device>", OptionTy(MarkerTy("scope", "Device"))),
        ("[f32; 4]", ArrayTy(ScalarTy(Elem.F32), 4)),
        ("scope::Device", MarkerTy("scope", "Device")),
        ("Option<cutile::core::ordering::Weak>", OptionTy(MarkerTy("ordering", "Weak"))),
        ("Option<Tile<f32, { [4] }>>", OptionTy(TileTy(Elem.F32, (4,)))),
        ("[i32; B]", ArrayTy(ScalarTy(Elem.I32), 128)),
    ],
)
def test_resolve_types(written: str, expected: object) -> None:
    ty, diagnostics = resolve(written)
    assert diagnostics == []
    assert ty == expected


def test_types_print_in_rust_spelling() -> None:
    ty, _ = resolve("&mut Tensor<E, { [B, 4] }>")
    assert str(ty) == "&mut Tensor<f16, {[128, 4]}>"
    tile, _ = resolve("Tile<f32, S>")
    assert str(tile) == "Tile<f32, {[64, 32]}>"
    shape, _ = resolve("Shape<{ [2] }>")
    assert str(shape) == "Shape<{[2]}>"
    pointer, _ = resolve("*const E")
    assert str(pointer) == "*const f16"
    pointers, _ = resolve("PointerTile<*mut f32, { [4] }>")
    assert str(pointers) == "PointerTile<*mut f32, {[4]}>"


def test_array_types_have_a_constant_length() -> None:
    array, diagnostics = resolve("[i32; 2]")
    assert diagnostics == [] and str(array) == "[i32; 2]"


@pytest.mark.parametrize(
    ("written", "code", "message", "culprit"),
    [
        ("Vec<f32>", codes.UNSUPPORTED_TYPE, "unsupported type `Vec<f32>` in a kernel", "Vec<f32>"),
        ("i128", codes.UNSUPPORTED_TYPE, "unsupported type `i128` in a kernel", "i128"),
        ("[f32]", codes.UNSUPPORTED_TYPE, "unsupported type `[f32]` in a kernel", "[f32]"),
        ("[f32; N]", codes.GENERIC_ARGUMENT, "invalid shape: cannot find constant `N`", "N"),
        ("[f32; n]", codes.GENERIC_ARGUMENT, "invalid shape: cannot find constant `n`", "n"),
        (
            "*mut Vec<f32>",
            codes.UNSUPPORTED_TYPE,
            "expected an element type, found `Vec<f32>`",
            "Vec<f32>",
        ),
        (
            "PointerTile<f32, { [4] }>",
            codes.GENERIC_ARGUMENT,
            "the first argument of `PointerTile` is a raw pointer type",
            "f32",
        ),
        (
            "&Tensor<f32>",
            codes.GENERIC_ARGUMENT,
            "`Tensor` takes 2 generic arguments",
            "Tensor<f32>",
        ),
        (
            "Tile<f32, { [4] }, u8>",
            codes.GENERIC_ARGUMENT,
            "`Tile` takes 2 generic arguments",
            "Tile<f32, { [4] }, u8>",
        ),
        (
            "&Tensor<String, { [4] }>",
            codes.UNSUPPORTED_TYPE,
            "expected an element type, found `String`",
            "String",
        ),
        (
            "Tile<B, { [4] }>",
            codes.UNSUPPORTED_TYPE,
            "expected an element type, found `B`",
            "B",
        ),
        (
            "Tile<f32, { [n] }>",
            codes.GENERIC_ARGUMENT,
            "invalid shape: cannot find constant `n`",
            "n",
        ),
        (
            "Tile<f32, { B }>",
            codes.GENERIC_ARGUMENT,
            "invalid shape: expected an array of dimensions",
            "{ B }",
        ),
        (
            "Tile<f32, { [[4, 1], 8] }>",
            codes.GENERIC_ARGUMENT,
            "invalid shape: expected an integer",
            "[4, 1]",
        ),
        (
            "Tile<f32, Vec<i32>>",
            codes.GENERIC_ARGUMENT,
            "invalid shape: expected a shape such as `{ [128, 64] }`",
            "Vec<i32>",
        ),
        (
            "Tile<f32, { [B / 0] }>",
            codes.GENERIC_ARGUMENT,
            "invalid shape: cannot evaluate `/` at compile time",
            "B / 0",
        ),
        (
            "Shape<{ [1] }, { [2] }>",
            codes.GENERIC_ARGUMENT,
            "invalid shape: `Shape` takes one argument",
            "Shape<{ [1] }, { [2] }>",
        ),
    ],
)
def test_unresolvable_types_are_reported(
    written: str, code: object, message: str, culprit: str
) -> None:
    ty, diagnostics = resolve(written)
    assert ty is None
    assert [d.code for d in diagnostics] == [code]
    assert diagnostics[0].message == message
    assert diagnostics[0].primary_span.text == culprit
    assert diagnostics[0].primary_span.start_line_col[0] == 3


def test_const_element_argument_is_not_an_element_type() -> None:
    ty, diagnostics = resolve("Tile<4, { [4] }>")
    assert ty is None
    assert [d.code for d in diagnostics] == [codes.UNSUPPORTED_TYPE]
    assert diagnostics[0].primary_span.text == "4"
