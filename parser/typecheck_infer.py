"""Unsuffixed literals typed by a later use, as rustc types them.

`let i = 0; expect_i64(i);` makes `i` an `i64`, `let mut acc = 0.0; acc = acc + x_f32;` an
`f32`: a literal's type can come from a use after it. The checker is one forward pass, so
this works by rounds: a literal with nothing to go by takes Rust's fallback (`i32`, `f64`)
and the binding it flows into is *flexible*; where a flexible binding meets a type it
cannot be (an argument, an operand, an assignment, an `if` branch, an annotation), the
checker records what that binding must be instead (`LiteralHints`) and goes on. If a round
recorded anything, the body is checked again with those types as the bindings' expected
types, until a round adds nothing (or `MAX_ROUNDS`), and that last round's diagnostics are
the real ones. A hint that does not help is dropped, so the original mismatch is reported.
"""

from __future__ import annotations

from parser import ast_nodes as A
from parser.checker_surface import CheckerSurface
from parser.types import ArrayTy, ScalarTy, SemType, TileTy, TupleTy

MAX_ROUNDS = 8


class LiteralInference(CheckerSurface):
    def note_default(self, literal: A.Expr) -> None:
        """`literal` took Rust's fallback type: nothing in its context fixed it."""
        self.defaulted.add(literal)

    def pattern_hint(self, pattern: A.Pattern) -> SemType | None:
        """The expected type earlier rounds found for the bindings of `pattern`."""
        hints = self.inference.types
        if isinstance(pattern, A.IdentPattern):
            return hints.get(pattern)
        if isinstance(pattern, A.TuplePattern):
            parts = [self.pattern_hint(p) for p in pattern.elements]
            return TupleTy(tuple(parts)) if any(parts) else None  # type: ignore[arg-type]
        if isinstance(pattern, A.ArrayPattern):
            found = next((h for h in map(self.pattern_hint, pattern.elements) if h), None)
            return ArrayTy(found, len(pattern.elements)) if found is not None else None
        return None

    def mark_flexible(self, let: A.Let, bound: tuple) -> None:
        """The bindings of an unannotated `let` whose value a defaulted literal or a
        flexible binding feeds may still change type."""
        if let.type is not None or let.value is None or not self._literal_fed(let.value):
            return
        patterns = _ident_patterns(let.pattern)
        for var in bound:
            pattern = patterns.get(var.name)
            if pattern is not None:
                self.flexible[var.id] = pattern

    def try_flex(self, expr: A.Expr, found: SemType, wanted: SemType) -> bool:
        """Whether the mismatch of `expr` (`found`, where `wanted` is needed) is left to
        the next round: the flexible bindings it comes from get `wanted`'s parts."""
        if not _liftable(found, wanted):
            return False
        hints: dict[A.IdentPattern, SemType] = {}
        if not self._flex_hints(expr, wanted, hints) or not hints:
            return False
        return self.inference.add(hints)

    def _flex_hints(
        self, expr: A.Expr, wanted: SemType, out: dict[A.IdentPattern, SemType]
    ) -> bool:
        if isinstance(expr, (A.IntLit, A.FloatLit)):
            return expr.suffix is None
        if isinstance(expr, A.PathExpr):
            var = self.facts.names.get(expr)
            pattern = self.flexible.get(var.id) if var is not None else None
            if pattern is not None:
                out[pattern] = wanted
            return pattern is not None
        if isinstance(expr, A.Binary) and expr.op in ("+", "-", "*", "/", "%"):
            results = [self._flex_hints(e, wanted, out) for e in (expr.lhs, expr.rhs)]
            return any(results)
        if isinstance(expr, A.Unary) and expr.op == "-":
            return self._flex_hints(expr.operand, wanted, out)
        return self._flex_container(expr, wanted, out)

    def _flex_container(
        self, expr: A.Expr, wanted: SemType, out: dict[A.IdentPattern, SemType]
    ) -> bool:
        base_ty = self.facts.expr_types.get(getattr(expr, "value", expr))
        if isinstance(expr, A.Index) and isinstance(base_ty, ArrayTy):
            return self._flex_hints(expr.value, ArrayTy(wanted, base_ty.length), out)
        if isinstance(expr, A.FieldAccess) and isinstance(base_ty, TupleTy):
            if not expr.name.isdigit() or int(expr.name) >= len(base_ty.elements):
                return False
            parts = list(base_ty.elements)
            parts[int(expr.name)] = wanted
            return self._flex_hints(expr.value, TupleTy(tuple(parts)), out)
        if isinstance(expr, (A.TupleExpr, A.ArrayExpr)):
            parts = _parts(wanted, len(expr.elements))
            if parts is None:
                return False
            results = [
                self._flex_hints(e, w, out) for e, w in zip(expr.elements, parts, strict=True)
            ]
            return any(results)
        if isinstance(expr, A.BlockExpr) and expr.block.tail is not None:
            return self._flex_hints(expr.block.tail, wanted, out)
        if isinstance(expr, A.IfExpr):
            branches = [expr.then_block.tail, _else_tail(expr)]
            return any([self._flex_hints(b, wanted, out) for b in branches if b is not None])
        return False

    def _literal_fed(self, expr: A.Expr) -> bool:
        """Whether a defaulted literal or a flexible binding occurs in `expr`."""
        stack: list[object] = [expr]
        while stack:
            node = stack.pop()
            if node in self.defaulted:
                return True
            if isinstance(node, A.PathExpr):
                var = self.facts.names.get(node)
                if var is not None and var.id in self.flexible:
                    return True
            elif isinstance(node, A.Node):
                stack.extend(v for v in vars(node).values() if isinstance(v, (A.Node, tuple)))
            elif isinstance(node, tuple):
                stack.extend(node)
        return False


