"""Type check a specialized entry: every expression gets a concrete `SemType`.

Shapes are checked after generics are bound (as cuTile's JIT does): binary operators
need identical types (no broadcasting, no tile-scalar mixing), calls resolve to prelude
intrinsics whose rules check their arguments, and names resolve to parameters or `let`s.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from parser import ast_nodes as A
from parser import codes
from parser.diagnostics import Diagnostic, DiagnosticSink, error
from parser.entry_signature import check_entry_signature, check_tile_shape
from parser.prelude import FUNCTIONS, METHODS, Intrinsic, receiver_kind
from parser.program import Program
from parser.spans import Span
from parser.type_eval import (
    ConstValue,
    GenericValue,
    NotConstant,
    TypeEnv,
    TypeResolver,
    eval_const,
)
from parser.typed_kernel import LocalVar, ResolvedCall, TypedKernel
from parser.types import (
    ELEM_BY_NAME,
    ERROR,
    UNIT,
    Elem,
    ScalarTy,
    SemType,
    ShapeTy,
    TileTy,
    TupleTy,
)

_ARITHMETIC = ("+", "-", "*", "/", "%")
_BITWISE = ("&", "|", "^", "<<", ">>")
_COMPARISON = ("==", "!=", "<", "<=", ">", ">=")
_LOGICAL = ("&&", "||")


def typecheck_entry(
    program: Program,
    function: A.Function,
    generics: dict[str, GenericValue],
    sink: DiagnosticSink,
) -> TypedKernel | None:
    env = TypeEnv(generics, _module_consts(program, generics, sink))
    resolver = TypeResolver(env, sink)
    signature = check_entry_signature(function, resolver, sink)
    if signature is None:
        return None
    checker = _Checker(program, resolver, sink)
    params = tuple(LocalVar(p.name, p.type, p.span, param_index=p.index) for p in signature.params)
    checker.scopes.append({p.name: p for p in params})
    errors_before = len(sink)
    checker.block(function.body, UNIT)
    if any(d.is_error for d in sink.items[errors_before:]):
        return None
    return TypedKernel(
        function,
        signature,
        generics,
        env.consts,
        params,
        checker.expr_types,
        checker.names,
        checker.lets,
        checker.calls,
    )


def _module_consts(
    program: Program, generics: dict[str, GenericValue], sink: DiagnosticSink
) -> dict[str, ConstValue]:
    consts: dict[str, ConstValue] = {}
    for module in program.modules:
        for item in module.consts:
            try:
                consts[item.name] = eval_const(item.value, TypeEnv(generics, consts))
            except NotConstant as exc:
                sink.add(
                    error(
                        codes.UNSUPPORTED_SYNTAX,
                        f"constant `{item.name}`: {exc.what}",
                        exc.span,
                        "not a compile-time constant",
                    )
                )
    return consts


@dataclass
class _CallSite:
    """The `CallTyper` handed to prelude typing rules."""

    checker: _Checker
    span: Span
    args: tuple[A.Expr, ...]
    known: dict[int, SemType | None] = field(default_factory=dict)

    def arg(self, index: int, expected: SemType | None = None) -> SemType | None:
        if index not in self.known:
            self.known[index] = self.checker.expr(self.args[index], expected)
        return self.known[index]

    def report(self, diagnostic: Diagnostic) -> None:
        self.checker.sink.add(diagnostic)


class _Checker:
    def __init__(self, program: Program, resolver: TypeResolver, sink: DiagnosticSink) -> None:
        self.program = program
        self.resolver = resolver
        self.sink = sink
        self.scopes: list[dict[str, LocalVar]] = []
        self.expr_types: dict[A.Expr, SemType] = {}
        self.names: dict[A.PathExpr, LocalVar] = {}
        self.lets: dict[A.Let, tuple[LocalVar, ...]] = {}
        self.calls: dict[A.Call | A.MethodCall, ResolvedCall] = {}
        self._negated_literals: set[A.IntLit] = set()
        self._handlers: dict[type, Callable[[Any, SemType | None], SemType | None]] = {
            A.IntLit: self._int_lit,
            A.FloatLit: self._float_lit,
            A.BoolLit: lambda e, _: ScalarTy(Elem.BOOL),
            A.PathExpr: self._path,
            A.Call: self._call,
            A.MethodCall: self._method_call,
            A.Binary: self._binary,
            A.Unary: self._unary,
            A.FieldAccess: self._field,
            A.TupleExpr: self._tuple,
            A.BlockExpr: lambda e, expected: self.block(e.block, expected),
            A.MacroCall: self._macro,
        }

    # --- statements

    def block(self, block: A.Block, expected: SemType | None) -> SemType | None:
        self.scopes.append({})
        try:
            for statement in block.statements:
                self._statement(statement)
            if block.tail is None:
                return UNIT
            return self.expr(block.tail, expected)
        finally:
            self.scopes.pop()

    def _statement(self, statement: A.Stmt) -> None:
        if isinstance(statement, A.Let):
            self._let(statement)
        elif isinstance(statement, A.ExprStmt):
            self.expr(statement.expr, None)
        else:
            self._unsupported(statement.span, "a `const` item inside a kernel body")

    def _let(self, let: A.Let) -> None:
        """Type a `let`; on failure its names are still bound (poisoned) so that later
        uses do not report a second, misleading error."""
        bound = self._let_type(let)
        if bound is None:
            self._poison(let.pattern)
            return
        self.lets[let] = self._bind(let.pattern, bound)

    def _let_type(self, let: A.Let) -> SemType | None:
        annotated = self.resolver.resolve(let.type) if let.type is not None else None
        if let.type is not None and annotated is None:
            return None
        if isinstance(annotated, TileTy) and not check_tile_shape(
            annotated.shape, let.type.span if let.type else let.span, "this tile", self.sink
        ):
            return None
        if let.value is None:
            self._unsupported(let.span, "a `let` without a value")
            return None
        value_ty = self.expr(let.value, annotated)
        if value_ty is None:
            return None
        if annotated is not None and annotated != value_ty:
            secondary = ((let.type.span, "expected due to this"),) if let.type else ()
            self.sink.add(_mismatch(annotated, value_ty, let.value.span, secondary))
            return None
        return annotated or value_ty

    def _poison(self, pattern: A.Pattern) -> None:
        if isinstance(pattern, A.IdentPattern):
            self.scopes[-1][pattern.name] = LocalVar(pattern.name, ERROR, pattern.span)
        elif isinstance(pattern, A.TuplePattern):
            for sub in pattern.elements:
                self._poison(sub)

    def _bind(self, pattern: A.Pattern, ty: SemType) -> tuple[LocalVar, ...]:
        if isinstance(pattern, A.IdentPattern):
            var = LocalVar(pattern.name, ty, pattern.span, pattern.mutable)
            self.scopes[-1][pattern.name] = var
            return (var,)
        if isinstance(pattern, A.TuplePattern):
            if not isinstance(ty, TupleTy) or len(ty.elements) != len(pattern.elements):
                self.sink.add(
                    error(
                        codes.MISMATCHED_TYPES,
                        f"mismatched types: this pattern cannot match `{ty}`",
                        pattern.span,
                        f"expected a pattern for `{ty}`",
                    )
                )
                return ()
            out: tuple[LocalVar, ...] = ()
            for sub, sub_ty in zip(pattern.elements, ty.elements, strict=False):
                out += self._bind(sub, sub_ty)
            return out
        return ()

    # --- expressions

    def expr(self, expr: A.Expr, expected: SemType | None) -> SemType | None:
        handler = self._handlers.get(type(expr))
        if handler is None:
            self._unsupported(expr.span, _describe(expr))
            return None
        ty = handler(expr, expected)
        if ty is not None:
            self.expr_types[expr] = ty
        return ty

    def _int_lit(self, lit: A.IntLit, expected: SemType | None) -> SemType | None:
        if lit.suffix in ("usize", "isize"):
            ty = ScalarTy(Elem.I64 if lit.suffix == "isize" else Elem.U64)
        elif lit.suffix is not None:
            ty = ScalarTy(ELEM_BY_NAME[lit.suffix])
        elif isinstance(expected, ScalarTy) and expected.elem.is_integer:
            ty = expected
        else:
            ty = ScalarTy(Elem.I32)
        if not _fits(lit.value, ty.elem, self._negated(lit)):
            self.sink.add(
                error(
                    codes.LITERAL_OUT_OF_RANGE,
                    f"literal out of range for `{ty.elem}`",
                    lit.span,
                    f"does not fit in `{ty.elem}`",
                )
            )
            return None
        return ty

    def _negated(self, lit: A.IntLit) -> bool:
        return lit in self._negated_literals

    def _float_lit(self, lit: A.FloatLit, expected: SemType | None) -> SemType | None:
        if lit.suffix is not None:
            return ScalarTy(ELEM_BY_NAME[lit.suffix])
        if isinstance(expected, ScalarTy) and expected.elem.is_float:
            return expected
        self.sink.add(
            error(
                codes.TYPE_ANNOTATION_NEEDED,
                "cannot infer the type of this float literal",
                lit.span,
                "add a suffix such as `f32`",
                help=(f"write `{lit.span.text}f32`",),
            )
        )
        return None

    def _path(self, path: A.PathExpr, expected: SemType | None) -> SemType | None:
        if len(path.segments) == 1:
            var = self._lookup(path.name)
            if var is not None:
                self.names[path] = var
                return None if var.type is ERROR else var.type
            generic = self.resolver.env.generics.get(path.name)
            const = self.resolver.env.consts.get(path.name)
            if isinstance(generic, int) and not isinstance(generic, bool):
                return ScalarTy(Elem.I32)
            if isinstance(generic, bool) or isinstance(const, bool):
                return ScalarTy(Elem.BOOL)
            if isinstance(const, int):
                return ScalarTy(Elem.I32)
        self._unresolved(path.span, path.span.text, "value", self._visible_names())
        return None

    def _lookup(self, name: str) -> LocalVar | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def _visible_names(self) -> list[str]:
        return [n for scope in self.scopes for n in scope]

    def _call(self, call: A.Call, expected: SemType | None) -> SemType | None:
        if not isinstance(call.function, A.PathExpr):
            self._unsupported(call.function.span, "calling this expression")
            return None
        name = call.function.name
        intrinsic = FUNCTIONS.get(name)
        if intrinsic is None:
            if self.program.functions_named(name):
                self._unsupported(call.span, f"calling the device function `{name}`")
            else:
                self._unresolved(call.function.span, name, "function", list(FUNCTIONS))
            return None
        return self._apply(intrinsic, call, call.args, call.function.span)

    def _method_call(self, call: A.MethodCall, expected: SemType | None) -> SemType | None:
        receiver_ty = self.expr(call.receiver, None)
        if receiver_ty is None:
            return None
        kind = receiver_kind(receiver_ty)
        intrinsic = METHODS.get((kind, call.method)) if kind is not None else None
        if intrinsic is None:
            names = [m for (k, m) in METHODS if k == kind]
            self.sink.add(
                error(
                    codes.UNKNOWN_METHOD,
                    f"no method named `{call.method}` found for `{receiver_ty}`",
                    call.method_span,
                    "method not found",
                    help=_did_you_mean(call.method, names),
                )
            )
            return None
        site = _CallSite(self, call.span, (call.receiver, *call.args), {0: receiver_ty})
        return self._apply(intrinsic, call, site.args, call.method_span, site)

    def _apply(
        self,
        intrinsic: Intrinsic,
        call: A.Call | A.MethodCall,
        args: tuple[A.Expr, ...],
        name_span: Span,
        site: _CallSite | None = None,
    ) -> SemType | None:
        if len(args) != intrinsic.arity:
            offset = 1 if isinstance(call, A.MethodCall) else 0
            self.sink.add(
                error(
                    codes.WRONG_ARG_COUNT,
                    f"this function takes {intrinsic.arity - offset} argument(s) but "
                    f"{len(args) - offset} were supplied",
                    call.span,
                    "wrong number of arguments",
                    notes=(f"signature: `{intrinsic.signature}`",),
                )
            )
            return None
        if intrinsic.rule is None:
            self._unsupported(name_span, f"`{name_span.text}`")
            return None
        site = site or _CallSite(self, call.span, args)
        result = intrinsic.rule(site)
        if result is not None:
            self.calls[call] = ResolvedCall(intrinsic.id, args)
        return result

    def _binary(self, binary: A.Binary, expected: SemType | None) -> SemType | None:
        lhs_first = not _is_literal(binary.lhs)
        first, second = (binary.lhs, binary.rhs) if lhs_first else (binary.rhs, binary.lhs)
        operand_hint = expected if binary.op in _ARITHMETIC + _BITWISE else None
        first_ty = self.expr(first, operand_hint)
        second_ty = self.expr(second, first_ty)
        if first_ty is None or second_ty is None:
            return None
        lhs_ty, rhs_ty = (first_ty, second_ty) if lhs_first else (second_ty, first_ty)
        if lhs_ty != rhs_ty:
            self.sink.add(
                error(
                    codes.MISMATCHED_TYPES,
                    f"mismatched types: `{binary.op}` needs operands of the same type, found "
                    f"`{lhs_ty}` and `{rhs_ty}`",
                    binary.span,
                    "operands differ",
                    secondary=((binary.lhs.span, f"`{lhs_ty}`"), (binary.rhs.span, f"`{rhs_ty}`")),
                    notes=("cuTile has no implicit broadcasting and no tile-scalar operators",),
                    help=(
                        "broadcast explicitly: `s.broadcast(t.shape())`, or convert with "
                        "`convert_tile`",
                    ),
                )
            )
            return None
        return self._binary_result(binary, lhs_ty)

    def _binary_result(self, binary: A.Binary, ty: SemType) -> SemType | None:
        elem = ty.elem if isinstance(ty, (ScalarTy, TileTy)) else None
        op = binary.op
        valid = elem is not None and (
            (op in _ARITHMETIC and elem is not Elem.BOOL)
            or (op in _BITWISE and not elem.is_float)
            or (op in _COMPARISON and isinstance(ty, ScalarTy))
            or (op in _LOGICAL and elem is Elem.BOOL and isinstance(ty, ScalarTy))
        )
        if not valid:
            self.sink.add(
                error(
                    codes.INVALID_OPERAND,
                    f"cannot apply `{op}` to operands of type `{ty}`",
                    binary.span,
                    "invalid operands",
                    help=("compare tiles with `lt_tile`, `eq_tile`, ...",)
                    if op in _COMPARISON
                    else (),
                )
            )
            return None
        return ScalarTy(Elem.BOOL) if op in _COMPARISON + _LOGICAL else ty

    def _unary(self, unary: A.Unary, expected: SemType | None) -> SemType | None:
        if unary.op == "-" and isinstance(unary.operand, A.IntLit):
            self._negated_literals.add(unary.operand)
        if unary.op == "-":
            ty = self.expr(unary.operand, expected)
            elem = ty.elem if isinstance(ty, (ScalarTy, TileTy)) else None
            if elem is not None and (elem.is_float or elem.is_signed):
                return ty
            if ty is not None:
                self.sink.add(
                    error(
                        codes.INVALID_OPERAND,
                        f"cannot negate a value of type `{ty}`",
                        unary.span,
                        "invalid operand",
                    )
                )
            return None
        self._unsupported(unary.span, f"the unary operator `{unary.op}`")
        return None

    def _field(self, access: A.FieldAccess, expected: SemType | None) -> SemType | None:
        base = self.expr(access.value, None)
        if base is None:
            return None
        if isinstance(base, TupleTy) and access.name.isdigit():
            index = int(access.name)
            if index < len(base.elements):
                return base.elements[index]
        self.sink.add(
            error(
                codes.UNKNOWN_METHOD,
                f"no field `{access.name}` on type `{base}`",
                access.span,
                "unknown field",
            )
        )
        return None

    def _tuple(self, tup: A.TupleExpr, expected: SemType | None) -> SemType | None:
        hints = expected.elements if isinstance(expected, TupleTy) else ()
        parts = [
            self.expr(e, hints[i] if i < len(hints) else None) for i, e in enumerate(tup.elements)
        ]
        if any(p is None for p in parts):
            return None
        return TupleTy(tuple(p for p in parts if p is not None))

    def _macro(self, macro: A.MacroCall, expected: SemType | None) -> SemType | None:
        if macro.name != "const_shape":
            self._unsupported(macro.span, f"the macro `{macro.name}!`")
            return None
        try:
            dims = tuple(_as_int(eval_const(a, self.resolver.env), a) for a in macro.args)
        except NotConstant as exc:
            self.sink.add(
                error(
                    codes.GENERIC_ARGUMENT,
                    f"all arguments of `const_shape!` must be compile-time constants: {exc.what}",
                    exc.span,
                    "not constant",
                )
            )
            return None
        if len(dims) == 1 and isinstance(dims[0], tuple):
            return ShapeTy(dims[0])
        return ShapeTy(tuple(int(d) for d in dims))

    # --- reporting

    def _unsupported(self, span: Span, what: str) -> None:
        self.sink.add(
            error(
                codes.UNSUPPORTED_SYNTAX, f"{what} is not supported yet", span, "not supported here"
            )
        )

    def _unresolved(self, span: Span, name: str, kind: str, candidates: list[str]) -> None:
        self.sink.add(
            error(
                codes.UNRESOLVED_NAME,
                f"cannot find {kind} `{name}` in this scope",
                span,
                "not found in this scope",
                help=_did_you_mean(name, candidates),
            )
        )


def _as_int(value: ConstValue, expr: A.Expr) -> int | tuple[int, ...]:
    if isinstance(value, (int, tuple)) and not isinstance(value, bool):
        return value
    raise NotConstant(expr.span, "expected an integer")


def _fits(value: int, elem: Elem, negated: bool) -> bool:
    """Whether an integer literal (after an optional leading `-`) fits `elem`."""
    if elem.is_float or elem is Elem.BOOL:
        return True
    signed = elem.is_signed
    magnitude_limit = 2 ** (elem.bits - 1) if signed else 2**elem.bits - 1
    if negated:  # negating an unsigned value is reported by the `-` operator itself
        return not signed or value <= magnitude_limit
    return value <= (magnitude_limit - 1 if signed else magnitude_limit)


def _did_you_mean(name: str, candidates: list[str]) -> tuple[str, ...]:
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1)
    return (f"a similar name exists: `{close[0]}`",) if close else ()


def _is_literal(expr: A.Expr) -> bool:
    if isinstance(expr, A.Unary):
        return _is_literal(expr.operand)
    return isinstance(expr, (A.IntLit, A.FloatLit))


def _mismatch(
    expected: SemType, found: SemType, span: Span, secondary: tuple[tuple[Span, str], ...] = ()
) -> Diagnostic:
    return error(
        codes.MISMATCHED_TYPES,
        f"mismatched types: expected `{expected}`, found `{found}`",
        span,
        f"expected `{expected}`",
        secondary=secondary,
    )


def _describe(expr: A.Expr) -> str:
    names = {
        A.IfExpr: "an `if` expression",
        A.ForExpr: "a `for` loop",
        A.WhileExpr: "a `while` loop",
        A.LoopExpr: "a `loop`",
        A.ReturnExpr: "`return`",
        A.Assign: "assignment",
        A.Index: "indexing",
        A.Cast: "an `as` cast",
        A.ArrayExpr: "an array literal",
        A.StructLit: "a struct literal",
        A.Closure: "a closure",
        A.Reference: "a `&` expression",
        A.RangeExpr: "a range",
        A.BreakExpr: "`break`",
        A.ContinueExpr: "`continue`",
    }
    return names.get(type(expr), "this expression")
