"""The iterables of a persistent loop over a `MappedPartitionMut` `z`:

    z.iter_indices()                           every tile of z (its streamed axes)
    z.iter_indices_with(&w)                    the same indices, also accepted by `w.store`
    z.iter_indices_within([(start, len), ..])  a sub-range per axis (`len` -1: the rest)
    z.iter_indices_within_with(ranges, &w)     both

Typing only; the ranges and the shared grid are checked where they are lowered
(`lowering.lower_persistent`)."""

from __future__ import annotations

from parser import ast_nodes as A
from parser import messages
from parser.check_messages import unsupported
from parser.checker_surface import CheckerSurface
from parser.typed_kernel import LocalVar
from parser.types import ArrayTy, Elem, MappedTy, ScalarTy, TupleTy

I32 = ScalarTy(Elem.I32)
# method -> (position of the ranges argument, position of the partner argument)
PERSISTENT_ITERABLES: dict[str, tuple[int | None, int | None]] = {
    "iter_indices": (None, None),
    "iter_indices_with": (None, 0),
    "iter_indices_within": (0, None),
    "iter_indices_within_with": (0, 1),
}


def check_iterable_args(
    checker: CheckerSurface, iterable: A.MethodCall, mapped: MappedTy
) -> tuple[bool, LocalVar | None]:
    """Type the arguments of a persistent iterable: (whether they are fine, the partner)."""
    ranges_at, partner_at = PERSISTENT_ITERABLES[iterable.method]
    wanted = sum(p is not None for p in (ranges_at, partner_at))
    if len(iterable.args) != wanted:
        checker.report(
            messages.ITERABLE_ARG_COUNT.at(
                iterable.span,
                method=iterable.method,
                wanted=wanted,
                supplied=len(iterable.args),
            )
        )
        return False, None
    ok = ranges_at is None or _ranges(checker, iterable.args[ranges_at], mapped)
    partner = None
    if partner_at is not None:
        partner = _partner(checker, iterable.args[partner_at], mapped, iterable.method)
        ok = ok and partner is not None
    return ok, partner


def _ranges(checker: CheckerSurface, expr: A.Expr, mapped: MappedTy) -> bool:
    pair = TupleTy((I32, I32))
    expected = ArrayTy(pair, mapped.rank)
    found = checker.expr(expr, expected)
    if found is None:
        return False
    if found != expected:
        checker.report(
            messages.SUB_RANGE_PAIRS_MISMATCH.at(
                expr.span, rank=mapped.rank, expected=expected, found=found
            )
        )
        return False
    return True


def _partner(
    checker: CheckerSurface, expr: A.Expr, mapped: MappedTy, method: str
) -> LocalVar | None:
    target = expr.value if isinstance(expr, A.Reference) else expr
    found = checker.expr(expr, None)
    var = checker.facts.names.get(target) if isinstance(target, A.PathExpr) else None
    if found is None:
        return None
    if not isinstance(found, MappedTy) or var is None:
        checker.report(unsupported(expr.span, f"`{method}` with anything but a mapped output"))
        return None
    if (found.tile, found.map_shape) != (mapped.tile, mapped.map_shape):
        checker.report(
            messages.PARTNER_SHAPES_DIFFER.at(expr.span, method=method, mapped=mapped, found=found)
        )
        return None
    return var
