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


def test_same_elements_takes_a_tile_of_its_rank_and_returns_it() -> None:
    types = lets(
        "let t: Tile<f32, { [4, 64] }> = constant(0.0f32, const_shape![4, 64]);\n"
        "let s = assume_same_elements_2d::<_, 2, D>(t);\n"
        "let i = assume_same_elements_1d::<_, 64>(idx);",
        values={"D": "8"},
        **UNSAFE,
    )
    assert types["s"] == TileTy(Elem.F32, (4, 64))
    assert types["i"] == TileTy(Elem.I32, (64,))


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
    same = compile_body(
        "let s = assume_same_elements_1d::<_, 16>(idx);", Stage.IR, values={"D": "8"}, **UNSAFE
    )
    assert same.ok, [d.message for d in same.diagnostics]
    assert "{predicate = same_elements<[16]>} : tile<64xi32>" in print_module(same.ir)  # type: ignore[arg-type]


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
        (
            "let m = assume_same_elements_2d::<_, 2, 4>(idx);",
            codes.MISMATCHED_TYPES,
            "mismatched types: `assume_same_elements_2d` applies to a rank-2 tile, "
            "found `Tile<i32, {[64]}>`",
        ),
        (
            "let m = assume_same_elements_1d::<_, 3>(idx);",
            codes.GENERIC_ARGUMENT,
            "`assume_same_elements_1d`: the group size 3 on axis 0 does not divide the "
            "tile's extent 64",
        ),
        (
            "let m = assume_same_elements_1d::<_, 0>(idx);",
            codes.GENERIC_ARGUMENT,
            "`assume_same_elements_1d`: the group size 0 on axis 0 does not divide the "
            "tile's extent 64",
        ),
        (
            "let m = assume_same_elements_3d::<_, 1, 1>(idx);",
            codes.GENERIC_ARGUMENT,
            "`assume_same_elements_3d` takes 4 generic arguments: "
            "`assume_same_elements_3d::<_, GROUP0, GROUP1, GROUP2>(x)`",
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
