"""Rung 5: residual bounds checks hoisted to the preheader of the outermost loop they allow."""

from __future__ import annotations

import pytest

from lowering.ir.attributes import ComparisonPredicate
from lowering.ir.core import Block, Builder, Value, walk
from lowering.ir.ops_arith import AddI, MulI, SubI
from lowering.ir.ops_bits import OrI
from lowering.ir.ops_compare import CmpI
from lowering.ir.ops_control import For
from lowering.ir.ops_core import Constant
from lowering.ir.ops_debug import Assert
from lowering.ir.types import I32
from lowering.loop_frames import Affine
from lowering.pipeline import Stage
from lowering.preheader import affine_form
from parser import codes
from service.convert import contract_to_proto
from tests.lowering.kernels import compile_text

KERNEL = """
#[cutile::module]
mod k {{
    use cutile::core::*;
    #[cutile::entry({options})]
    fn f(z: &mut Tensor<f32, {{ [128] }}>, x: &Tensor<f32, {{ [-1] }}>, n: i32, i: i32) {{
        let p = x.partition(const_shape![128]);
        let mut acc = constant(0.0f32, const_shape![128]);
        {body}
        z.store(acc);
    }}
}}
"""


def _lower(body: str, options: str = ""):  # type: ignore[no-untyped-def]
    result = compile_text(KERNEL.format(options=options, body=body), stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    (function,) = result.ir.functions
    return function.body


def _placement(body: Block) -> tuple[int, int]:
    """(asserts before any loop, asserts inside some loop)."""
    top = sum(isinstance(op, Assert) for op in body.ops)
    inside = sum(
        isinstance(check, Assert)
        for op in body.ops
        if isinstance(op, For)
        for check in walk(op.body.block)
    )
    return top, inside


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("for j in 0..n { acc = acc + p.load([j]); }", id="induction-variable"),
        pytest.param("for j in 0..n { acc = acc + p.load([i]); }", id="loop-invariant"),
        pytest.param(
            "for j in 0..num_tiles(&p, 0) / 2 { acc = acc + p.load([2 * j + 1]); }", id="affine"
        ),
        pytest.param("for j in 0..n { acc = acc + p.load([j + 1]); }", id="iv-plus-one-fits"),
        pytest.param(
            "for a in 0..n { for j in 0..n { acc = acc + p.load([j]); } }", id="nested-climbs"
        ),
        pytest.param(
            "for a in 0..4 { for b in 0..n { for j in 0..8 { "
            "acc = acc + p.load([2 * a + j]); } } }",
            id="two-induction-variables",
        ),
    ],
)
def test_checks_that_may_leave_the_loop_go_before_the_outermost_loop(body: str) -> None:
    assert _placement(_lower(body)) == (1, 0)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("for j in (0..n).step_by(2) { acc = acc + p.load([j]); }", id="step-by"),
        pytest.param("for j in 0..n { if j > 3 { acc = acc + p.load([j]); } }", id="under-if"),
        pytest.param(
            "for j in 0..n { if j == 2 { continue; } acc = acc + p.load([j]); }", id="continue"
        ),
        pytest.param("for j in 0..n { acc = acc + p.load([j * 2]); }", id="may-wrap"),
        pytest.param("for j in 0..n { acc = acc + p.load([j + i]); }", id="unbounded-term"),
        pytest.param(
            "let mut m = 0i32; for j in 0..n { m = m + 1; acc = acc + p.load([m]); }",
            id="loop-carried",
        ),
        pytest.param(
            "let mut w = 0i32; for a in 0..n { while w < a { acc = acc + p.load([a]); w += 1; } }",
            id="inside-while",
        ),
    ],
)
def test_checks_that_must_run_every_iteration_stay_in_place(body: str) -> None:
    assert _placement(_lower(body)) == (0, 1)


def test_the_preheader_check_is_skipped_for_an_empty_loop() -> None:
    body = _lower("for j in 0..n { acc = acc + p.load([j]); }")
    (check,) = [op for op in body.ops if isinstance(op, Assert)]
    assert "checked before the loop" in check.message
    definitions = {r.id: op for op in walk(body) for r in op.results}
    guard = definitions[check.condition.id]
    assert isinstance(guard, OrI)
    empty = definitions[guard.lhs.id]
    assert isinstance(empty, CmpI) and empty.predicate is ComparisonPredicate.LE
    (loop,) = [op for op in body.ops if isinstance(op, For)]
    assert (empty.lhs, empty.rhs) == (loop.upper, loop.lower)  # upper <= lower: no iteration
    assert body.ops.index(check) < body.ops.index(loop)


def test_deny_in_kernel_checks_rejects_a_preheader_check_too() -> None:
    text = KERNEL.format(
        options="deny_in_kernel_checks = true",
        body="for j in 0..n { acc = acc + p.load([j]); }",
    )
    result = compile_text(text, stop_after=Stage.IR)
    (diagnostic,) = [d for d in result.diagnostics if d.is_error]
    assert diagnostic.code is codes.IN_KERNEL_CHECK_DENIED


def test_the_preheader_count_reaches_the_contract(tileiras) -> None:  # type: ignore[no-untyped-def]
    text = KERNEL.format(
        options="",
        body="for j in 0..n { acc = acc + p.load([j]); } acc = acc + p.load([i]);",
    )
    result = compile_text(text)
    assert result.ok, result.diagnostics
    safety = result.contract.safety
    assert (safety.checks_hoisted_to_preheader, safety.checks_in_place) == (1, 1)
    assert contract_to_proto(result.contract).safety.checks_hoisted_to_preheader == 1


def test_affine_forms_read_sums_constant_offsets_and_constant_factors() -> None:
    b = Builder()
    iv, other = b.value(I32), b.value(I32)

    def const(n: int) -> Value:
        return b.emit(Constant, result=I32, values=(n,)).result

    def op(kind: type, lhs: Value, rhs: Value) -> Value:
        return b.emit(kind, result=I32, lhs=lhs, rhs=rhs).result

    index = op(SubI, op(AddI, op(MulI, const(3), iv), other), const(2))  # 3*iv + other - 2
    assert affine_form(index, b.definitions) == Affine(((3, iv), (1, other)), -2)
    product = op(MulI, iv, other)  # not affine: a leaf of its own
    assert affine_form(product, b.definitions) == Affine(((1, product),), 0)
    negated = op(SubI, const(0), iv)  # a negative coefficient: a leaf too
    assert affine_form(negated, b.definitions) == Affine(((1, negated),), 0)
