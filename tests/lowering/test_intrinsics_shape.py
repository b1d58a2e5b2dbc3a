"""Lowering of tile creation and shape manipulation, assembled by tileiras."""

from __future__ import annotations

import re

from lowering.ir.core import walk
from lowering.ir.ops_core import Constant, Reshape
from lowering.ir.ops_shape import Permute
from lowering.pipeline import Stage
from lowering.tileiras import Tileiras
from tests.parser.prelude_support import assembled_ir, compile_body


def test_constants_fill_with_literal_and_associated_values(tileiras: Tileiras) -> None:
    body = """
    let low: Tile<f32, { [4, 64] }> = constant(f32::NEG_INFINITY, const_shape![4, 64]);
    let zero: Tile<f32, { [4, 64] }> = constant(0.0, const_shape![4, 64]);
    let big: Tile<f32, { [4, 64] }> = constant(-1.0e30f32, const_shape![4, 64]);
    z.store(max_tile(max_tile(low, big), t) + zero);
    """
    ir = assembled_ir(body, tileiras)
    assert "constant {values = [-inf]} : tile<4x64xf32>" in ir
    assert "constant {values = [0.0]} : tile<4x64xf32>" in ir
    assert "constant {values = [-1e+30]} : tile<4x64xf32>" in ir


def test_reshape_permute_transpose(tileiras: Tileiras) -> None:
    body = """
    let cube = t.reshape(const_shape![4, 8, 8]);
    let turned = permute(cube, const_array![0, 2, 1]);
    let flat = reshape(turned, const_shape![4, 64]);
    let back = flat.transpose().transpose();
    let same = permute(back, const_array![0, 1]);
    z.store(same);
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= permute %\d+ \{permutation = \[0, 2, 1\]\} : tile<4x8x8xf32>", ir)
    assert ir.count("{permutation = [1, 0]}") == 2
    assert ir.count("= permute ") == 3  # the identity permutation emits nothing


def test_relabels_and_no_op_reshapes_emit_nothing() -> None:
    body = """
    let one: Tile<f32, { [] }> = scalar_to_tile(s);
    let back: f32 = tile_to_scalar(one);
    z.store(back.broadcast(z.shape()) + t.reshape(const_shape![4, 64]));
    """
    result = compile_body(body, Stage.IR)
    assert result.ok, [d.message for d in result.diagnostics]
    (function,) = result.ir.functions  # type: ignore[attr-defined]
    ops = list(walk(function.body))
    reshapes = [op for op in ops if isinstance(op, Reshape)]
    assert [op.result.type.shape for op in reshapes] == [(1, 1)]  # only the broadcast's
    assert not [op for op in ops if isinstance(op, (Permute, Constant))]


def test_iota_cat_extract(tileiras: Tileiras) -> None:
    body = """
    let lanes: Tile<i32, { [32] }> = iota(const_shape![32]);
    let both: Tile<i32, { [64] }> = cat(lanes, lanes, 0);
    let rows: Tile<i32, { [4, 64] }> = both.reshape(const_shape![1, 64]).broadcast(z.shape());
    let half: Tile<f32, { [4, 32] }> = extract(t, [scalar_to_tile(0i32), scalar_to_tile(1i32)]);
    let wide = cat(half, half, 1i32);
    z.store(wide + convert_tile(rows));
    """
    ir = assembled_ir(body, tileiras)
    assert "= iota : tile<32xi32>" in ir
    assert re.search(r"= cat .*\{dim = 0\} : tile<64xi32>", ir)
    assert re.search(r"= cat .*\{dim = 1\} : tile<4x64xf32>", ir)
    assert re.search(r"= extract %\d+, indices\[%\d+, %\d+\] : tile<4x32xf32>", ir)
