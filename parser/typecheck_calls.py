"""Type rules for calls: prelude intrinsics (free functions and methods) and device
functions, which are inlined: each call is checked on its own, with that call's types.

Diagnostics inside an inlined body point at the callee's code and carry the call site.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from parser import ast_nodes as A
from parser import codes
from parser.check_messages import did_you_mean, mismatch, unresolved, unsupported
from parser.diagnostics import Diagnostic, Label, error
from parser.inline_budget import MAX_INLINE_DEPTH, over_budget, too_deep
from parser.prelude import FUNCTIONS, METHODS, Intrinsic, find_method, receiver_kind, receiver_kinds
from parser.spans import Span
from parser.type_eval import GenericValue, TypeEnv, TypeResolver
from parser.typed_kernel import InlinedCall, LocalVar, ResolvedCall, TypedBody
from parser.types import (
    DYNAMIC,
    SLICE,
    UNIT,
    ArrayTy,
    OptionTy,
    PointerTy,
    RefTy,
    SemType,
    TensorTy,
)
from parser.unify import Conflict, unify

if TYPE_CHECKING:
    from parser.typecheck import Checker


@dataclass
class CallSite:
    """The `CallTyper` handed to prelude typing rules."""

    checker: Checker
    span: Span
    args: tuple[A.Expr, ...]
    known: dict[int, SemType | None] = field(default_factory=dict)
    expected: SemType | None = None  # what the context wants the result to be
    generic_args: tuple[A.GenericArg, ...] = ()  # the turbofish, `f::<A, B>(..)`

    def arg(self, index: int, expected: SemType | None = None) -> SemType | None:
        if index not in self.known:
            self.known[index] = self.checker.expr(self.args[index], expected)
        return self.known[index]

    def constant(self, index: int) -> object:
        """The compile-time value of an argument (None when it is not constant)."""
        self.arg(index)
        value = self.checker.fold(self.args[index])
        if value is not None:  # lowering reads it from the facts
            self.checker.facts.consts[self.args[index]] = value
        return value

    def binding(self, index: int) -> LocalVar | None:
        self.arg(index)
        target = self.args[index]
        if isinstance(target, A.Reference):
            target = target.value
        return self.checker.facts.names.get(target) if isinstance(target, A.PathExpr) else None

    def report(self, diagnostic: Diagnostic) -> None:
        self.checker.report(diagnostic)


@dataclass
class InliningSink:
    """Forwards diagnostics from an inlined body, marking every span with the call site."""

    parent: Any
    call_span: Span
    items: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        labels = tuple(
            replace(label, span=label.span.inlined_within(self.call_span))
            for label in diagnostic.labels
        )
        marked = replace(diagnostic, labels=labels or (Label(self.call_span, "", True),))
        self.items.append(marked)
        self.parent.add(marked)

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self.items)

    def __iter__(self):
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


class CallRules:
    def call(self: Checker, call: A.Call, expected: SemType | None) -> SemType | None:
        if not isinstance(call.function, A.PathExpr):
            self.report(unsupported(call.function.span, "calling this expression"))
            return None
        name = call.function.name
        intrinsic = FUNCTIONS.get(name)
        if intrinsic is not None:
            site = CallSite(self, call.span, call.args, {}, expected, call.function.generic_args)
            return self.apply(intrinsic, call, call.args, call.function.span, site)
        candidates = self.program.functions_named(name)
        devices = [f for f in candidates if f.entry is None]
        if not devices:
            if candidates:
                self.report(
                    error(
                        codes.UNRESOLVED_NAME,
                        f"`{name}` is a kernel entry and cannot be called from a kernel",
                        call.function.span,
                        "an entry function",
                        help=("move the shared code into a device function",),
                    )
                )
                return None
            names = list(FUNCTIONS) + [f.name for m in self.program.modules for f in m.functions]
            self.report(unresolved(call.function.span, name, "function", names))
            return None
        local = [f for f in devices if f.module_path == self.module_path]
        if len(devices) > 1 and len(local) == 1:
            devices = local  # the caller's own module's function shadows the others
        if len(devices) > 1:
            places = ", ".join(f"`{f.qualified_name}`" for f in devices)
            self.report(
                error(
                    codes.DUPLICATE_DEFINITION,
                    f"`{name}` is defined more than once: {places}",
                    call.function.span,
                    "ambiguous call",
                    secondary=tuple((f.name_span, "defined here") for f in devices),
                    help=("rename one of them",),
                )
            )
            return None
        return self.inline(devices[0], call, expected)

    def method_call(self: Checker, call: A.MethodCall, expected: SemType | None) -> SemType | None:
        receiver_ty = self.expr(call.receiver, None)
        if receiver_ty is None:
            return None
        kind = receiver_kind(receiver_ty)
        intrinsic = find_method(kind, call.method) if kind is not None else None
        if intrinsic is None:
            kinds = receiver_kinds(kind) if kind is not None else ()
            names = [m for (k, m) in METHODS if k in kinds]
            self.report(
                error(
                    codes.UNKNOWN_METHOD,
                    f"no method named `{call.method}` found for `{receiver_ty}`",
                    call.method_span,
                    "method not found",
                    help=did_you_mean(call.method, names),
                )
            )
            return None
        site = CallSite(
            self,
            call.span,
            (call.receiver, *call.args),
            {0: receiver_ty},
            expected,
            call.generic_args,
        )
        return self.apply(intrinsic, call, site.args, call.method_span, site)

    def apply(
        self: Checker,
        intrinsic: Intrinsic,
        call: A.Call | A.MethodCall,
        args: tuple[A.Expr, ...],
        name_span: Span,
        site: CallSite | None = None,
    ) -> SemType | None:
        if len(args) not in intrinsic.arities:
            offset = 1 if isinstance(call, A.MethodCall) else 0
            wanted = " or ".join(str(n - offset) for n in intrinsic.arities)
            self.report(
                error(
                    codes.WRONG_ARG_COUNT,
                    f"this function takes {wanted} argument(s) but "
                    f"{len(args) - offset} were supplied",
                    call.span,
                    "wrong number of arguments",
                    notes=(f"signature: `{intrinsic.signature}`",),
                )
            )
            return None
        if intrinsic.rule is None:
            self.report(unsupported(name_span, f"`{name_span.text}`"))
            return None
        site = site or CallSite(self, call.span, args)
        result = intrinsic.rule(site)
        if result is not None:
            self.facts.calls[call] = ResolvedCall(intrinsic.id, args)
        return result

    # --- device functions

    def inline(
        self: Checker, function: A.Function, call: A.Call, expected: SemType | None
    ) -> SemType | None:
        if function.name in self.inline_stack:
            self.report(unsupported(call.span, f"a recursive call of `{function.name}`"))
            return None
        if self.budget.reported:  # a limit was hit: stop without more copies or reports
            return None
        if len(self.inline_stack) >= MAX_INLINE_DEPTH or not self.budget.charge(function):
            limit = too_deep if len(self.inline_stack) >= MAX_INLINE_DEPTH else over_budget
            self.report(limit(call.span, self.inline_stack, function.name))
            self.budget.reported = True
            return None
        if len(call.args) != len(function.params):
            self.report(
                error(
                    codes.WRONG_ARG_COUNT,
                    f"`{function.name}` takes {len(function.params)} argument(s) but "
                    f"{len(call.args)} were supplied",
                    call.span,
                    "wrong number of arguments",
                    secondary=((function.name_span, "defined here"),),
                )
            )
            return None
        arg_types = [self.expr(a, None) for a in call.args]
        if any(t is None for t in arg_types):
            return None
        generics = self._callee_generics(function, call, arg_types)
        if generics is None:
            return None
        return self._check_callee(function, call, arg_types, generics)

    def _callee_generics(
        self: Checker, function: A.Function, call: A.Call, arg_types: list[SemType | None]
    ) -> dict[str, GenericValue] | None:
        names = [g.name for g in function.generics]
        bound: dict[str, GenericValue] = {}
        explicit = call.function.generic_args if isinstance(call.function, A.PathExpr) else ()
        for param, arg in zip(function.generics, explicit, strict=False):
            value = self._explicit_generic(param, arg)
            if value is None:
                return None  # already reported
            bound[param.name] = value
        inferable = set(names) - set(bound)
        try:
            for param, ty in zip(function.params, arg_types, strict=True):
                assert ty is not None
                unify(param.type, ty, inferable, bound)
        except Conflict as exc:
            self.report(
                error(
                    codes.MISMATCHED_TYPES,
                    f"generic `{exc}` of `{function.name}` would need two different "
                    "values at this call",
                    call.span,
                    "conflicting arguments",
                )
            )
            return None
        missing = [n for n in names if n not in bound]
        if missing:
            self.report(
                error(
                    codes.TYPE_ANNOTATION_NEEDED,
                    f"cannot infer generic `{missing[0]}` of `{function.name}`",
                    call.span,
                    "cannot infer",
                    help=(f"give it explicitly: `{function.name}::<...>(..)`",),
                )
            )
            return None
        return bound

    def _explicit_generic(
        self: Checker, param: A.GenericParam, arg: A.GenericArg
    ) -> GenericValue | None:
        if isinstance(param, A.TypeParam) and isinstance(arg, A.TypeArg):
            return self.resolver.element(arg.type)
        value = self.fold(
            arg.value if isinstance(arg, A.ConstArg) else A.PathExpr(arg.span, arg.type.segments)  # type: ignore[union-attr]
        )
        if value is None or isinstance(value, float):
            self.report(
                error(
                    codes.GENERIC_ARGUMENT,
                    "expected a compile-time constant",
                    arg.span,
                    "not a constant",
                )
            )
            return None
        return value  # type: ignore[return-value]

    def _check_callee(
        self: Checker,
        function: A.Function,
        call: A.Call,
        arg_types: list[SemType | None],
        generics: dict[str, GenericValue],
    ) -> SemType | None:
        from parser.typecheck import Checker

        sink = InliningSink(self.sink, call.span)
        env = TypeEnv(generics, self.resolver.env.consts)
        resolver = TypeResolver(env, sink)  # type: ignore[arg-type]
        params: list[LocalVar] = []
        for param, arg, ty in zip(function.params, call.args, arg_types, strict=True):
            declared = resolver.resolve(param.type)
            assert ty is not None
            if declared is None:
                return None
            if not _compatible(declared, ty):
                self.report(
                    mismatch(
                        declared, ty, arg.span, ((param.type.span, "parameter declared here"),)
                    )
                )
                return None
            params.append(LocalVar(param.name, ty, param.span, param.mutable_binding))
        returns = resolver.resolve(function.return_type) if function.return_type else UNIT
        if returns is None:
            return None
        callee = Checker(
            self.program,
            resolver,
            sink,
            TypedBody(),
            (*self.inline_stack, function.name),
            module_path=function.module_path,
            budget=self.budget,
        )
        result = callee.check_function_body(function, tuple(params), returns, trailing=A.ReturnExpr)
        if sink.has_errors or result is None:
            return None
        if result != returns:
            tail = function.body.tail.span if function.body.tail else function.body.span
            sink.add(mismatch(returns, result, tail))
            return None
        self.facts.inlined[call] = InlinedCall(function, tuple(params), callee.facts, generics)
        # an `Option` result keeps whether it is `Some` (known at compile time), which the
        # declared type cannot say
        return result if isinstance(returns, OptionTy) else returns


def _compatible(declared: SemType, actual: SemType) -> bool:
    """Exact match, except that a `-1` dimension in a declared tensor accepts any extent,
    `&mut Tensor` may be passed where `&Tensor` is declared (and `*mut E` where
    `*const E` is), and any array where a slice `&[T]` is."""
    if declared == actual:
        return True
    if isinstance(declared, ArrayTy) and isinstance(actual, ArrayTy):
        return declared.length == SLICE and declared.element == actual.element
    if isinstance(declared, PointerTy) and isinstance(actual, PointerTy):
        return declared.elem == actual.elem and not declared.mutable
    if isinstance(declared, RefTy) and isinstance(actual, RefTy):
        if declared.mutable and not actual.mutable:
            return False
        d, a = declared.inner, actual.inner
        if isinstance(d, TensorTy) and isinstance(a, TensorTy):
            return (
                d.elem == a.elem
                and len(d.shape) == len(a.shape)
                and all(x in (DYNAMIC, y) for x, y in zip(d.shape, a.shape, strict=True))
            )
    return False
