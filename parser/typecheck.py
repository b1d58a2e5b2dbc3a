"""Type check a specialized entry: every expression gets a concrete `SemType`.

Shapes are checked after generics are bound (as cuTile's JIT does). The checker is one
pass split by rule family: operators and literals (`typecheck_ops`), control flow and
mutation (`typecheck_control`), calls and device-function inlining (`typecheck_calls`).
This module holds the driver, scopes, `let` and names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from parser import ast_nodes as A
from parser import messages
from parser.check_messages import describe, mismatch, unresolved, unsupported
from parser.checker_state import Frame, LiteralHints
from parser.diagnostics import Diagnostic, DiagnosticSink
from parser.entry_signature import check_entry_signature, check_tile_shape
from parser.inline_budget import InlineBudget
from parser.program import Program
from parser.statics import check_module_statics
from parser.type_eval import (
    I32_RANGE,
    ConstValue,
    GenericValue,
    NotConstant,
    TypeEnv,
    TypeResolver,
    dimension_out_of_range,
    eval_const,
)
from parser.typecheck_calls import CallRules
from parser.typecheck_control import ControlRules
from parser.typecheck_debug_and_literals import DEBUG_MACROS, DebugAndLiteralRules
from parser.typecheck_infer import MAX_ROUNDS, LiteralInference
from parser.typecheck_items import ItemRules
from parser.typecheck_memory import MemoryRules
from parser.typecheck_ops import OperatorRules
from parser.typed_kernel import LocalVar, TypedBody, TypedKernel
from parser.types import (
    ELEM_BY_NAME,
    ERROR,
    MARKER_KINDS,
    UNIT,
    ArrayTy,
    Elem,
    GatherScatterViewTy,
    MappedTy,
    MarkerTy,
    OptionTy,
    PartitionIndexTy,
    PartitionTy,
    RefTy,
    ScalarTy,
    SemType,
    ShapeTy,
    StridedViewTy,
    StructTy,
    TileTy,
    TupleTy,
    annotation_fits,
    associated_constant,
)

# Errors one entry's check reports before it stops, as clang's -ferror-limit: the work
# each error costs (suggestions, notes, rendering) stays bounded per compile.
MAX_ERRORS = 50


class TooManyErrors(Exception):
    """Raised by `Checker.report` at the MAX_ERRORS-th error; ends the entry's check."""


def typecheck_entry(
    program: Program,
    function: A.Function,
    generics: dict[str, GenericValue],
    sink: DiagnosticSink,
) -> TypedKernel | None:
    env = TypeEnv(generics, module_consts(program, generics, sink), items=program.items)
    resolver = TypeResolver(env, sink)
    signature = check_entry_signature(function, resolver, sink)
    if signature is None:
        return None
    module = next((m for m in program.modules if m.path == function.module_path), None)
    if module is not None:
        check_module_statics(program, module, env, sink)
    params = tuple(
        LocalVar(p.name, p.type, p.span, function.params[p.index].mutable_binding, p.index)
        for p in signature.params
    )
    hints = LiteralHints()
    for round_ in range(MAX_ROUNDS):  # see `typecheck_infer`: literals typed by later uses
        hints.final = round_ == MAX_ROUNDS - 1
        trial = DiagnosticSink()
        checker = Checker(
            program,
            TypeResolver(env, trial),
            trial,
            inference=hints,
            module_path=function.module_path,
        )
        try:
            checker.check_function_body(function, params, UNIT, trailing=A.ReturnExpr)
        except TooManyErrors:
            trial.add(_too_many_errors(function))
            break
        if not hints.added:
            break
        hints.added = False
    for diagnostic in trial:
        sink.add(diagnostic)
    if trial.has_errors:
        return None
    return TypedKernel(function, signature, generics, env.consts, params, checker.facts)


def _too_many_errors(function: A.Function) -> Diagnostic:
    return messages.TOO_MANY_ERRORS.at(function.name_span, function=function.name, limit=MAX_ERRORS)


def _small_index(name: str) -> bool:
    """A tuple field index worth reading (thousands of digits would not convert)."""
    return name.isascii() and name.isdigit() and len(name) < 10


def module_consts(
    program: Program, generics: dict[str, GenericValue], sink: DiagnosticSink
) -> dict[str, ConstValue]:
    consts: dict[str, ConstValue] = {}
    for module in program.modules:
        for item in module.consts:
            try:
                consts[item.name] = eval_const(item.value, TypeEnv(generics, consts))
            except NotConstant as exc:
                sink.add(messages.CONST_NOT_CONSTANT.at(exc.span, name=item.name, why=exc.what))
    return consts


