"""Raw view access: `load_view_tko(&p, idx, ordering, scope, latency, tma)` (a load with
explicit memory ordering and optimization hints, no bounds check), `p.load_pipelined::<L>
(idx)` (a partition load with a latency hint), and `get_shape_dim(shape, i)`.

Latencies are compile-time integers in 1..=10 (the range tileiras accepts); the checker
records them in the facts for lowering: `Some(n)` under the `Some(..)` argument, a
turbofish `L` under its generic argument.
"""

from __future__ import annotations

from parser import ast_nodes as A
from parser import messages
from parser.prelude.common import I32, const_int_arg, generic_args, marker_arg
from parser.prelude.spec import CallTyper, Intrinsic, Receiver
from parser.prelude.tensors import index_arg
from parser.types import PartitionTy, ScalarTy, SemType, ShapeTy, TileTy

LOAD_ORDERINGS = ("Weak", "Relaxed", "Acquire")  # `ordering::LoadMode`
LATENCY_RANGE = range(1, 11)
_NO_HINT = {
    "load_view_tko": "pass `None` for no latency hint",
    "store_view_tko_mut": "pass `None` for no latency hint",
    "load_view_tko_mut": "pass `None` for no latency hint",
    "load_pipelined": "use `load` for a load without a latency hint",
}


def _read_partition(call: CallTyper, fn: str) -> PartitionTy | None:
    """Argument 0: a read-only `Partition` (a `PartitionMut` may race with other blocks)."""
    ty = call.arg(0)
    if ty is None:
        return None
    if not isinstance(ty, PartitionTy):
        call.report(messages.NOT_A_PARTITION.at(call.args[0].span, fn=fn, found=ty))
        return None
    if ty.mutable:
        call.report(messages.VIEW_LOAD_OF_OUTPUT_RACES.at(call.args[0].span, fn=fn))
        return None
    return ty


def _latency_value(call: CallTyper, expr: A.Expr, fn: str) -> int | None:
    """A latency: a compile-time integer in 1..=10."""
    checker = getattr(call, "checker", None)
    assert checker is not None
    ty = checker.expr(expr, I32)
    value = checker.fold(expr) if ty is not None else None
    if ty is None:
        return None
    if not isinstance(ty, ScalarTy) or not isinstance(value, int) or isinstance(value, bool):
        entry = (
            messages.LATENCY_NOT_CONSTANT
            if isinstance(ty, ScalarTy)
            else messages.LATENCY_NOT_AN_INTEGER
        )
        call.report(entry.at(expr.span, fn=fn, found=ty))
        return None
    if value not in LATENCY_RANGE:
        call.report(
            messages.LATENCY_OUT_OF_RANGE.at(expr.span, fn=fn, found=value, no_hint=_NO_HINT[fn])
        )
        return None
    return value


def latency_option(call: CallTyper, index: int, fn: str) -> bool:
    """`None` or `Some(n)`: an `Option<i32>` latency hint; `n` goes into the facts."""
    expr = call.args[index]
    if isinstance(expr, A.PathExpr) and expr.segments == ("None",):
        return True
    is_some = (
        isinstance(expr, A.Call)
        and isinstance(expr.function, A.PathExpr)
        and expr.function.segments == ("Some",)
        and len(expr.args) == 1
    )
    if not is_some:
        call.report(messages.LATENCY_NOT_AN_OPTION.at(expr.span, fn=fn))
        return False
    assert isinstance(expr, A.Call)
    value = _latency_value(call, expr.args[0], fn)
    if value is None:
        return False
    facts = getattr(getattr(call, "checker", None), "facts", None)
    assert facts is not None
    facts.consts[expr] = value
    return True


def _load_view_tko(call: CallTyper) -> SemType | None:
    fn = "load_view_tko"
    part = _read_partition(call, fn)
    if part is None or not index_arg(call, 1, part.rank):
        return None
    why = " (loads take `ordering::Weak`, `Relaxed` or `Acquire`)"
    ordering = marker_arg(call, 2, "ordering", fn, LOAD_ORDERINGS, why)
    scope = marker_arg(call, 3, "scope", fn) if ordering else None
    latency_ok = scope is not None and latency_option(call, 4, fn)
    tma = marker_arg(call, 5, "tma", fn) if latency_ok else None
    return None if tma is None else TileTy(part.elem, part.tile)


def _load_pipelined(call: CallTyper) -> SemType | None:
    fn = "load_pipelined"
    part = _read_partition(call, fn)
    if part is None or not index_arg(call, 1, part.rank):
        return None
    return TileTy(part.elem, part.tile) if pipelined_latency(call, fn) else None


def pipelined_latency(call: CallTyper, fn: str) -> bool:
    """The turbofish latency of `fn::<L>(..)`, recorded in the facts for lowering (keyed
    by the generic argument); False after reporting a bad one."""
    written = generic_args(call)
    if len(written) != 1:
        call.report(messages.LATENCY_GENERIC_COUNT.at(call.span, fn=fn, found=len(written)))
        return False
    arg = written[0]
    expr = (
        arg.value
        if isinstance(arg, A.ConstArg)
        else A.PathExpr(arg.span, getattr(arg.type, "segments", ("_",)))
    )
    value = _latency_value(call, expr, fn)
    if value is None:
        return False
    facts = getattr(getattr(call, "checker", None), "facts", None)
    assert facts is not None
    facts.consts[arg] = value  # type: ignore[index]  # keyed by the generic argument
    return True


def _get_shape_dim(call: CallTyper) -> SemType | None:
    shape = call.arg(0)
    if shape is not None and not isinstance(shape, ShapeTy):
        call.report(messages.NOT_A_SHAPE.at(call.args[0].span, found=shape))
        return None
    axis = const_int_arg(call, 1, "dimension", "get_shape_dim")
    if shape is None or axis is None:
        return None
    if not 0 <= axis < len(shape.dims):
        call.report(
            messages.SHAPE_DIM_OUT_OF_RANGE.at(
                call.args[1].span, axis=axis, shape=shape, rank=len(shape.dims)
            )
        )
        return None
    return I32


VIEW_INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic(
        "load_view_tko",
        "fn load_view_tko<E, R, O: ordering::LoadMode, Sc: scope::Mode, T: tma::Mode>("
        "view: &Partition<E, R>, index: [i32; N], ordering: O, scope: Sc, "
        "latency: Option<i32>, tma: T) -> Tile<E, R>",
        (6,),
        _load_view_tko,
        functions=("load_view_tko",),
    ),
    Intrinsic(
        "load_pipelined",
        "fn load_pipelined<const L: i32>(p: &Partition<E, R>, index: [i32; N]) -> Tile<E, R>",
        (2,),
        _load_pipelined,
        methods=("load_pipelined",),
        receiver=Receiver.PARTITION,
    ),
    Intrinsic(
        "get_shape_dim",
        "fn get_shape_dim<S>(shape: Shape<S>, dim: i32) -> i32",
        (2,),
        _get_shape_dim,
        functions=("get_shape_dim",),
    ),
)
