"""Lowering of reductions and scans, assembled by tileiras."""

from __future__ import annotations

import re

import pytest

from lowering.ir.core import walk
from lowering.ir.ops_reduce import Reduce, Scan
from lowering.pipeline import Stage
from lowering.tileiras import Tileiras
from tests.parser.prelude_support import assembled_ir, compile_body


def _aggregates(body: str) -> list[Reduce | Scan]:
    result = compile_body(body, Stage.IR)
    assert result.ok, [d.message for d in result.diagnostics]
    (function,) = result.ir.functions  # type: ignore[attr-defined]
    return [op for op in walk(function.body) if isinstance(op, (Reduce, Scan))]


@pytest.mark.parametrize(
    ("kind", "identity", "combiner"),
    [
        ("sum", "0.0", "addf"),
        ("max", "-inf", "maxf"),
        ("min", "inf", "minf"),
        ("prod", "1.0", "mulf"),
    ],
)
def test_float_row_reductions(tileiras: Tileiras, kind: str, identity: str, combiner: str) -> None:
    body = f"""
    let r: Tile<f32, {{ [4, 1] }}> = reduce_{kind}(t, 1);
    z.store(r.broadcast(z.shape()));
    """
    ir = assembled_ir(body, tileiras)
    assert f" {{dim = 1, identities = [{identity} : f32]}} : tile<4xf32>" in ir
    assert re.search(rf"= {combiner} %\d+, %\d+ .*: tile<f32>\n\s*yield", ir)
    assert re.search(r"= reshape %\d+ : tile<4x1xf32>", ir)  # the annotated [4, 1]


@pytest.mark.parametrize(
    ("elem", "kind", "identity", "signedness"),
    [
        ("i32", "max", "-2147483648 : i32", "signed"),
        ("u32", "min", "4294967295 : i32", "unsigned"),
        ("i64", "sum", "0 : i64", None),
    ],
)
def test_integer_reductions(
    tileiras: Tileiras, elem: str, kind: str, identity: str, signedness: str | None
) -> None:
    body = f"""
    let i: Tile<{elem}, {{ [4, 64] }}> = convert_tile(t);
    let r: Tile<{elem}, {{ [64] }}> = reduce_{kind}(i, 0);
    let wide: Tile<{elem}, {{ [4, 64] }}> = r.reshape(const_shape![1, 64]).broadcast(z.shape());
    z.store(convert_tile(wide));
    """
    ir = assembled_ir(body, tileiras)
    assert f"{{dim = 0, identities = [{identity}]}}" in ir
    if signedness:
        assert f"signedness = {signedness}" in ir.split("yield")[0].rsplit("body", 1)[1]


def test_a_full_reduction_of_a_rank_one_tile(tileiras: Tileiras) -> None:
    body = """
    let flat = t.reshape(const_shape![256]);
    let total: Tile<f32, { [1] }> = reduce_sum(flat, 0i32);
    let total: f32 = tile_to_scalar(total.reshape(const_shape![]));
    z.store(total.broadcast(z.shape()));
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= reduce .* : tile<f32>\n", ir)
    assert re.search(r"= reshape %\d+ : tile<1xf32>", ir)


def test_closures_become_the_region(tileiras: Tileiras) -> None:
    body = """
    let sq: Tile<f32, { [4] }> = reduce(t, 1, 0.0f32, |acc, x| acc + x * x);
    let c = scan(t, 1, reverse::Reverse, f32::NEG_INFINITY, |acc, x| max(acc, x));
    z.store(c + sq.reshape(const_shape![4, 1]).broadcast(z.shape()));
    """
    ir = assembled_ir(body, tileiras)
    region = ir.split("= reduce ")[1].split("yield")[0]
    assert "mulf" in region and "addf" in region
    assert " {dim = 1, reverse = true, identities = [-inf : f32]} : tile<4x64xf32>" in ir
    (reduce_op, scan_op) = _aggregates(body)
    element, acc = reduce_op.body.block.args
    ops = reduce_op.body.block.ops
    assert ops[0].lhs == ops[0].rhs == element  # `x * x`: x is the element argument...
    assert ops[1].lhs == acc  # ...and `acc` the accumulator
    assert isinstance(scan_op, Scan) and scan_op.reverse


def test_scan_sum(tileiras: Tileiras) -> None:
    body = "z.store(scan_sum(t, 1, reverse::Forward, 0.0f32));"
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= scan %\d+ \{dim = 1, reverse = false, identities = \[0.0 : f32\]\}", ir)
    assert re.search(r"= addf %\d+, %\d+ .*: tile<f32>\n\s*yield", ir)