@dataclass
class Checker(
    OperatorRules,
    ControlRules,
    CallRules,
    DebugAndLiteralRules,
    MemoryRules,
    ItemRules,
    LiteralInference,
):
    """Checks one body (the entry's, or one inlined call's) into `facts`."""

    program: Program
    resolver: TypeResolver
    sink: DiagnosticSink | Any
    facts: TypedBody = field(default_factory=TypedBody)
    inline_stack: tuple[str, ...] = ()
    budget: InlineBudget = field(default_factory=InlineBudget)  # shared by inlined bodies
    scopes: list[dict[str, LocalVar]] = field(default_factory=list)
    frames: list[Frame] = field(default_factory=list)
    var_depth: dict[int, int] = field(default_factory=dict)
    negated_literals: set[A.IntLit] = field(default_factory=set)
    inference: LiteralHints = field(default_factory=LiteralHints)  # shared with callees
    defaulted: set[A.Expr] = field(default_factory=set)  # literals of Rust's fallback type
    flexible: dict[int, A.IdentPattern] = field(default_factory=dict)  # var id -> binding
    module_path: tuple[str, ...] = ()  # the module of the function being checked

    def __post_init__(self) -> None:
        self._handlers: dict[type, Callable[[Any, SemType | None], SemType | None]] = {
            A.IntLit: self.int_literal,
            A.FloatLit: self.float_literal,
            A.BoolLit: lambda e, _: ScalarTy(Elem.BOOL),
            A.StrLit: self.string_literal,
            A.PathExpr: self._path,
            A.Call: self.call,
            A.MethodCall: self.method_call,
            A.Binary: self.binary,
            A.Unary: self.unary,
            A.Cast: self.cast,
            A.FieldAccess: self._field,
            A.Index: self._index,
            A.TupleExpr: self._tuple,
            A.ArrayExpr: self._array,
            A.BlockExpr: lambda e, expected: self.block(e.block, expected),
            A.MacroCall: self._macro,
            A.StructLit: self._struct_literal,
            A.ArrayRepeat: self._array_repeat,
            A.IfExpr: self.if_expr,
            A.ForExpr: self.for_loop,
            A.WhileExpr: self.while_loop,
            A.LoopExpr: self.loop,
            A.BreakExpr: self.break_or_continue,
            A.ContinueExpr: self.break_or_continue,
            A.Assign: self.assign,
            A.Reference: self._reference,
        }

    def callee_checker(
        self, function: A.Function, resolver: TypeResolver, sink: DiagnosticSink | Any
    ) -> Checker:
        return Checker(
            self.program,
            resolver,
            sink,
            TypedBody(),
            (*self.inline_stack, function.name),
            inference=self.inference,
            module_path=function.module_path,
            budget=self.budget,
        )

    def report(self, diagnostic: Diagnostic) -> None:
        self.sink.add(diagnostic)
        self.budget.errors += diagnostic.is_error
        if self.budget.errors >= MAX_ERRORS:
            raise TooManyErrors()

    # --- bodies, blocks and statements

    def check_function_body(
        self,
        function: A.Function,
        params: tuple[LocalVar, ...],
        expected: SemType | None,
        trailing: type,
    ) -> SemType | None:
        self.module_path = function.module_path
        self.scopes.append({})
        for param in params:
            self.declare(param)
        if not self.inline_stack:  # the entry: `if c { return; }` guards end it early
            self.facts.guards.update(A.early_return_guards(function.body))
        try:
            return self.block(function.body, expected, trailing=trailing)
        finally:
            self.scopes.pop()

    def block(
        self, block: A.Block, expected: SemType | None, trailing: type | None = None
    ) -> SemType | None:
        statements, tail = (
            A.split_trailing(block, trailing) if trailing else (block.statements, block.tail)
        )
        self.scopes.append({})
        try:
            for statement in statements:
                self._statement(statement)
            if tail is None:
                return UNIT
            return self.expr(tail, expected)
        finally:
            self.scopes.pop()

    def _statement(self, statement: A.Stmt) -> None:
        if isinstance(statement, A.Let):
            self._let(statement)
        elif isinstance(statement, A.ExprStmt):
            self.expr(statement.expr, None)
        else:
            self._const_item(statement)

    def _const_item(self, item: A.ConstItem) -> None:
        ty = self.resolver.resolve(item.type)
        try:
            value = eval_const(item.value, self._const_env())
        except NotConstant as exc:
            self.report(messages.CONST_NOT_CONSTANT.at(exc.span, name=item.name, why=exc.what))
            value = None
        if ty is not None and value is not None and not _const_fits(ty, value):
            shown = list(value) if isinstance(value, tuple) else value
            self.report(
                messages.CONST_VALUE_MISMATCH.at(
                    item.value.span, name=item.name, ty=ty, value=shown
                )
            )
        if ty is None or value is None or not _const_fits(ty, value):
            self.declare(LocalVar(item.name, ERROR, item.span))
            return
        self.declare(LocalVar(item.name, ty, item.span, const_value=value))

    def _let(self, let: A.Let) -> None:
        """Type a `let`; on failure its names are still bound (poisoned) so that later
        uses do not report a second, misleading error."""
        bound = self._let_type(let)
        if bound is None:
            self._poison(let.pattern)
            return
        pattern = let.pattern
        if isinstance(pattern, A.IdentPattern) and not pattern.mutable:
            known = self.fold(let.value) if isinstance(bound, ScalarTy) and let.value else None
            if known is not None:
                var = LocalVar(pattern.name, bound, pattern.span, known=known)
                self.facts.lets[let] = (self.declare(var),)
                self.mark_flexible(let, self.facts.lets[let])
                return
        self.facts.lets[let] = self._bind(pattern, bound)
        self.mark_flexible(let, self.facts.lets[let])

    def _let_type(self, let: A.Let) -> SemType | None:
        annotated = self.resolver.resolve(let.type) if let.type is not None else None
        if let.type is not None and annotated is None:
            return None
        if isinstance(annotated, TileTy) and not check_tile_shape(
            annotated.shape, let.type.span if let.type else let.span, "this tile", self.sink
        ):
            return None
        if let.value is None:
            self.report(unsupported(let.span, "a `let` without a value"))
            return None
        hint = self.pattern_hint(let.pattern) if let.type is None else None
        value_ty = self.expr(let.value, annotated or hint)
        if value_ty is None:
            return None
        if hint is not None:  # what a later use needs (an earlier round found it)
            wanted = _merge_hint(hint, value_ty)
            fits = annotation_fits(wanted, value_ty) is not None
            return wanted if fits or self.try_flex(let.value, value_ty, wanted) else value_ty
        if annotated is None and isinstance(value_ty, OptionTy) and value_ty.inner is None:
            self.report(_none_needs_a_type(let.value.span))
            return None
        if annotated is None:
            return value_ty
        bound = annotation_fits(annotated, value_ty)
        if bound is None and self.try_flex(let.value, value_ty, annotated):
            return annotated
        if bound is None:
            secondary = ((let.type.span, "expected due to this"),) if let.type else ()
            self.report(mismatch(annotated, value_ty, let.value.span, secondary))
        return bound

    def _poison(self, pattern: A.Pattern) -> None:
        if isinstance(pattern, A.IdentPattern):
            self.declare(LocalVar(pattern.name, ERROR, pattern.span, pattern.mutable))
        elif isinstance(pattern, (A.TuplePattern, A.ArrayPattern)):
            for sub in pattern.elements:
                self._poison(sub)
        elif isinstance(pattern, A.StructPattern):
            for _, sub in pattern.fields:
                self._poison(sub)

    def _bind(self, pattern: A.Pattern, ty: SemType) -> tuple[LocalVar, ...]:
        """Declare the names `pattern` binds (depth first, left to right; lowering
        takes the values apart in the same order)."""
        if isinstance(pattern, A.IdentPattern):
            return (self.declare(LocalVar(pattern.name, ty, pattern.span, pattern.mutable)),)
        parts: list[tuple[A.Pattern, SemType]] | None = None
        if isinstance(pattern, A.ArrayPattern):
            elements = self.bind_array(pattern, ty)
            parts = None if elements is None else list(zip(pattern.elements, elements, strict=True))
        elif isinstance(pattern, A.StructPattern):
            parts = self.bind_struct(pattern, ty)
        if parts is not None:
            out: tuple[LocalVar, ...] = ()
            for sub, sub_ty in parts:
                out += self._bind(sub, sub_ty)
            return out
        if isinstance(pattern, A.TuplePattern):
            if (
                not isinstance(ty, TupleTy)
                or isinstance(ty, StructTy)
                or len(ty.elements) != len(pattern.elements)
            ):
                self.report(messages.PATTERN_CANNOT_MATCH.at(pattern.span, ty=ty))
                return ()
            out: tuple[LocalVar, ...] = ()
            for sub, sub_ty in zip(pattern.elements, ty.elements, strict=True):
                out += self._bind(sub, sub_ty)
            return out
        return ()

    def declare(self, var: LocalVar) -> LocalVar:
        self.scopes[-1][var.name] = var
        self.var_depth[var.id] = len(self.scopes)
        return var

    def lookup(self, name: str) -> LocalVar | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    # --- expressions

    def expr(self, expr: A.Expr, expected: SemType | None) -> SemType | None:
        handler = self._handlers.get(type(expr))
        if handler is None:
            self.report(unsupported(expr.span, describe(expr)))
            return None
        ty = handler(expr, expected)
        if ty is not None:
            self.facts.expr_types[expr] = ty
        return ty

    def _path(self, path: A.PathExpr, expected: SemType | None) -> SemType | None:
        if len(path.segments) == 1:
            var = self.lookup(path.name)
            if var is not None:
                self.facts.names[path] = var
                if var.const_value is not None:
                    self.facts.consts[path] = var.const_value
                return None if var.type is ERROR else var.type
            const_ty = self._named_constant(path) or self.unit_struct(path)
            if const_ty is not None:
                return const_ty
        handled, memory_ty = self.memory_path(path, expected)
        if handled:
            return memory_ty
        if len(path.segments) >= 2:
            qualified = self._qualified(path) if len(path.segments) == 2 else None
            if qualified is not None:
                return qualified
            if self.associated_const(path):
                return None
            by_path = self._module_constant(path)
            if by_path is not None:
                return by_path
        visible = [n for scope in self.scopes for n in scope]
        self.report(unresolved(path.span, path.span.text, "value", visible))
        return None

    def _named_constant(self, path: A.PathExpr, at: A.PathExpr | None = None) -> SemType | None:
        """A const generic or module `const` used as a value (recorded at `at`, the path
        as written, when `path` is its last segment)."""
        env = self.resolver.env
        value = env.generics.get(path.name, env.consts.get(path.name))
        path = at or path
        if isinstance(value, bool):
            self.facts.consts[path] = value
            return ScalarTy(Elem.BOOL)
        if isinstance(value, int):
            self.facts.consts[path] = value
            return ScalarTy(Elem.I32)
        if isinstance(value, float):
            self.facts.consts[path] = value
            return ScalarTy(Elem.F32)
        if isinstance(value, tuple):
            self.facts.consts[path] = value
            return ArrayTy(ScalarTy(Elem.I32), len(value))
        return None

    def _module_constant(self, path: A.PathExpr) -> SemType | None:
        """A module `const` named by its path: `inner::SIZE`, `self::SIZE`, `super::SIZE`."""
        head = path.segments[-2]
        if self.quiet_type(path.segments[:-1], path.span) is not None or head in ELEM_BY_NAME:
            return None
        return self._named_constant(A.PathExpr(path.span, path.segments[-1:]), path)

    def _qualified(self, path: A.PathExpr) -> SemType | None:
        """`ftz::Enabled`-style markers and `f32::NEG_INFINITY` / `E::ZERO` constants."""
        head, name = path.segments
        if name in MARKER_KINDS.get(head, ()):
            return MarkerTy(head, name)
        elem = ELEM_BY_NAME.get(head)
        bound = self.resolver.env.generics.get(head)
        elem = elem or (bound if isinstance(bound, Elem) else None)
        value = associated_constant(elem, name) if elem is not None else None
        if elem is None or value is None:
            return None
        self.facts.consts[path] = value
        return ScalarTy(elem)

    def _const_env(self, through_lets: bool = False) -> TypeEnv:
        """Generics and consts, plus block-level consts in scope, for folding."""
        local = {
            v.name: v.folds_to if through_lets else v.const_value
            for s in self.scopes
            for v in s.values()
            if (v.folds_to if through_lets else v.const_value) is not None
        }
        env = self.resolver.env
        return replace(env, consts={**env.consts, **local}, floor_division=True)

    def fold(self, expr: A.Expr, through_lets: bool = False) -> ConstValue | None:
        """The compile-time value of `expr`, or None (locals are never constant; with
        `through_lets`, an immutable `let` of a compile-time scalar is, for arguments that
        must be values known at compile time, such as `constant`'s)."""
        if _mentions_runtime_local(expr, self, through_lets):
            return None
        try:
            return eval_const(expr, self._const_env(through_lets))
        except NotConstant:
            return None

    def _reference(self, ref: A.Reference, expected: SemType | None) -> SemType | None:
        """`&p`, `&mut p`, `&[a, b]`: the value itself; borrows are checked separately."""
        inner = self.expr(ref.value, expected)
        referable = (
            PartitionTy,
            MappedTy,
            PartitionIndexTy,
            RefTy,
            ArrayTy,
            ShapeTy,
            GatherScatterViewTy,
            StridedViewTy,
            StructTy,
        )
        if inner is not None and not isinstance(inner, referable):
            self.report(unsupported(ref.span, f"taking a reference to a `{inner}`"))
            return None
        return inner

    def _field(self, access: A.FieldAccess, expected: SemType | None) -> SemType | None:
        hint = None
        if expected is not None and _small_index(access.name):  # `(0,).0` where an i64 is wanted
            hint = TupleTy((None,) * int(access.name) + (expected,))  # type: ignore[arg-type]
        base = self.expr(access.value, hint)
        if base is None:
            return None
        if isinstance(base, StructTy) or (
            isinstance(base, RefTy) and isinstance(base.inner, StructTy)
        ):
            return self.struct_field(access, base)
        name = access.name
        if isinstance(base, TupleTy) and _small_index(name):
            index = int(name)
            if index < len(base.elements):
                return base.elements[index]
        shown = name if len(name) <= 40 else f"{name[:37]}..."
        self.report(messages.NO_FIELD_ON_NON_STRUCT.at(access.span, name=shown, ty=base))
        return None

    def _index(self, index: A.Index, expected: SemType | None) -> SemType | None:
        base = self.expr(index.value, ArrayTy(expected, 0) if expected is not None else None)
        position_ty = self.expr(index.index, ScalarTy(Elem.I32))
        position = self.fold(index.index)
        if base is None or position_ty is None:
            return None
        length = (
            base.length
            if isinstance(base, ArrayTy)
            else (len(base.dims) if isinstance(base, ShapeTy) else None)
        )
        if length is None:
            self.report(unsupported(index.span, f"indexing a value of type `{base}`"))
            return None
        if not isinstance(position, int) or isinstance(position, bool):
            self.report(messages.INDEX_NOT_CONSTANT.at(index.index.span))
            return None
        if not 0 <= position < length:
            self.report(
                messages.INDEX_OUT_OF_BOUNDS.at(index.index.span, index=position, length=length)
            )
            return None
        self.facts.consts[index.index] = position
        folded = self.fold(index)
        if folded is not None:
            self.facts.consts[index] = folded
        return base.element if isinstance(base, ArrayTy) else ScalarTy(Elem.I32)

    def _tuple(self, tup: A.TupleExpr, expected: SemType | None) -> SemType | None:
        hints = expected.elements if isinstance(expected, TupleTy) else ()
        parts = [
            self.expr(e, hints[i] if i < len(hints) else None) for i, e in enumerate(tup.elements)
        ]
        if any(p is None for p in parts):
            return None
        return TupleTy(tuple(p for p in parts if p is not None))

    def _array(self, array: A.ArrayExpr, expected: SemType | None) -> SemType | None:
        if isinstance(expected, RefTy):
            expected = expected.inner
        known = isinstance(expected, ArrayTy)
        hint = expected.element if known else None  # type: ignore[union-attr]
        if not array.elements and hint is not None:  # `&[]` where `&[i32]` is expected
            return ArrayTy(hint, 0)
        parts = [self.expr(e, hint) for e in array.elements]
        if not parts or any(p is None for p in parts):
            if not parts:
                self.report(unsupported(array.span, "an empty array"))
            return None
        first = parts[0]
        for element, ty in zip(array.elements, parts, strict=True):
            if ty != first:
                assert first is not None and ty is not None
                self.report(mismatch(first, ty, element.span))
                return None
        assert first is not None
        return ArrayTy(first, len(parts))

    def _struct_literal(self, lit: A.StructLit, expected: SemType | None) -> SemType | None:
        struct = self.struct_named(lit.path.segments, lit.path.span)
        if struct is not None and not lit.path.generic_args:
            return self.user_struct_literal(lit, struct)
        definition = self.items.structs.get(lit.path.segments[-1])
        if definition is not None and lit.path.segments[-1] not in ("Shape", "Array"):
            TypeResolver(self.resolver.env, self.sink).struct_type(definition)  # says why not
            return None
        return self.struct_literal(lit, expected)

    def _array_repeat(self, array: A.ArrayRepeat, expected: SemType | None) -> SemType | None:
        """`[value; count]`: `count` copies of `value` (a compile-time count)."""
        hint = expected.element if isinstance(expected, ArrayTy) else None
        element = self.expr(array.value, hint)
        self.expr(array.count, ScalarTy(Elem.U64))
        count = self.fold(array.count)
        if element is None:
            return None
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            self.report(messages.ARRAY_LENGTH_NOT_CONSTANT.at(array.count.span))
            return None
        self.facts.consts[array.count] = count
        value = self.facts.consts.get(array.value)
        if isinstance(value, int) and not isinstance(value, bool):
            self.facts.consts[array] = (value,) * count
        return ArrayTy(element, count)

    def _macro(self, macro: A.MacroCall, expected: SemType | None) -> SemType | None:
        if macro.name in DEBUG_MACROS:
            return self.debug_macro(macro)
        if macro.name not in ("const_shape", "shape", "const_array"):
            self.report(unsupported(macro.span, f"the macro `{macro.name}!`"))
            return None
        values = [self.fold(a) for a in macro.args]
        bad = next(
            (
                a
                for a, v in zip(macro.args, values, strict=True)
                if not isinstance(v, (int, tuple)) or isinstance(v, bool)
            ),
            None,
        )
        if bad is not None:
            self.report(messages.SHAPE_MACRO_ARGUMENT_NOT_INTEGER.at(bad.span, macro=macro.name))
            return None
        dims = values[0] if len(values) == 1 and isinstance(values[0], tuple) else tuple(values)
        assert isinstance(dims, tuple)
        args = macro.args if len(dims) == len(macro.args) else (macro,) * len(dims)
        nested = next((i for i, dim in enumerate(dims) if type(dim) is not int), None)
        if nested is not None:  # an array among the dimensions: `const_shape![MAP, BN]`
            self.report(
                messages.SHAPE_MACRO_ARGUMENT_NOT_INTEGER.at(args[nested].span, macro=macro.name)
            )
            return None
        wide = next((i for i, dim in enumerate(dims) if dim not in I32_RANGE), None)
        if wide is not None:
            self.report(dimension_out_of_range(dims[wide], args[wide].span))
            return None
        self.facts.consts[macro] = dims
        if macro.name == "const_array":
            return ArrayTy(ScalarTy(Elem.I32), len(dims), tuple(int(d) for d in dims))
        return ShapeTy(tuple(int(d) for d in dims))


