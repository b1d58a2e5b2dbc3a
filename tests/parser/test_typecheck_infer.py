"""Unsuffixed literals typed by a later use (`parser.typecheck_infer`): through aliases,
operators, `if` joins, indexing, tuple fields, patterns and assignments, as rustc does;
what cannot be (an integer literal used as a float) is still reported."""

from __future__ import annotations

import pytest

from parser.render import render
from parser.typed_kernel import TypedKernel
from parser.types import ArrayTy, Elem, ScalarTy, TileTy, TupleTy
from tests.parser.support import check, codes_of, errors, kernel, line_of, where

I32, I64 = ScalarTy(Elem.I32), ScalarTy(Elem.I64)
F32, F64 = ScalarTy(Elem.F32), ScalarTy(Elem.F64)
HELPERS = """    fn want_i64(v: i64) -> i64 {
        v
    }
    fn want_f32(v: f32) -> f32 {
        v
    }
    fn want_tile(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> {
        t
    }
"""


def typed(*lines: str) -> TypedKernel:
    text = kernel("\n".join(f"        {line}" for line in lines), extra=HELPERS)
    result = check(text)
    assert result.ok, [render(d) for d in result.diagnostics]
    assert isinstance(result.kernel, TypedKernel)
    return result.kernel


def lets(k: TypedKernel) -> dict[str, object]:
    return {v.name: v.type for vs in k.body.lets.values() for v in vs}


STORE = "z.store(x.load_like(z));"


@pytest.mark.parametrize(
    ("lines", "name", "wanted"),
    [
        (("let a = 0;", "let b = a;", "let r = want_i64(b);"), "a", I64),
        (("let a = 0;", "let c = 1;", "let s = a + c;", "let r = want_i64(a);"), "c", I64),
        (("let a = 0;", "let j = if a > 2 { a } else { 1i64 };"), "a", I64),
        (("let v = [0, 1];", "let i = v[0];", "let r = want_i64(i);"), "v", ArrayTy(I64, 2)),
        (("let v = [0; 2];", "let i = v[1];", "let r = want_i64(i);"), "v", ArrayTy(I64, 2)),
        (("let i = [0, 1][0];", "let r = want_i64(i);"), "i", I64),
        (("let i = (0,).0;", "let r = want_i64(i);"), "i", I64),
        (("let p = (0,);", "let i = p.0;", "let r = want_i64(i);"), "p", TupleTy((I64,))),
        (("let mut i = 0;", "i = 1i64;"), "i", I64),
        (("let i = 0;", "let f = i < 1i64;"), "i", I64),
        (("let (i, s) = (0, 1.0);", "let r = want_i64(i);", "let t = want_f32(s);"), "s", F32),
        (("let [i, o] = [0, 1];", "let r = want_i64(i);"), "o", I64),
        (("let mut acc = 0.0;", "let u = want_f32(1.0);", "acc = acc + u;"), "acc", F32),
        (("let t = constant(1.0, const_shape![128]);", "let u = want_tile(t);"), "t", None),
        (("let f = 2.5;",), "f", F64),
        (("let i = 7;",), "i", I32),
    ],
)
def test_a_later_use_types_the_literal(lines: tuple[str, ...], name: str, wanted: object) -> None:
    got = lets(typed(*lines, STORE))[name]
    assert got == (wanted if wanted is not None else TileTy(Elem.F32, (128,)))


def test_an_integer_literal_never_becomes_a_float() -> None:
    text = kernel(
        "        let a = 0;\n        let r = want_f32(a);\n        " + STORE, extra=HELPERS
    )
    result = check(text)
    assert codes_of(result) == ["E0308"]
    assert where(errors(result)[0])[0] == line_of(text, "want_f32(a)")


def test_two_uses_that_disagree_report_the_later_one() -> None:
    text = kernel(
        "        let a = 0;\n        let r = want_i64(a);\n        let s = a + 1i32;\n        "
        + STORE,
        extra=HELPERS,
    )
    result = check(text)
    assert codes_of(result) == ["E0308"]
    assert where(errors(result)[0])[0] == line_of(text, "a + 1i32")
