"""Optimization assumptions (`parser.prelude.assume`): typing, generic arguments, and
E0133 outside `unsafe`."""

from __future__ import annotations

import pytest

from lowering.ir.printer import print_module
from lowering.pipeline import Stage
from parser import codes
from parser.types import Elem, PointerTileTy, PointerTy, ScalarTy, TileTy
from tests.parser.prelude_support import compile_body, lets, the_error

SIG = "y: *mut f32, n: i32"
IDX = "let idx: Tile<i32, { [64] }> = iota(const_shape![64]);"
UNSAFE = {"sig": SIG, "prelude": IDX, "qualifier": "unsafe ", "params": "<const D: i32>"}


def test_assumptions_return_their_argument_unchanged() -> None:
    types = lets(
        "let p: *mut f32 = assume_div_by::<_, 16>(y);\n"
        "let m = assume_div_by::<_, D>(assume_bounds_lower::<_, 0>(n));\n"
        "let i = assume_bounds::<_, 0, 1024>(idx);\n"
        "let u = assume_bounds_upper::<_, 4096>(n);\n"
        "let pt = assume_div_by::<_, 16>(pointer_to_tile(y));",
        values={"D": "8"},
        **UNSAFE,
    )
    assert types["p"] == PointerTy(Elem.F32)
    assert types["m"] == ScalarTy(Elem.I32) == types["u"]
    assert types["i"] == TileTy(Elem.I32, (64,))
    assert types["pt"] == PointerTileTy(Elem.F32, ())


def test_assumptions_lower_to_assume_predicates() -> None:
    result = compile_body(
        "let m = assume_div_by::<_, D>(assume_bounds_lower::<_, 0>(n));\n"
        "let i = assume_bounds::<_, { -4 }, 1024>(idx);\n"
        "let u = assume_bounds_upper::<_, 4096>(m);\n"
        "let p = assume_div_by::<_, 16>(y);",
        Stage.IR,
        values={"D": "8"},
        **UNSAFE,
    )
    assert result.ok, [d.message for d in result.diagnostics]
    text = print_module(result.ir)  # type: ignore[arg-type]
    assert "= assume %1 {predicate = bounded<0, ?>} : tile<i32>" in text
    assert "{predicate = div_by<8>} : tile<i32>" in text
    assert "{predicate = bounded<-4, 1024>} : tile<64xi32>" in text
    assert "{predicate = bounded<?, 4096>} : tile<i32>" in text
    assert "= assume %0 {predicate = div_by<16>} : tile<ptr<f32>>" in text


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            "let m = assume_div_by::<_, 16, 2>(n);",
            codes.GENERIC_ARGUMENT,
            "`assume_div_by` takes 2 generic arguments: `assume_div_by::<_, D>(x)`",
        ),
        (
            "let m = assume_bounds(n);",
            codes.GENERIC_ARGUMENT,
            "`assume_bounds` takes 3 generic arguments: `assume_bounds::<_, L, U>(x)`",
        ),
        (
            "let m = assume_div_by::<_, 0>(n);",
            codes.GENERIC_ARGUMENT,
            "the divisor of `assume_div_by` must be positive, found 0",
        ),
        (
            "let m = assume_bounds::<_, 9, 2>(n);",
            codes.GENERIC_ARGUMENT,
            "`assume_bounds`: the lower bound 9 exceeds the upper bound 2",
        ),
        (
            "let m = assume_div_by::<_, n>(n);",
            codes.GENERIC_ARGUMENT,
            "the generic arguments of `assume_div_by` after `_` are compile-time integers",
        ),
        (
            "let m = assume_bounds_lower::<_, 0>(y);",
            codes.MISMATCHED_TYPES,
            "mismatched types: `assume_bounds_lower` applies to an integer, found `*mut f32`",
        ),
        (
            "let f = 1.0f32;\nlet m = assume_div_by::<_, 4>(f);",
            codes.MISMATCHED_TYPES,
            "mismatched types: `assume_div_by` applies to an integer or a pointer, found `f32`",
        ),
    ],
)
def test_bad_assumptions_are_reported(body: str, code: object, message: str) -> None:
    diagnostic = the_error(body, values={"D": "8"}, **UNSAFE)
    assert diagnostic.code is code
    assert diagnostic.message == message


def test_assumptions_outside_unsafe_are_e0133() -> None:
    diagnostic = the_error(
        "let m = assume_div_by::<_, 16>(n);",
        sig="z: &mut Tensor<f32, { [64] }>, n: i32",
        prelude="",
    )
    assert diagnostic.code is codes.UNSAFE_REQUIRED
    assert diagnostic.message.startswith("call to unsafe function `assume_div_by::<_, 16>`")