def _ident_patterns(pattern: A.Pattern) -> dict[str, A.IdentPattern]:
    if isinstance(pattern, A.IdentPattern):
        return {pattern.name: pattern}
    out: dict[str, A.IdentPattern] = {}
    subs = pattern.elements if isinstance(pattern, (A.TuplePattern, A.ArrayPattern)) else ()
    for sub in subs:
        out.update(_ident_patterns(sub))
    return out


def _else_tail(node: A.IfExpr) -> A.Expr | None:
    branch = node.else_branch
    if isinstance(branch, A.Block):
        return branch.tail
    return branch


def _parts(ty: SemType, count: int) -> tuple[SemType, ...] | None:
    if isinstance(ty, TupleTy) and len(ty.elements) == count:
        return ty.elements
    if isinstance(ty, ArrayTy) and ty.length == count:
        return (ty.element,) * count
    return None


def _liftable(found: SemType, wanted: SemType) -> bool:
    """Whether a literal-fed `found` could have been `wanted` (an integer literal never
    becomes a float, nor a float an integer)."""
    if isinstance(found, ScalarTy) and isinstance(wanted, ScalarTy):
        return _same_kind(found, wanted)
    if isinstance(found, TileTy) and isinstance(wanted, TileTy):
        return found.shape == wanted.shape and _same_kind(found, wanted)
    if isinstance(found, ArrayTy) and isinstance(wanted, ArrayTy):
        return found.length == wanted.length and _liftable(found.element, wanted.element)
    if isinstance(found, TupleTy) and isinstance(wanted, TupleTy):
        return len(found.elements) == len(wanted.elements) and all(
            f == w or _liftable(f, w) for f, w in zip(found.elements, wanted.elements, strict=True)
        )
    return False


def _same_kind(found: ScalarTy | TileTy, wanted: ScalarTy | TileTy) -> bool:
    a, b = found.elem, wanted.elem
    return (a.is_float and b.is_float) or (a.is_integer and b.is_integer)
