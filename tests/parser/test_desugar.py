"""`parser.desugar`: an `if` with a branch that returns, used as a `let` value (or first in
a tuple), becomes an early-return guard followed by the `let` of the other branch."""

from __future__ import annotations

from lowering.ir import ops_control as control
from lowering.ir import ops_memory as memory
from lowering.ir.core import walk
from lowering.pipeline import Stage
from parser import ast_nodes as A
from parser.render import render
from tests.parser.support import check, kernel, only_function

SIG = "z: &mut Tensor<f32, { [128] }>, flag: i32"


def entry_body(*lines: str) -> A.Block:
    text = kernel("\n".join(f"        {line}" for line in lines), sig=SIG, generics="")
    return only_function(text, "f").body


def test_a_returning_then_branch_becomes_a_guard() -> None:
    guard, let, store = entry_body(
        "let t = if flag > 0i32 { return; } else { z.load() };",
        "z.store(t);",
    ).statements
    assert isinstance(guard, A.ExprStmt) and isinstance(guard.expr, A.IfExpr)
    assert guard.expr.else_branch is None
    assert guard.expr.condition.span.text == "flag > 0i32"
    assert guard.expr in A.early_return_guards(A.Block(guard.span, (guard, let, store), None))
    assert isinstance(let, A.Let) and isinstance(let.value, A.BlockExpr)
    assert let.value.span.text == "{ z.load() }"


def test_a_returning_else_branch_guards_on_the_negated_condition() -> None:
    guard, let, _ = entry_body(
        "let t = if flag > 0i32 { z.load() } else { return };",
        "z.store(t);",
    ).statements
    assert isinstance(guard, A.ExprStmt) and isinstance(guard.expr, A.IfExpr)
    condition = guard.expr.condition
    assert isinstance(condition, A.Unary) and condition.op == "!"
    (final,) = guard.expr.then_block.statements  # `return` as a statement
    assert isinstance(final, A.ExprStmt) and isinstance(final.expr, A.ReturnExpr)
    assert isinstance(let, A.Let) and let.value.span.text == "{ z.load() }"  # type: ignore[union-attr]


def test_the_first_element_of_a_tuple_is_hoisted_too() -> None:
    guard, let, _ = entry_body(
        "let pair = (if flag > 0i32 { return; } else { 1i64 }, 2i64);",
        "z.store(z.load());",
    ).statements
    assert isinstance(guard, A.ExprStmt) and isinstance(guard.expr, A.IfExpr)
    assert isinstance(let, A.Let) and isinstance(let.value, A.TupleExpr)
    assert [e.span.text for e in let.value.elements] == ["{ 1i64 }", "2i64"]


def test_ifs_without_a_returning_branch_stay() -> None:
    (let, _) = entry_body(
        "let t = if flag > 0i32 { z.load() } else { z.load() };",
        "z.store(t);",
    ).statements
    assert isinstance(let, A.Let) and isinstance(let.value, A.IfExpr)


def test_the_rest_of_the_body_runs_only_when_the_guard_is_false() -> None:
    text = kernel(
        "        let t = if flag > 0i32 { return; } else { z.load() };\n        z.store(t);",
        sig=SIG,
        generics="",
    )
    result = check(text, "f", {}, stop_after=Stage.IR)
    assert result.ok, [render(d) for d in result.diagnostics]
    (function,) = result.ir.functions  # type: ignore[union-attr]
    (branch,) = [op for op in walk(function.body) if isinstance(op, control.If)]

    def stores(region: object) -> list[object]:
        blocks = region.blocks  # type: ignore[attr-defined]
        return [op for b in blocks for op in walk(b) if isinstance(op, memory.StoreViewTko)]

    assert len(stores(branch.else_region)) == 1
    assert stores(branch.then_region) == []
