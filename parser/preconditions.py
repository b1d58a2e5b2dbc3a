"""The entry option `preconditions = (dim(a, i) == dim(b, j), dim(t, k) % d == 0, ...)`.

Each precondition is a fact about the launch arguments that the host verifies before
launching and the compiler may then assume: equal extents discharge bounds checks, and
divisible extents and strides (`stride(t, k) % d == 0`) become `assume div_by` facts that
let tileiras pick aligned, vectorised or TMA memory paths. Parsed here into data; the
lowering and the contract use it.
"""

from __future__ import annotations

from dataclasses import dataclass

from parser import ast_nodes as A
from parser import messages
from parser.diagnostics import DiagnosticSink


@dataclass(frozen=True)
class SameExtent:
    """dim(a, i) == dim(b, j), as (param index, axis) pairs."""

    first: tuple[int, int]
    second: tuple[int, int]
    text: str


@dataclass(frozen=True)
class ExtentDivisible:
    """dim(t, k) % divisor == 0."""

    param: int
    axis: int
    divisor: int
    text: str


@dataclass(frozen=True)
class StrideDivisible:
    """stride(t, k) % divisor == 0 (in elements)."""

    param: int
    axis: int
    divisor: int
    text: str


Precondition = SameExtent | ExtentDivisible | StrideDivisible


MAX_DIVISOR = 1 << 30  # i32 extents and strides


def contradiction(condition: Precondition, extents: tuple[int | None, ...]) -> str | None:
    """Why `condition` can never hold (or cannot be assumed) for a tensor whose known extents
    are `extents` (None: dynamic); None when it can."""
    if isinstance(condition, SameExtent):
        return None
    divisor = condition.divisor
    if divisor > MAX_DIVISOR or divisor & (divisor - 1):
        return f"divisor {divisor} is not a power of two up to 2^30"
    if isinstance(condition, StrideDivisible):
        if condition.axis == len(extents) - 1 and divisor > 1:
            return "the last axis's stride is always 1"
        return None
    extent = extents[condition.axis]
    if extent is not None and extent % divisor:
        return f"axis {condition.axis} has the static extent {extent}"
    return None


# a tensor parameter's name -> (its index, its static extents, None where dynamic)
TensorParams = dict[str, tuple[int, tuple[int | None, ...]]]


def parse_preconditions(
    value: A.Expr, tensors: TensorParams, sink: DiagnosticSink
) -> tuple[Precondition, ...]:
    items = value.elements if isinstance(value, A.TupleExpr) else (value,)
    extents_of = dict(tensors.values())
    parsed = []
    for item in items:
        condition = _parse_one(item, tensors)
        problem = None
        if condition is not None and not isinstance(condition, SameExtent):
            problem = contradiction(condition, extents_of[condition.param])
        if problem is not None:
            sink.add(messages.PRECONDITION_NEVER_HOLDS.at(item.span, problem=problem))
            continue
        if condition is None:
            sink.add(messages.UNSUPPORTED_PRECONDITION.at(item.span))
            continue
        parsed.append(condition)
    return tuple(parsed)


def _parse_one(item: A.Expr, tensors: TensorParams) -> Precondition | None:
    if not (isinstance(item, A.Binary) and item.op == "=="):
        return None
    text = " ".join(item.span.text.split())
    lhs, rhs = _extent(item.lhs, tensors), _extent(item.rhs, tensors)
    if lhs is not None and rhs is not None:
        return SameExtent(lhs, rhs, text)
    remainder = item.lhs
    is_zero = isinstance(item.rhs, A.IntLit) and item.rhs.value == 0
    if is_zero and isinstance(remainder, A.Binary) and remainder.op == "%":
        divisor = remainder.rhs
        if not (isinstance(divisor, A.IntLit) and divisor.value > 0):
            return None
        extent = _extent(remainder.lhs, tensors)
        if extent is not None:
            return ExtentDivisible(extent[0], extent[1], divisor.value, text)
        stride = _extent(remainder.lhs, tensors, "stride")
        if stride is not None:
            return StrideDivisible(stride[0], stride[1], divisor.value, text)
    return None


def _extent(expr: A.Expr, tensors: TensorParams, function: str = "dim") -> tuple[int, int] | None:
    """`dim(x, 1)` (or `stride(x, 1)`) as (param index, axis), when x is a tensor and 1 is
    within its rank."""
    if not (isinstance(expr, A.Call) and isinstance(expr.function, A.PathExpr)):
        return None
    if expr.function.name != function or len(expr.args) != 2:
        return None
    name, axis = expr.args
    if not (isinstance(name, A.PathExpr) and isinstance(axis, A.IntLit)):
        return None
    tensor = tensors.get(name.name)
    if tensor is None or not 0 <= axis.value < len(tensor[1]):
        return None
    return tensor[0], axis.value
