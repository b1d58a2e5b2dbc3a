"""Reductions and scans along one dimension: `reduce_sum/max/min/prod(t, dim)`,
`reduce(t, dim, identity, |acc, x| ..)`, `scan_sum(t, dim, reverse::X, identity)` and
`scan(t, dim, reverse::X, identity, |acc, x| ..)`.

A reduction removes `dim` from the shape. Rust infers the result from the annotation, which
cuTile's JIT then ignores; real kernels annotate a reduced `[N]` tile as `{[1]}` or a reduced
`[M, N]` tile as `{[M, 1]}` and go on using that shape. So an annotation with the same element
type and the same element count is honoured (lowered as a reshape of the reduced tile); any
other annotation is a type mismatch, reported by the `let`.
"""

from __future__ import annotations

from parser import ast_nodes as A
from parser import messages
from parser.check_messages import unsupported
from parser.prelude.common import (
    check_tile_dims,
    dim_arg,
    elem_kind_ok,
    element_count,
    expected_type,
    marker_arg,
    static_value,
    tile_arg,
)
from parser.prelude.spec import CallTyper, Intrinsic, TypingRule
from parser.typed_kernel import LocalVar
from parser.types import ScalarTy, SemType, TileTy, is_power_of_two

_FIXED = ("sum", "max", "min", "prod")


def reduced_type(call: CallTyper, source: TileTy, dim: int) -> TileTy:
    """`source` without `dim`, or the expected type when it only regroups those elements."""
    shape = source.shape[:dim] + source.shape[dim + 1 :]
    result = TileTy(source.elem, shape)
    expected = expected_type(call)
    if (
        isinstance(expected, TileTy)
        and expected.elem == source.elem
        and element_count(expected.shape) == element_count(shape)
        and all(is_power_of_two(d) for d in expected.shape)
    ):
        return expected
    return result


def _source_and_dim(call: CallTyper, fn: str) -> tuple[TileTy, int] | None:
    source = tile_arg(call, 0, fn)
    if source is None or not elem_kind_ok(call, 0, source, fn, "number"):
        return None
    dim = dim_arg(call, 1, source, fn)
    return None if dim is None else (source, dim)


def _fixed_reduce(fn: str) -> TypingRule:
    def rule(call: CallTyper) -> SemType | None:
        found = _source_and_dim(call, fn)
        return None if found is None else reduced_type(call, *found)

    return rule


def _identity(call: CallTyper, index: int, source: TileTy, fn: str) -> bool:
    scalar = ScalarTy(source.elem)
    ty = call.arg(index, scalar)
    if ty is None:
        return False
    if ty != scalar:
        call.report(
            messages.IDENTITY_TYPE_MISMATCH.at(
                call.args[index].span,
                ((call.args[0].span, f"this is `{source}`"),),
                fn=fn,
                expected=scalar,
                found=ty,
            )
        )
        return False
    if static_value(call, index) is None:
        call.report(messages.IDENTITY_NOT_CONSTANT.at(call.args[index].span, fn=fn))
        return False
    return True


def closure_params(closure: A.Closure) -> tuple[A.Pattern, ...] | None:
    params = closure.params
    if len(params) == 2 and all(isinstance(p, (A.IdentPattern, A.WildcardPattern)) for p in params):
        return params
    return None


def _combiner(call: CallTyper, index: int, source: TileTy, fn: str) -> bool:
    """`|acc, x| body`: both parameters and the body have the element type (scalars)."""
    closure = call.args[index]
    params = closure_params(closure) if isinstance(closure, A.Closure) else None
    if params is None:
        call.report(messages.COMBINER_NOT_TWO_PARAMETERS.at(closure.span, fn=fn))
        return False
    checker = getattr(call, "checker", None)
    if checker is None:
        call.report(unsupported(closure.span, "a closure here"))
        return False
    assert isinstance(closure, A.Closure)
    scalar = ScalarTy(source.elem)
    checker.scopes.append({})
    try:
        for param in params:
            if isinstance(param, A.IdentPattern):
                checker.declare(LocalVar(param.name, scalar, param.span))
        body = checker.expr(closure.body, scalar)
    finally:
        checker.scopes.pop()
    if body is not None and body != scalar:
        call.report(
            messages.COMBINER_RESULT_MISMATCH.at(
                closure.body.span, fn=fn, expected=scalar, found=body
            )
        )
        return False
    return body is not None


def _reduce(call: CallTyper) -> SemType | None:
    found = _source_and_dim(call, "reduce")
    if found is None:
        return None
    source, dim = found
    if not _identity(call, 2, source, "reduce") or not _combiner(call, 3, source, "reduce"):
        return None
    return reduced_type(call, source, dim)


def _scan(fn: str, closure: bool) -> TypingRule:
    def rule(call: CallTyper) -> SemType | None:
        found = _source_and_dim(call, fn)
        if found is None:
            return None
        source, _ = found
        if marker_arg(call, 2, "reverse", fn) is None or not _identity(call, 3, source, fn):
            return None
        if closure and not _combiner(call, 4, source, fn):
            return None
        if not check_tile_dims(call, source.shape, call.args[0].span, f"the tile of `{fn}`"):
            return None
        return source

    return rule


def _fixed_sig(kind: str) -> str:
    return (
        f"fn reduce_{kind}<E: ElementType, const S: [i32; N], const R: [i32; M]>(x: Tile<E, S>, "
        "dim: i32) -> Tile<E, R>"
    )


REDUCE_INTRINSICS: tuple[Intrinsic, ...] = (
    *(
        Intrinsic(
            f"reduce_{kind}",
            _fixed_sig(kind),
            (2,),
            _fixed_reduce(f"reduce_{kind}"),
            functions=(f"reduce_{kind}",),
        )
        for kind in _FIXED
    ),
    Intrinsic(
        "reduce",
        "fn reduce<E: ElementType, const S: [i32; N], F: Fn(E, E) -> E>(operand: Tile<E, S>, "
        "dim: i32, identity: E, f: F) -> Tile<E, R>",
        (4,),
        _reduce,
        functions=("reduce",),
    ),
    Intrinsic(
        "scan_sum",
        "fn scan_sum<E: ElementType, const S: [i32; N], R: reverse::Mode>(operand: Tile<E, S>, "
        "dim: i32, reverse: R, identity: E) -> Tile<E, S>",
        (4,),
        _scan("scan_sum", closure=False),
        functions=("scan_sum",),
    ),
    Intrinsic(
        "scan",
        "fn scan<E: ElementType, const S: [i32; N], R: reverse::Mode, F: Fn(E, E) -> E>(operand: "
        "Tile<E, S>, dim: i32, reverse: R, identity: E, f: F) -> Tile<E, S>",
        (5,),
        _scan("scan", closure=True),
        functions=("scan",),
    ),
)
