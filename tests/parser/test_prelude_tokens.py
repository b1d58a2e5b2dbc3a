"""Tokens and optional operands (`parser.prelude.tokens`, `parser.typecheck_memory`):
`Token` values, `Some`/`None` (with their type from context or turbofish), `join_tokens`,
`get_tensor_token`, `print_tko` and `Latency::<N>`."""

from __future__ import annotations

import pytest

from lowering.ir.printer import print_module
from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser import codes
from parser.spans import SourceFile
from parser.types import TOKEN, Elem, LatencyTy, MarkerTy, OptionTy, TileTy
from tests.parser.prelude_support import lets, the_error


def test_tokens_are_values_that_can_be_joined_and_carried() -> None:
    types = lets(
        "let a: Token = new_token_unordered();\n"
        "let b = get_tensor_token(z);\n"
        "let c = get_tensor_token(x);\n"
        "let mut joined: Token = join_tokens(&[a, b, c]);\n"
        "for i in 0i32..n {\n"
        '    joined = print_tko("t: %f\\n", t, Some(joined));\n'
        "}\n"
        "let first: [Token; 2] = [a, joined];"
    )
    assert types["a"] == types["b"] == types["c"] == types["joined"] == TOKEN
    assert str(types["first"]) == "[Token; 2]"


def test_options_know_whether_they_are_some() -> None:
    types = lets(
        "let some = Some(t);\n"
        "let none = None::<scope::TileBlock>;\n"
        "let annotated: Option<Token> = None;\n"
        "let hint = Latency::<4>;"
    )
    assert types["some"] == OptionTy(TileTy(Elem.F32, (4, 64)))
    assert types["some"].some is True  # type: ignore[union-attr]
    assert types["none"] == OptionTy(MarkerTy("scope", "TileBlock"))
    assert types["none"].some is False  # type: ignore[union-attr]
    annotated = types["annotated"]
    assert annotated == OptionTy(TOKEN) and annotated.some is False  # type: ignore[union-attr]
    assert types["hint"] == LatencyTy(4)


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            "let j = join_tokens(&[n, n]);",
            codes.MISMATCHED_TYPES,
            "mismatched types: `join_tokens` expects `&[Token]`, found `[i32; 2]`",
        ),
        (
            "let j = get_tensor_token(t);",
            codes.MISMATCHED_TYPES,
            "mismatched types: `get_tensor_token` expects a `&Tensor<..>`, found "
            "`Tile<f32, {[4, 64]}>`",
        ),
        (
            'let p = print_tko("%f %f", t, None);',
            codes.MISMATCHED_TYPES,
            "the format of `print_tko` must be a string literal with one `%` conversion",
        ),
        (
            'let p = print_tko("%f", s, None);',
            codes.MISMATCHED_TYPES,
            "mismatched types: `print_tko` prints a `Tile<..>`, found `f32`",
        ),
        (
            'let p = print_tko("%f", t, Some(n));',
            codes.MISMATCHED_TYPES,
            "mismatched types: the token of `print_tko` must be `Token`, found `i32`",
        ),
        (
            "let l = Latency::<n>;",
            codes.GENERIC_ARGUMENT,
            "`Latency` takes one compile-time integer: `Latency::<4>`",
        ),
        (
            "let o = None::<f32, f32>;",
            codes.GENERIC_ARGUMENT,
            "`None` takes one type argument",
        ),
    ],
)
def test_token_misuse_is_reported(body: str, code: object, message: str) -> None:
    diagnostic = the_error(body)
    assert diagnostic.code is code
    assert diagnostic.message == message


PASSED = """
#[cutile::module]
mod k {
    use cutile::core::*;
    fn pass(m: Option<Tile<bool, { [64] }>>) -> Option<Tile<bool, { [64] }>> {
        m
    }

    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [64] }>) {
        let p: PointerTile<*mut f32, { [64] }> = int_to_ptr(constant(0i64, const_shape![64]));
        let m = pass(Some(constant(true, const_shape![64])));
        let (v, _t) = load_ptr_tko(p, ordering::Weak, None::<scope::TileBlock>, m, None, None,
            Latency::<0>);
        z.store(v);
    }
}
"""


def test_an_option_returned_by_a_device_function_stays_known() -> None:
    request = CompileRequest((SourceFile("k.rs", PASSED),), "f")
    result = compile_kernel(request, stop_after=Stage.IR)
    assert result.ok, [d.message for d in result.diagnostics]
    assert "load_ptr_tko %" in print_module(result.ir) and "mask(%" in print_module(result.ir)  # type: ignore[arg-type]
