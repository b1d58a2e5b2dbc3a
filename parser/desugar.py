"""Rewrites of the AST that keep a program's meaning but put it in a form the later passes
already handle.

`let x = if c { ..; return; } else { e };` evaluates `c` first and leaves the function
when it holds, so it means `if c { ..; return; }` followed by `let x = { e };`. The same
holds when such an `if` is the first element of a tuple or array (`(if c { return; } else
{ 1 }, 2)`), and with the branches swapped (the guard's condition is then `!c`). The guard
is then an ordinary early-return `if` (see `ast_nodes.early_return_guards`).
"""

from __future__ import annotations

from parser import ast_nodes as A


def hoist_diverging_ifs(statements: list[A.Stmt]) -> list[A.Stmt]:
    out: list[A.Stmt] = []
    for statement in statements:
        split = _split_let(statement) if isinstance(statement, A.Let) else None
        out.extend(split if split is not None else (statement,))
    return out


def _split_let(let: A.Let) -> tuple[A.Stmt, A.Stmt] | None:
    value = let.value
    if isinstance(value, A.IfExpr):
        parts = _guard_and_value(value)
        if parts is None:
            return None
        guard, rest = parts
        return guard, A.Let(let.span, let.pattern, let.type, rest)
    if isinstance(value, (A.TupleExpr, A.ArrayExpr)) and value.elements:
        first = value.elements[0]
        parts = _guard_and_value(first) if isinstance(first, A.IfExpr) else None
        if parts is None:
            return None
        guard, rest = parts
        rebuilt = type(value)(value.span, (rest, *value.elements[1:]))
        return guard, A.Let(let.span, let.pattern, let.type, rebuilt)
    return None


def _guard_and_value(node: A.IfExpr) -> tuple[A.ExprStmt, A.Expr] | None:
    """`if c { ..; return; } else { e }` as (`if c { ..; return; }`, `{ e }`)."""
    other = node.else_branch
    if not isinstance(other, A.Block):
        return None
    if _diverges(node.then_block) and not _diverges(other):
        guard = A.IfExpr(node.span, node.condition, _ended(node.then_block), None)
        return A.ExprStmt(node.span, guard, True), A.BlockExpr(other.span, other)
    if _diverges(other) and not _diverges(node.then_block):
        negated = A.Unary(node.condition.span, "!", node.condition)
        guard = A.IfExpr(node.span, negated, _ended(other), None)
        then = node.then_block
        return A.ExprStmt(node.span, guard, True), A.BlockExpr(then.span, then)
    return None


def _diverges(block: A.Block) -> bool:
    """A block that ends with a bare `return` (and so has no value)."""
    if isinstance(block.tail, A.ReturnExpr):
        return block.tail.value is None
    if block.tail is not None or not block.statements:
        return False
    last = block.statements[-1]
    return (
        isinstance(last, A.ExprStmt)
        and isinstance(last.expr, A.ReturnExpr)
        and last.expr.value is None
    )


def _ended(block: A.Block) -> A.Block:
    """A diverging block with its final `return` as a statement (`return;`)."""
    if block.tail is None:
        return block
    final = A.ExprStmt(block.tail.span, block.tail, True)
    return A.Block(block.span, (*block.statements, final), None)
