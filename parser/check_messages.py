"""Diagnostics the type checker's rule families share (kept out of their logic)."""

from __future__ import annotations

import difflib
import heapq

from parser import ast_nodes as A
from parser import messages
from parser.diagnostics import Diagnostic
from parser.spans import Span
from parser.types import Elem, SemType


def unsupported(span: Span, what: str) -> Diagnostic:
    return messages.UNSUPPORTED.at(span, what=what)


def storage_only(elem: Elem, what: str, span: Span) -> Diagnostic:
    """`elem` (tf32, fp8, fp4, i4, packed fp4 bytes) is storage: no arithmetic, comparison or
    math in Tile IR."""
    return messages.STORAGE_ONLY.at(span, what=what, elem=elem)


def unresolved(span: Span, name: str, kind: str, candidates: list[str]) -> Diagnostic:
    return messages.UNRESOLVED.at(
        span, suggestions=did_you_mean(name, candidates), kind=kind, name=name
    )


def mismatch(
    expected: SemType, found: SemType, span: Span, secondary: tuple[tuple[Span, str], ...] = ()
) -> Diagnostic:
    return messages.MISMATCHED_TYPES.at(span, secondary, expected=expected, found=found)


MAX_SUGGESTION_CANDIDATES = 16


def did_you_mean(name: str, candidates: list[str]) -> tuple[str, ...]:
    """A close name to suggest. difflib compares only the MAX_SUGGESTION_CANDIDATES names
    that share the longest prefix with `name` (then are closest in length): it is slow,
    and a file with a thousand functions and a thousand unknown names once took 100 s."""

    def nearness(candidate: str) -> tuple[int, int]:
        shared = next(
            (i for i, (a, b) in enumerate(zip(candidate, name, strict=False)) if a != b), None
        )
        if shared is None:
            shared = min(len(candidate), len(name))
        return -shared, abs(len(candidate) - len(name))

    nearest = heapq.nsmallest(MAX_SUGGESTION_CANDIDATES, set(candidates), key=nearness)
    close = difflib.get_close_matches(name, sorted(nearest), n=1)
    return (f"a similar name exists: `{close[0]}`",) if close else ()


_DESCRIPTIONS = {
    A.LoopExpr: "`loop`",
    A.ReturnExpr: "`return` before the end of the function",
    A.StructLit: "a struct literal",
    A.Closure: "a closure",
    A.Reference: "a `&` expression here",
    A.RangeExpr: "a range outside a `for` loop",
    A.BreakExpr: "`break`",
    A.ContinueExpr: "`continue` before the end of a loop body",
    A.StrLit: "a string literal here",
}


def describe(expr: A.Expr) -> str:
    return _DESCRIPTIONS.get(type(expr), "this expression")
