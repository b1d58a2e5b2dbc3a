"""Typing helpers shared by the math, compare, shape, reduce, mma and convert families.

Each helper checks one argument (or one fact about the call) and reports a rustc-style
diagnostic at the offending argument when it fails; it returns None after reporting, so a
rule can stop at the first problem without a cascade of follow-on errors.

Result types Rust infers from context come from the call site: the type the context
expects (`let y: Tile<f16, S> = convert_tile(x);`) and turbofish generic arguments
(`iota::<i32, S>(..)`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from parser import ast_nodes as A
from parser import messages
from parser.check_messages import storage_only
from parser.prelude.spec import CallTyper
from parser.types import (
    MARKER_KINDS,
    ArrayTy,
    Elem,
    MarkerTy,
    ScalarTy,
    SemType,
    ShapeTy,
    TileTy,
    associated_constant,
    is_power_of_two,
)

I32 = ScalarTy(Elem.I32)
Value = ScalarTy | TileTy


def shape_text(shape: Sequence[int]) -> str:
    return f"[{', '.join(map(str, shape))}]"


def markers_of(kind: str, variants: Sequence[str] | None = None) -> str:
    return ", ".join(f"`{kind}::{v}`" for v in variants or MARKER_KINDS[kind])


# ----------------------------------------------------------------------------- arguments


def tile_arg(call: CallTyper, index: int, fn: str, hint: SemType | None = None) -> TileTy | None:
    """A `Tile<E, S>` (scalars are not tiles in Rust: they need `scalar_to_tile`)."""
    ty = call.arg(index, hint)
    if ty is None or isinstance(ty, TileTy):
        return ty
    entry = messages.SCALAR_NOT_A_TILE if isinstance(ty, ScalarTy) else messages.NOT_A_TILE
    span = call.args[index].span
    call.report(entry.at(span, fn=fn, found=ty, text=span.text))
    return None


def scalar_arg(
    call: CallTyper, index: int, fn: str, hint: SemType | None = None
) -> ScalarTy | None:
    ty = call.arg(index, hint)
    if ty is None or isinstance(ty, ScalarTy):
        return ty
    entry = messages.NOT_A_SCALAR
    if isinstance(ty, TileTy) and not ty.shape:
        entry = messages.RANK_ZERO_TILE_NOT_A_SCALAR
    elif isinstance(ty, TileTy) and fn in ("min", "max"):
        entry = messages.TILE_NOT_A_SCALAR
    call.report(entry.at(call.args[index].span, fn=fn, found=ty))
    return None


def same_type_arg(
    call: CallTyper, index: int, first: Value, fn: str, first_index: int = 0
) -> Value | None:
    """Argument `index` must have exactly the type of argument `first_index` (no broadcast)."""
    ty = call.arg(index, first)
    if ty is None or ty == first:
        return ty
    entry, shapes = messages.OPERAND_TYPES_DIFFER, ("", "")
    if isinstance(ty, TileTy) and isinstance(first, TileTy) and ty.elem == first.elem:
        entry = messages.OPERAND_SHAPES_DIFFER
        shapes = (shape_text(first.shape), shape_text(ty.shape))
    call.report(
        entry.at(
            call.args[index].span,
            ((call.args[first_index].span, f"this is `{first}`"),),
            fn=fn,
            expected=first,
            found=ty,
            expected_shape=shapes[0],
            found_shape=shapes[1],
        )
    )
    return None


def elem_kind_ok(call: CallTyper, index: int, ty: Value, fn: str, kind: str) -> bool:
    """`kind` is "float", "integer" (bool excluded), "number" (not bool) or "bits"
    (integers and bool)."""
    elem = ty.elem
    if not elem.computes:
        call.report(storage_only(elem, f"`{fn}`", call.args[index].span))
        return False
    ok = {
        "float": elem.is_float,
        "integer": elem.is_integer,
        "number": elem is not Elem.BOOL,
        "bits": not elem.is_float,
    }[kind]
    if not ok:
        noun = _KIND_NOUNS[kind]
        article = "an" if noun[0] in "aeiou" else "a"
        call.report(
            messages.WRONG_ELEMENT_KIND.at(
                call.args[index].span, fn=fn, noun=noun, found=ty, elem=elem, article=article
            )
        )
    return ok


_KIND_NOUNS = {
    "float": "float",
    "integer": "integer",
    "number": "numeric",
    "bits": "integer or bool",
}


def marker_arg(
    call: CallTyper,
    index: int,
    kind: str,
    fn: str,
    allowed: Sequence[str] | None = None,
    why: str = "",
) -> str | None:
    """A `kind::Variant` mode marker; returns the variant. `allowed` narrows the variants
    (the rest are rejected with `why`)."""
    ty = call.arg(index)
    if ty is None:
        return None
    if not isinstance(ty, MarkerTy) or ty.kind != kind:
        call.report(
            messages.NOT_A_MARKER.at(
                call.args[index].span, fn=fn, kind=kind, found=ty, markers=markers_of(kind)
            )
        )
        return None
    if allowed is not None and ty.variant not in allowed:
        call.report(
            messages.UNSUPPORTED_MARKER.at(
                call.args[index].span,
                fn=fn,
                found=ty,
                why=why,
                markers=markers_of(kind, allowed),
            )
        )
        return None
    return ty.variant


def ftz_arg(call: CallTyper, index: int, elem: Elem, fn: str) -> str | None:
    """`ftz::Enabled` / `ftz::Disabled`; flushing subnormals exists for f32 only."""
    variant = marker_arg(call, index, "ftz", fn)
    if variant == "Enabled" and elem is not Elem.F32:
        call.report(messages.FTZ_NEEDS_F32.at(call.args[index].span, elem=elem))
        return None
    return variant


IEEE_ROUNDING = ("NearestEven", "Zero", "NegativeInf", "PositiveInf")


def rounding_arg(
    call: CallTyper, index: int, elem: Elem, fn: str, f32_extra: Sequence[str] = ()
) -> str | None:
    """An IEEE rounding marker; `f32_extra` (Approx, Full) are allowed on f32 only."""
    allowed = (*IEEE_ROUNDING, *(f32_extra if elem is Elem.F32 else ()))
    why = ""
    if f32_extra and elem is not Elem.F32:
        why = f" on `{elem}` ({' and '.join(f'`rounding::{m}`' for m in f32_extra)}: f32 only)"
    return marker_arg(call, index, "rounding", fn, allowed, why)


def const_int_arg(call: CallTyper, index: int, what: str, fn: str) -> int | None:
    """A compile-time integer (a literal, a const generic or a module const)."""
    ty = call.arg(index, I32)
    if ty is None:
        return None
    value = constant_arg(call, index)
    if isinstance(ty, ScalarTy) and isinstance(value, int) and not isinstance(value, bool):
        return value
    entry = (
        messages.ARGUMENT_NOT_CONSTANT
        if isinstance(ty, ScalarTy)
        else messages.ARGUMENT_NOT_AN_INTEGER
    )
    call.report(entry.at(call.args[index].span, what=what, fn=fn, found=ty))
    return None


def dim_arg(call: CallTyper, index: int, source: TileTy, fn: str) -> int | None:
    """A dimension of `source`, given as a compile-time integer."""
    dim = const_int_arg(call, index, "dimension argument", fn)
    if dim is None:
        return None
    if not 0 <= dim < len(source.shape):
        entry = messages.DIM_OUT_OF_RANGE if source.shape else messages.DIM_OF_RANK_ZERO
        rank = len(source.shape)
        call.report(
            entry.at(call.args[index].span, dim=dim, source=source, rank=rank, last=rank - 1)
        )
        return None
    return dim


def shape_arg(call: CallTyper, index: int, fn: str) -> tuple[int, ...] | None:
    """A static `Shape<{[..]}>` with power-of-two dimensions."""
    ty = call.arg(index)
    if ty is None:
        return None
    if not isinstance(ty, ShapeTy):
        call.report(messages.SHAPE_ARGUMENT_MISMATCH.at(call.args[index].span, fn=fn, found=ty))
        return None
    if not check_tile_dims(call, ty.dims, call.args[index].span, f"the shape of `{fn}`"):
        return None
    return ty.dims


def check_tile_dims(call: CallTyper, dims: Sequence[int], span: A.Span, what: str) -> bool:
    bad = [d for d in dims if not is_power_of_two(d)]
    if bad:
        call.report(
            messages.TILE_DIM_NOT_POWER_OF_TWO.at(
                span, dim=bad[0], what=what, shape=shape_text(dims)
            )
        )
        return False
    return True


def constant_arg(call: CallTyper, index: int) -> object:
    """`call.constant(index)`, plus the values the checker records but does not fold
    (`const_array![1, 0]`, `f32::NEG_INFINITY`)."""
    value = call.constant(index)
    if value is not None:
        return value
    facts = getattr(getattr(call, "checker", None), "facts", None)
    consts = getattr(facts, "consts", {})
    return consts.get(call.args[index])


def static_value(call: CallTyper, index: int) -> int | float | bool | None:
    """The compile-time value of a scalar argument: a literal, a constant, `f32::NEG_INFINITY`
    or `E::ZERO` (possibly negated), an immutable `let` of one, or None."""
    value = constant_arg(call, index)
    if isinstance(value, (int, float, bool)):
        return value
    checker = getattr(call, "checker", None)
    known = checker.fold(call.args[index], through_lets=True) if checker is not None else None
    if isinstance(known, (int, float, bool)):
        checker.facts.consts[call.args[index]] = known  # type: ignore[union-attr]
        return known
    expr, sign = call.args[index], 1
    if isinstance(expr, A.Unary) and expr.op == "-":
        expr, sign = expr.operand, -1
    ty = call.arg(index)
    if isinstance(expr, A.PathExpr) and len(expr.segments) == 2 and isinstance(ty, ScalarTy):
        found = associated_constant(ty.elem, expr.segments[1])
        if found is not None:
            return sign * found
    return None


# ----------------------------------------------------------------------------- context


def expected_type(call: CallTyper) -> SemType | None:
    """The type the context expects for this call's result (a `let` annotation, the
    parameter of an enclosing call), or None."""
    hint = getattr(call, "expected", None)
    return hint if isinstance(hint, (ScalarTy, TileTy, ShapeTy, ArrayTy)) else None


def generic_args(call: CallTyper) -> tuple[A.GenericArg, ...]:
    """The turbofish arguments of the call (`f::<A, B>(..)`, `x.m::<A>(..)`)."""
    return tuple(getattr(call, "generic_args", ()))


def turbofish_type(call: CallTyper, position: int) -> A.TypeExpr | None:
    """The `position`-th turbofish argument when it is a type other than `_`."""
    args = generic_args(call)
    if position >= len(args) or not isinstance(args[position], A.TypeArg):
        return None
    ty = args[position].type  # type: ignore[union-attr]
    return None if isinstance(ty, A.InferType) else ty


def resolve_elem(call: CallTyper, ty: A.TypeExpr) -> Elem | None:
    """A written element type (`f16`, a type generic), reported when it is not one."""
    checker = getattr(call, "checker", None)
    resolver = getattr(call, "resolver", None) or getattr(checker, "resolver", None)
    return None if resolver is None else resolver.element(ty)


def target_elem(call: CallTyper, fn: str, position: int, what: str) -> Elem | None:
    """A result element type that Rust infers from a turbofish (the `position`-th generic
    argument) or from the context."""
    written = turbofish_type(call, position)
    if written is not None:
        return resolve_elem(call, written)
    expected = expected_type(call)
    if isinstance(expected, (ScalarTy, TileTy)):
        return expected.elem
    call.report(messages.RESULT_ELEMENT_NOT_ANNOTATED.at(call.span, fn=fn, what=what))
    return None


def element_count(shape: Sequence[int]) -> int:
    return math.prod(shape)


def mutable_binding(call: CallTyper, parameter_type: str | None = None) -> bool:
    """E0596 unless argument 0 is bound `mut` (a `&mut self` method of a local); the help
    shows the `let mut` to write, or with `parameter_type` the parameter's `mut`."""
    binding = call.binding(0)
    if binding is None or getattr(binding, "mutable", True):
        return True
    name = getattr(binding, "name", "")
    if parameter_type is None:
        declaration = f"it `let mut {name} = ...`"
        secondary = ((binding.span, f"help: `mut {name}`"),)  # type: ignore[attr-defined]
    else:
        declaration, secondary = f"the parameter `mut {name}: {parameter_type}`", ()
    span = call.args[0].span
    call.report(messages.NOT_DECLARED_MUT.at(span, secondary, name=name, declaration=declaration))
    return False
