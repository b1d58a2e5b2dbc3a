"""Type rules for calls: prelude intrinsics (free functions and methods) and device
functions, which are inlined: each call is checked on its own, with that call's types.

Diagnostics inside an inlined body point at the callee's code and carry the call site.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from parser import ast_nodes as A
from parser import messages
from parser.call_target import CallTarget, ClosureSite
from parser.check_messages import did_you_mean, mismatch, unresolved, unsupported
from parser.checker_surface import CheckerSurface
from parser.diagnostics import Diagnostic, DiagnosticSink, Label
from parser.inline_budget import MAX_INLINE_DEPTH, over_budget, too_deep
from parser.prelude import FUNCTIONS, METHODS, Intrinsic, find_method, receiver_kind, receiver_kinds
from parser.spans import Span
from parser.type_eval import TypeResolver
from parser.typed_kernel import InlinedCall, LocalVar, ResolvedCall
from parser.types import (
    DYNAMIC,
    SLICE,
    UNIT,
    ArrayTy,
    ClosureTy,
    GenericValue,
    OptionTy,
    PointerTy,
    RefTy,
    SemType,
    TensorTy,
)
from parser.unify import Conflict, unify


@dataclass
class CallSite:
    """The `CallTyper` handed to prelude typing rules."""

    checker: CheckerSurface
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
    """Forwards diagnostics from an inlined body, marking every span with the call site.
    A callee from another kernel module (`foreign`, its name) is reported as cuTile Rust
    reports it: at the call, with the place inside the callee as a secondary label."""

    parent: Any
    call_span: Span
    items: list[Diagnostic] = field(default_factory=list)
    foreign: str | None = None

    def add(self, diagnostic: Diagnostic) -> None:
        labels = tuple(
            replace(label, span=label.span.inlined_within(self.call_span))
            for label in diagnostic.labels
        )
        if self.foreign is not None and labels:
            at_call = Label(self.call_span, f"in this call of `{self.foreign}`", True)
            labels = (at_call, *(replace(label, primary=False) for label in labels))
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


class CallRules(CheckerSurface):
    def call(self, call: A.Call, expected: SemType | None) -> SemType | None:
        if not isinstance(call.function, A.PathExpr):
            self.report(unsupported(call.function.span, "calling this expression"))
            return None
        name = call.function.name
        local = self.lookup(name) if len(call.function.segments) == 1 else None
        if local is not None and isinstance(local.type, ClosureTy):
            self.facts.names[call.function] = local
            return self.call_closure(call, local.type, expected)
        built = self.tuple_struct_call(call)
        if built is not False:
            return built  # type: ignore[return-value]
        associated = self.associated_function(call)
        if associated is not None:
            return self.inline(associated, call, expected) if associated else None
        qualified = "::".join(call.function.segments[-2:])  # `Dim::new`
        intrinsic = FUNCTIONS.get(qualified, FUNCTIONS.get(name))
        if intrinsic is not None:
            site = CallSite(self, call.span, call.args, {}, expected, call.function.generic_args)
            return self.apply(intrinsic, call, call.args, call.function.span, site)
        candidates = self.program.functions_named(name)
        devices = [f for f in candidates if f.entry is None]
        if not devices:
            if candidates:
                self.report(messages.ENTRY_CALLED.at(call.function.span, name=name))
                return None
            names = list(FUNCTIONS) + [f.name for m in self.program.modules for f in m.functions]
            found = unresolved(call.function.span, name, "function", names)
            if call.function.segments[0] in ("super", "crate", "self", "std", "core"):
                found = replace(
                    found,
                    notes=(
                        f"`{call.function.span.text}` is not a kernel function: a kernel calls "
                        "only the cuTile prelude and functions of `#[cutile::module]` modules",
                    ),
                )
            self.report(found)
            return None
        local = [f for f in devices if f.module_path == self.module_path]
        if len(devices) > 1 and len(local) == 1:
            devices = local  # a name resolves in the caller's own module first
        if len(devices) > 1:
            places = ", ".join(f"`{f.qualified_name}`" for f in devices)
            self.report(
                messages.DEFINED_MORE_THAN_ONCE.at(
                    call.function.span,
                    tuple((f.name_span, "defined here") for f in devices),
                    name=name,
                    places=places,
                )
            )
            return None
        return self.inline(CallTarget(devices[0], call.args), call, expected)

    def method_call(self, call: A.MethodCall, expected: SemType | None) -> SemType | None:
        receiver_ty = self.expr(call.receiver, None)
        if receiver_ty is None:
            return None
        kind = receiver_kind(receiver_ty)
        intrinsic = find_method(kind, call.method) if kind is not None else None
        if intrinsic is None:
            target = self.user_method(call, receiver_ty)
            if target is not None:
                return self.inline(target, call, expected)
        if intrinsic is None:
            kinds = receiver_kinds(kind) if kind is not None else ()
            names = [m for (k, m) in METHODS if k in kinds]
            self.report(
                messages.NO_SUCH_METHOD.at(
                    call.method_span,
                    suggestions=did_you_mean(call.method, names),
                    method=call.method,
                    receiver=receiver_ty,
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
        self,
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
                messages.INTRINSIC_ARG_COUNT.at(
                    call.span,
                    wanted=wanted,
                    supplied=len(args) - offset,
                    signature=intrinsic.signature,
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
        self, target: CallTarget, call: A.Call | A.MethodCall, expected: SemType | None
    ) -> SemType | None:
        function = target.function
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
        if function.problems:  # unsupported syntax in the callee, reported where it is used
            sink = self._callee_sink(function, call)
            for problem in function.problems:
                sink.add(problem)
            return None
        if len(target.args) != len(function.params):
            offset = 1 if isinstance(call, A.MethodCall) else 0
            self.report(
                messages.FUNCTION_ARG_COUNT.at(
                    call.span,
                    ((function.name_span, "defined here"),),
                    function=function.name,
                    wanted=len(function.params) - offset,
                    supplied=len(target.args) - offset,
                )
            )
            return None
        arg_types = [self._argument(target, i) for i in range(len(target.args))]
        if any(t is None for t in arg_types):
            return None
        generics = self._callee_generics(target, call, arg_types)
        if generics is None:
            return None
        return self._check_callee(target, call, arg_types, generics)

    def _callee_sink(self, function: A.Function, call: A.Call | A.MethodCall) -> Any:
        foreign = function.module_path != self.module_path
        return InliningSink(
            self.sink, call.span, foreign=function.qualified_name if foreign else None
        )

    def _argument(self, target: CallTarget, index: int) -> SemType | None:
        """The type of one argument; a closure passed for an `F: Fn(..)` parameter is
        only carried into the callee (`ClosureTy`)."""
        if index in target.known:
            return target.known[index]
        arg = target.args[index]
        param = target.function.params[index]
        if isinstance(arg, A.Closure) and _is_closure_param(target.function, param.type):
            ty = ClosureTy(len(arg.params), self._closure_site(arg))
            self.facts.expr_types[arg] = ty
            return ty
        return self.expr(arg, self._declared_type(target, param))

    def _declared_type(self, target: CallTarget, param: A.Param) -> SemType | None:
        """A parameter's type when it does not depend on the callee's own generics (the
        expected type of its argument: `expect_f32(1.0)` makes the literal an `f32`)."""
        own = {g.name for g in target.function.generics}
        if param.name == "self" or _names_in(param.type) & own:
            return None
        env = replace(self.resolver.env, generics=target.generics, self_type=target.self_type)
        return TypeResolver(env, DiagnosticSink()).resolve(param.type)

    def _closure_site(self, closure: A.Closure) -> ClosureSite:
        params = tuple(
            A.Param(p.span, p.name if isinstance(p, A.IdentPattern) else "_", A.InferType(p.span))
            for p in closure.params
        )
        problems = tuple(
            unsupported(p.span, "this closure parameter pattern")
            for p in closure.params
            if not isinstance(p, (A.IdentPattern, A.WildcardPattern))
        )
        body = A.Block(closure.body.span, (), closure.body)
        function = A.Function(
            closure.span,
            "{closure}",
            closure.span,
            (),
            params,
            None,
            body,
            False,
            None,
            self.module_path,
            problems,
        )
        captured = [dict(scope) for scope in self.scopes]
        return ClosureSite(function, captured, self.resolver)

    def call_closure(
        self, call: A.Call, closure: ClosureTy, expected: SemType | None
    ) -> SemType | None:
        """`f(a, b)` where `f` is a closure argument: its body, checked with these
        argument types and the variables it captured where it was written."""
        site = closure.site
        assert isinstance(site, ClosureSite)
        function = site.function
        if function.problems or len(call.args) != len(function.params):
            for problem in function.problems:
                self.report(problem)
            if not function.problems:
                self.report(
                    messages.CLOSURE_ARG_COUNT.at(
                        call.span,
                        ((function.span, "closure defined here"),),
                        wanted=len(function.params),
                        supplied=len(call.args),
                    )
                )
            return None
        arg_types = [self.expr(a, None) for a in call.args]
        if any(t is None for t in arg_types):
            return None
        params = tuple(
            LocalVar(p.name, t, p.span)  # type: ignore[arg-type]
            for p, t in zip(function.params, arg_types, strict=True)
        )
        sink = InliningSink(self.sink, call.span)
        callee = self.callee_checker(function, site.resolver, sink)
        callee.scopes = [dict(scope) for scope in site.captured]
        result = callee.check_function_body(function, params, expected, trailing=A.ReturnExpr)
        if sink.has_errors or result is None:
            return None
        self.facts.inlined[call] = InlinedCall(function, params, callee.facts, {}, call.args)
        return result

    def _callee_generics(
        self,
        target: CallTarget,
        call: A.Call | A.MethodCall,
        arg_types: list[SemType | None],
    ) -> dict[str, GenericValue] | None:
        function = target.function
        names = [g.name for g in function.generics]
        bound: dict[str, GenericValue] = {}
        explicit = _turbofish(call)
        if explicit and not self._generic_count_ok(function, call, explicit):
            return None
        for param, arg in zip(function.generics, explicit, strict=False):
            if isinstance(arg, A.TypeArg) and arg.span.text == "_":
                continue  # `_`: inferred from the arguments
            value = self._explicit_generic(param, arg)
            if value is None:
                return None  # already reported
            bound[param.name] = value
        inferable = set(names) - set(bound)
        try:
            for param, ty in zip(function.params, arg_types, strict=True):
                assert ty is not None
                if param.name != "self":
                    unify(param.type, ty, inferable, bound)
        except Conflict as exc:
            self.report(
                messages.GENERIC_CONFLICT_AT_CALL.at(call.span, generic=exc, function=function.name)
            )
            return None
        missing = [n for n in names if n not in bound and not _is_closure_param(function, n)]
        if missing:
            self.report(
                messages.CANNOT_INFER_GENERIC.at(
                    call.span, generic=missing[0], function=function.name
                )
            )
            return None
        return {**target.generics, **bound}

    def _generic_count_ok(
        self,
        function: A.Function,
        call: A.Call | A.MethodCall,
        explicit: tuple[A.GenericArg, ...],
    ) -> bool:
        """E0107: a turbofish must give every generic parameter (or none)."""
        wanted = len(function.generics)
        if len(explicit) == wanted:
            return True
        name_span = call.method_span if isinstance(call, A.MethodCall) else call.function.span
        plural = "" if wanted == 1 else "s"
        given = len(explicit)
        self.report(
            messages.TURBOFISH_COUNT.at(
                name_span,
                (
                    (
                        function.name_span,
                        f"function defined here, with {wanted} generic parameter{plural}",
                    ),
                ),
                wanted=wanted,
                plural=plural,
                given=given,
                given_plural="" if given == 1 else "s",
                verb="was" if given == 1 else "were",
            )
        )
        return False

    def _explicit_generic(self, param: A.GenericParam, arg: A.GenericArg) -> GenericValue | None:
        if isinstance(param, A.TypeParam) and isinstance(arg, A.TypeArg):
            return self.resolver.element(arg.type)
        if isinstance(arg, A.ConstArg):
            value = self.fold(arg.value)
        elif isinstance(arg.type, A.PathType):  # a const's name parses as a type: `::<BM>`
            value = self.fold(A.PathExpr(arg.span, arg.type.segments))
        else:  # a type where a const goes: `::<&N>`, `::<[f32; 4]>`
            value = None
        if value is None or isinstance(value, float):
            self.report(messages.EXPECTED_A_CONSTANT.at(arg.span))
            return None
        return value  # type: ignore[return-value]

    def _check_callee(
        self,
        target: CallTarget,
        call: A.Call | A.MethodCall,
        arg_types: list[SemType | None],
        generics: dict[str, GenericValue],
    ) -> SemType | None:
        function = target.function
        sink = self._callee_sink(function, call)
        env = replace(self.resolver.env, generics=generics, self_type=target.self_type)
        resolver = TypeResolver(env, sink)  # type: ignore[arg-type]
        params: list[LocalVar] = []
        for param, arg, ty in zip(function.params, target.args, arg_types, strict=True):
            assert ty is not None
            if _is_closure_param(function, param.type):
                params.append(LocalVar(param.name, ty, param.span, param.mutable_binding))
                continue
            declared = resolver.resolve(param.type)
            if declared is None:
                return None
            if not _compatible(declared, ty, receiver=param.name == "self") and not (
                self.try_flex(arg, ty, declared)
            ):
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
        callee = self.callee_checker(function, resolver, sink)
        result = callee.check_function_body(function, tuple(params), returns, trailing=A.ReturnExpr)
        if sink.has_errors or result is None:
            return None
        if result != returns:
            tail = function.body.tail.span if function.body.tail else function.body.span
            sink.add(mismatch(returns, result, tail))
            return None
        self.facts.inlined[call] = InlinedCall(
            function, tuple(params), callee.facts, generics, target.args
        )
        # an `Option` result keeps whether it is `Some` (known at compile time), which the
        # declared type cannot say
        return result if isinstance(returns, OptionTy) else returns


def _names_in(node: object) -> set[str]:
    """Every name a written type mentions (path segments, also inside const arguments)."""
    names: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, (A.PathType, A.PathExpr)):
            names.update(item.segments)
        if isinstance(item, A.Node):
            stack.extend(v for v in vars(item).values() if isinstance(v, (A.Node, tuple)))
        elif isinstance(item, tuple):
            stack.extend(item)
    return names


def _turbofish(call: A.Call | A.MethodCall) -> tuple[A.GenericArg, ...]:
    if isinstance(call, A.MethodCall):
        return call.generic_args
    return call.function.generic_args if isinstance(call.function, A.PathExpr) else ()


def _is_closure_param(function: A.Function, name_or_type: str | A.TypeExpr) -> bool:
    """Whether a generic type parameter (or a parameter's written type) is bounded by
    `Fn`/`FnMut`/`FnOnce`: its argument is a closure."""
    name = name_or_type
    if not isinstance(name, str):
        if not (isinstance(name, A.PathType) and len(name.segments) == 1 and not name.args):
            return False
        name = name.name
    return any(
        isinstance(g, A.TypeParam)
        and g.name == name
        and any(b in ("Fn", "FnMut", "FnOnce") for b in g.bounds)
        for g in function.generics
    )


def _compatible(declared: SemType, actual: SemType, receiver: bool = False) -> bool:
    """Exact match, except that a `-1` dimension in a declared tensor accepts any extent,
    `&mut Tensor` may be passed where `&Tensor` is declared (and `*mut E` where
    `*const E` is), and any array where a slice `&[T]` is. A method receiver is
    referenced or dereferenced as needed (`&self` on a value, `self` on a reference)."""
    if declared == actual:
        return True
    if isinstance(declared, ArrayTy) and isinstance(actual, ArrayTy):
        return declared.length == SLICE and declared.element == actual.element
    if receiver:
        if isinstance(declared, RefTy) and not isinstance(actual, RefTy):
            return _compatible(declared.inner, actual)
        if isinstance(actual, RefTy) and not isinstance(declared, RefTy):
            return _compatible(declared, actual.inner)
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