def _mentions_runtime_local(expr: A.Expr, checker: Checker, through_lets: bool) -> bool:
    """Whether `expr` reads a local variable that is not a block-level `const`."""
    stack: list[object] = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, A.PathExpr) and len(node.segments) == 1:
            var = checker.lookup(node.name)
            if var is not None and (var.folds_to if through_lets else var.const_value) is None:
                return True
        elif isinstance(node, A.Node):
            stack.extend(v for v in vars(node).values() if isinstance(v, (A.Node, tuple)))
        elif isinstance(node, tuple):
            stack.extend(node)
    return False


def _merge_hint(hint: SemType, value: SemType) -> SemType:
    """`hint` with the parts no round constrained (None) taken from `value`."""
    same = isinstance(hint, TupleTy) and isinstance(value, TupleTy)
    if same and len(hint.elements) == len(value.elements):  # type: ignore[union-attr]
        return TupleTy(
            tuple(
                v if h is None else _merge_hint(h, v)
                for h, v in zip(hint.elements, value.elements, strict=True)  # type: ignore[union-attr]
            )
        )
    return hint


def _none_needs_a_type(span: A.Span) -> Diagnostic:
    """rustc's E0282 for `let n = None;`: nothing says what the option holds."""
    return messages.NONE_NEEDS_A_TYPE.at(span)


def _const_fits(ty: SemType, value: ConstValue) -> bool:
    """A block-level `const` holds a scalar, or an integer array (`const A: [i32; 2]`)."""
    if isinstance(ty, ScalarTy):
        return not isinstance(value, tuple)
    return (
        isinstance(ty, ArrayTy)
        and isinstance(ty.element, ScalarTy)
        and ty.element.elem.is_integer
        and isinstance(value, tuple)
        and len(value) == ty.length
    )
