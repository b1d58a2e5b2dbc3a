"""The `Dim` API (`parser.prelude.dims`): `Dim::new`, `into_dim`, `value`, iterating a
`Dim`, `with_bounds`, `coord`, and the bounded partition's loads and stores; typing
errors; `with_bounds` consumes its partition (E0382)."""

from __future__ import annotations

import pytest

from parser import codes
from parser.types import CoordTy, DimTy, Elem, PartitionTy, ScalarTy, TileTy
from tests.parser.prelude_support import lets, primary_text, the_error

SIG = "z: &mut Tensor<f32, { [64, 64] }>, x: &Tensor<f32, { [-1, -1] }>, n: i32"
PART = "let p = x.partition(const_shape![32, 16]);"
KW = {"sig": SIG, "prelude": PART}


def test_dims_coords_and_bounded_partitions_are_typed() -> None:
    types = lets(
        "let m = Dim::new(n);\n"
        "let k = num_tiles(&p, 1).into_dim();\n"
        "let v = m.value() + k.into_dim().value();\n"
        "let c = coord((0i32, v));\n"
        "let bp = p.with_bounds((m, v));\n"
        "let mut acc: Tile<f32, { [32, 16] }> = bp.load(coord((0i32, 0i32)));\n"
        "for i in m {\n"
        "    for j in k {\n"
        "        acc = acc + bp.load_pipelined::<3>(coord((i, j)));\n"
        "    }\n"
        "}\n"
        "let mut pz = z.partition_mut(const_shape![32, 64]).with_bounds((Dim::new(2), 1i32));\n"
        "pz.store(constant(0.0f32, const_shape![32, 64]), coord((1i32, 0i32)));",
        **KW,
    )
    assert types["m"] == DimTy() == types["k"]
    assert types["v"] == ScalarTy(Elem.I32)
    assert types["c"] == CoordTy(2)
    assert types["bp"] == PartitionTy(Elem.F32, (32, 16), mutable=False, bounded=True)
    assert str(types["bp"]) == "BoundedPartition<f32, {[32, 16]}>"
    assert types["acc"] == TileTy(Elem.F32, (32, 16))
    assert str(types["pz"]) == "BoundedPartitionMut<f32, {[32, 64]}>"


def test_annotations_name_the_dim_api_types() -> None:
    types = lets(
        "let m: Dim = Dim::new(n);\n"
        "let c: Coord2 = coord((1i32, 2i32));\n"
        "let bp: BoundedPartition<f32, { [32, 16] }> = p.with_bounds((m, m));",
        **KW,
    )
    assert types["m"] == DimTy() and types["c"] == CoordTy(2)
    assert types["bp"] == PartitionTy(Elem.F32, (32, 16), mutable=False, bounded=True)


@pytest.mark.parametrize(
    ("body", "code", "message", "at"),
    [
        ("let m = Dim::new(1.0f32);", codes.MISMATCHED_TYPES, "expects `i32`", "1.0f32"),
        ("let b = p.with_bounds((n,));", codes.MISMATCHED_TYPES, "takes a tuple of 2", "(n,)"),
        ("let c = coord((1i32,));", codes.MISMATCHED_TYPES, "`coord` takes a tuple", "(1i32,)"),
        (
            "let b = p.with_bounds((n, n));\nlet t = b.load([0i32, 0i32]);",
            codes.MISMATCHED_TYPES,
            "expected `Coord2`",
            "[0i32, 0i32]",
        ),
        (
            "let b = p.with_bounds((n, n));\nlet t = b.load(coord((0i32, 0i32, 0i32)));",
            codes.MISMATCHED_TYPES,
            "expected `Coord2`, found `Coord3`",
            "coord((0i32, 0i32, 0i32))",
        ),
        (
            "let b = p.with_bounds((n, n)).with_bounds((n, n));",
            codes.UNKNOWN_METHOD,
            "no method named `with_bounds` found for `BoundedPartition<f32, {[32, 16]}>`",
            "with_bounds",
        ),
        (
            "let q = x.partition(const_shape![64, 64, 64]);",
            codes.MISMATCHED_TYPES,
            "rank-2 tile shape",
            "const_shape![64, 64, 64]",
        ),
        (
            "let b = p.with_bounds((n, n));\nlet q = p.load([0i32, 0i32]);",
            codes.USE_AFTER_MOVE,
            "borrow of moved value: `p`",
            "p",
        ),
        (
            "let b = z.partition_mut(const_shape![32, 64]).with_bounds((n, n));\n"
            "b.store(constant(0.0f32, const_shape![32, 64]), coord((0i32, 0i32)));",
            codes.MUTATE_SHARED,
            "cannot borrow `b` as mutable",
            "b",
        ),
        ("for i in n {\n}", codes.UNSUPPORTED_SYNTAX, "or a `Dim`", "n"),
    ],
)
def test_dim_api_errors(body: str, code: codes.DiagnosticCode, message: str, at: str) -> None:
    diagnostic = the_error(body, **KW)
    assert diagnostic.code is code and message in diagnostic.message, diagnostic.message
    assert primary_text(diagnostic) == at
