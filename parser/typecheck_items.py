"""Type rules for a kernel module's own items: struct literals, field access and struct
patterns, methods and associated functions of `impl` blocks (inlined like device
functions), associated consts (rejected where read, as cuTile Rust rejects them), unit
and tuple structs used as values.

Everything here is resolved statically: a struct value is the tuple of its fields
(`StructTy`), so it flows through `let`, calls, `if` and loops as a tuple does.
"""

from __future__ import annotations

from dataclasses import replace

from parser import ast_nodes as A
from parser import messages
from parser.call_target import CallTarget
from parser.check_messages import mismatch
from parser.checker_surface import CheckerSurface
from parser.diagnostics import DiagnosticSink
from parser.items import ItemIndex
from parser.type_eval import TypeResolver
from parser.typecheck_calls import _compatible
from parser.types import ArrayTy, GenericValue, RefTy, SemType, StructTy
from parser.unify import Conflict, unify


class ItemRules(CheckerSurface):
    @property
    def items(self) -> ItemIndex:
        return self.program.items

    # --- types named in expressions and patterns

    def quiet_type(self, segments: tuple[str, ...], span: A.Span) -> SemType | None:
        """The type a path names (`Self`, a struct, an alias, `Tensor<..>` through an
        alias), or None; nothing is reported."""
        name = segments[-1]  # `Pair`, `inner::Pair`, `self::Pair`
        if name != "Self" and not self.items.is_type_name(name):
            return None
        resolver = TypeResolver(self.resolver.env, DiagnosticSink())
        return resolver.resolve(A.PathType(span, segments))

    def struct_named(self, path: tuple[str, ...], span: A.Span) -> StructTy | None:
        ty = self.quiet_type(path, span)
        return ty if isinstance(ty, StructTy) else None

    # --- struct literals and fields

    def user_struct_literal(self, lit: A.StructLit, struct: StructTy) -> SemType | None:
        given: dict[str, A.Expr] = {}
        for name, value in lit.fields:
            if struct.field_index(name) is None:
                self.report(
                    messages.STRUCT_HAS_NO_FIELD.at(
                        value.span,
                        struct=struct.name,
                        name=name,
                        fields=", ".join(struct.field_names) or "none",
                    )
                )
                return None
            if name in given:
                self.report(messages.FIELD_GIVEN_TWICE.at(value.span, name=name))
                return None
            given[name] = value
        missing = [n for n in struct.field_names if n not in given]
        if missing:
            listed = ", ".join(f"`{n}`" for n in missing)
            self.report(
                messages.MISSING_STRUCT_FIELDS.at(
                    lit.path.span,
                    plural="s" if len(missing) > 1 else "",
                    listed=listed,
                    struct=struct.name,
                )
            )
            return None
        for name, value in given.items():
            declared = struct.elements[struct.field_index(name)]  # type: ignore[index]
            ty = self.expr(value, declared)
            if ty is None:
                return None
            if not _compatible(declared, ty):
                self.report(mismatch(declared, ty, value.span))
                return None
        return struct

    def tuple_struct_call(self, call: A.Call) -> SemType | bool | None:
        """`Pair(a, b)` for `struct Pair(T, U);`: False when `call` builds no tuple struct."""
        assert isinstance(call.function, A.PathExpr)
        struct = self.struct_named(call.function.segments, call.function.span)
        if struct is None or not struct.field_names or struct.field_names[0] != "0":
            return False
        if len(call.args) != len(struct.elements):
            self.report(
                messages.STRUCT_FIELD_COUNT.at(
                    call.span,
                    struct=struct.name,
                    fields=len(struct.elements),
                    supplied=len(call.args),
                )
            )
            return None
        for arg, declared in zip(call.args, struct.elements, strict=True):
            ty = self.expr(arg, declared)
            if ty is None:
                return None
            if not _compatible(declared, ty) and not self.try_flex(arg, ty, declared):
                self.report(mismatch(declared, ty, arg.span))
                return None
        return struct

    def struct_field(self, access: A.FieldAccess, base: SemType) -> SemType | None:
        """`value.name` on a struct (through a reference too); None when `base` is no
        struct."""
        struct = base.inner if isinstance(base, RefTy) else base
        if not isinstance(struct, StructTy):
            return None
        index = struct.field_index(access.name)
        if index is None:
            self.report(
                messages.NO_FIELD_ON_TYPE.at(
                    access.span,
                    name=access.name,
                    struct=struct,
                    fields=", ".join(struct.field_names) or "none",
                )
            )
            return None
        return struct.elements[index]

    # --- patterns

    def bind_array(self, pattern: A.ArrayPattern, ty: SemType) -> tuple | None:
        """The element types an array pattern binds, or None after reporting."""
        if not isinstance(ty, ArrayTy) or ty.length != len(pattern.elements):
            self._pattern_mismatch(pattern, ty)
            return None
        return (ty.element,) * ty.length

    def bind_struct(
        self, pattern: A.StructPattern, ty: SemType
    ) -> list[tuple[A.Pattern, SemType]] | None:
        struct = self.struct_named(pattern.path, pattern.span)
        if struct is None or struct != ty:
            self._pattern_mismatch(pattern, ty)
            return None
        out: list[tuple[A.Pattern, SemType]] = []
        for name, sub in pattern.fields:
            index = struct.field_index(name)
            if index is None:
                self.report(
                    messages.PATTERN_FIELD_UNKNOWN.at(sub.span, struct=struct.name, name=name)
                )
                return None
            out.append((sub, struct.elements[index]))
        named = {name for name, _ in pattern.fields}
        missing = [n for n in struct.field_names if n not in named]
        if missing and not pattern.rest:
            listed = ", ".join(f"`{n}`" for n in missing)
            self.report(
                messages.PATTERN_FIELDS_MISSING.at(
                    pattern.span, plural="s" if len(missing) > 1 else "", listed=listed
                )
            )
            return None
        return out

    def _pattern_mismatch(self, pattern: A.Pattern, ty: SemType) -> None:
        self.report(messages.PATTERN_CANNOT_MATCH.at(pattern.span, ty=ty))

    # --- methods, associated functions and consts

    def user_method(self, call: A.MethodCall, receiver: SemType) -> CallTarget | None:
        """`receiver.name(..)` resolved to a function of a module `impl` of the receiver's
        type (or a trait's default method); None when there is none."""
        owner = receiver.inner if isinstance(receiver, RefTy) else receiver
        for impl in self.items.impls_with_function(call.method):
            generics = self.impl_for(impl, owner)
            function = self.items.functions_of(impl, call.method)
            if generics is None or function is None:
                continue
            if not function.params or function.params[0].name != "self":
                continue  # an associated function, not a method
            return CallTarget(function, (call.receiver, *call.args), owner, generics, {0: receiver})
        return None

    def associated_function(self, call: A.Call) -> CallTarget | bool | None:
        """`Type::name(..)` for a struct, alias or `Self` with a module `impl`: the
        function to inline, None when the path names no such type (not this rule's call),
        False after reporting that the type has no such function."""
        path = call.function
        assert isinstance(path, A.PathExpr)
        if len(path.segments) < 2:
            return None
        owner = self.quiet_type(path.segments[:-1], path.span)
        if owner is None:
            return None
        for impl in self.items.impls_with_function(path.name):
            generics = self.impl_for(impl, owner)
            function = self.items.functions_of(impl, path.name)
            if generics is not None and function is not None:
                return CallTarget(function, call.args, owner, generics)
        self.report(messages.NO_ASSOCIATED_ITEM.at(path.span, name=path.name, owner=owner))
        return False

    def associated_const(self, path: A.PathExpr) -> bool:
        """`Type::NAME` / `<Type as Trait>::NAME` / `Self::NAME` naming an associated
        const of a module `impl` (or a trait's default). cuTile Rust types such a path
        (by its declared type) but cannot emit its value, so neither do we. Whether `path`
        names one (and was reported)."""
        owner = self.quiet_type(path.segments[:-1], path.span)
        if owner is None:
            return False
        for impl in self.items.impls_with_const(path.name):
            item = self.items.const_of(impl, path.name)
            if item is None or self.impl_for(impl, owner) is None:
                continue
            self.report(
                messages.ASSOCIATED_CONST_VALUE.at(
                    path.span, ((item.span, "defined here"),), path=path.span.text, owner=owner
                )
            )
            return True
        return False

    def unit_struct(self, path: A.PathExpr) -> SemType | None:
        """A unit struct (`struct Marker;`) used as a value."""
        struct = self.struct_named(path.segments, path.span)
        if struct is None or struct.elements:
            return None
        self.facts.consts[path] = ()
        return struct

    def impl_for(self, impl: A.ImplBlock, ty: SemType) -> dict[str, GenericValue] | None:
        """The impl's generics when `impl` is for `ty`, else None."""
        names = {g.name for g in impl.generics}
        bound: dict[str, GenericValue] = {}
        try:
            unify(impl.self_type, ty, names, bound)
        except Conflict:
            return None
        if set(bound) != names:
            return None
        env = replace(self.resolver.env, generics=bound, self_type=None)
        resolved = TypeResolver(env, DiagnosticSink()).resolve(impl.self_type)
        return bound if resolved == ty else None
