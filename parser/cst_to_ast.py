"""tree-sitter CST → kernel AST (the only module that imports tree_sitter).

`parse_file` finds every `#[cutile::module]` module, converts its items once into the
frozen dataclasses of `parser.ast_nodes`, and reports syntax errors and unsupported
syntax as diagnostics. Host code outside kernel modules is skipped.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import tree_sitter
import tree_sitter_rust

from parser import ast_nodes as A
from parser import messages
from parser.bracket_scan import scan_brackets
from parser.desugar import hoist_diverging_ifs
from parser.diagnostics import Diagnostic, DiagnosticSink
from parser.messages import Message
from parser.spans import SourceFile, Span

Node = tree_sitter.Node
MAX_SYNTAX_ERRORS = 10
# Syntax-tree levels below the file, not counting module bodies (`mod m { .. }`): a
# top-level item is level 1. Keeps every later recursive pass far from Python's limit.
MAX_NESTING_DEPTH = 200
# tree-sitter's error recovery can be super-linear (`>&` repeated 4,000 times takes 20 s);
# it reports progress every 100 parse operations, and a parse may take PARSE_STEPS_BASE such
# reports plus one per PARSE_BYTES_PER_STEP bytes read so far. Every cutile-rs source and
# example stays under a twentieth of that rate (rust_examples/decoder.rs, the densest, needs
# 2%); counting steps, not time, keeps the verdict deterministic.
PARSE_STEPS_BASE = 1000
PARSE_BYTES_PER_STEP = 2
_UNCOUNTED_LEVELS = frozenset({"source_file", "declaration_list"})
_MODULE_ATTRS = {"module"}
_KERNEL_CRATES = {"cutile", "crate", "cutile_macro"}
_local = threading.local()


def _parser() -> tree_sitter.Parser:
    """One parser per thread: a tree-sitter parser is not safe to share."""
    parser = getattr(_local, "parser", None)
    if parser is None:
        parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_rust.language()))
        _local.parser = parser
    return parser


@dataclass(frozen=True)
class ParseDeadline:
    """When tree-sitter must be done (`time.monotonic()` seconds): a caller's wall-time
    limit of `limit_ms` over every file it parses. Past it, a parse stops with CT0007."""

    at: float
    limit_ms: int

    @classmethod
    def after_ms(cls, limit_ms: int) -> ParseDeadline:
        return cls(time.monotonic() + limit_ms / 1000.0, limit_ms)

    def passed(self) -> bool:
        return time.monotonic() > self.at


def parse_file(
    source: SourceFile, sink: DiagnosticSink, *, deadline: ParseDeadline | None = None
) -> A.ParsedFile:
    """Parse one `.rs` file; syntax errors go to `sink` and yield no modules. With a
    `deadline`, tree-sitter past it reports CT0007 instead."""
    unsafe_text = scan_brackets(source)  # before tree-sitter: its recursion is native
    if unsafe_text is not None:
        sink.add(unsafe_text)
        return A.ParsedFile(source, ())
    tree = _parse_within_budget(source.data, source, sink, deadline=deadline)
    if tree is None:
        return A.ParsedFile(source, ())
    if deadline is not None and deadline.passed():
        sink.add(_too_slow(source, deadline))
        return A.ParsedFile(source, ())
    if tree.root_node.has_error:
        _report_syntax_errors(tree.root_node, source, sink)
        return A.ParsedFile(source, ())
    too_deep = _first_node_deeper_than(tree.root_node, MAX_NESTING_DEPTH)
    if too_deep is not None:
        sink.add(_too_deep(too_deep, source, 0))
        return A.ParsedFile(source, ())
    converter = _Converter(source, sink, shift=0)
    modules = converter.kernel_modules(tree.root_node, parent_path=(), inside_kernel=False)
    return A.ParsedFile(source, tuple(modules))


def _parse_within_budget(
    data: bytes,
    source: SourceFile,
    sink: DiagnosticSink,
    shift: int = 0,
    *,
    deadline: ParseDeadline | None = None,
) -> tree_sitter.Tree | None:
    """tree-sitter's tree of `data`, or None after reporting a parse over its step budget
    (or past `deadline`)."""
    steps = 0
    offset = 0
    late = False

    def over_budget(byte_offset: int, _has_error: bool) -> bool:
        nonlocal steps, offset, late
        steps += 1
        offset = byte_offset
        late = deadline is not None and deadline.passed()
        return late or steps > PARSE_STEPS_BASE + byte_offset // PARSE_BYTES_PER_STEP

    def read(start: int, _point: object) -> bytes:
        return data[start : start + 65536]

    parser = _parser()
    try:
        return parser.parse(read, progress_callback=over_budget)
    except ValueError:  # the callback halted the parse
        parser.reset()
        if late:
            sink.add(_too_slow(source, deadline))  # type: ignore[arg-type]
            return None
        at = min(offset, len(data)) + shift
        sink.add(
            messages.TOO_COSTLY_TO_PARSE.at(
                Span(source, at, at),
                base_steps=PARSE_STEPS_BASE,
                bytes_per_step=PARSE_BYTES_PER_STEP,
            )
        )
        return None


def _too_slow(source: SourceFile, deadline: ParseDeadline) -> Diagnostic:
    return messages.PARSE_TOO_SLOW.at(Span(source, 0, 0), limit_ms=deadline.limit_ms)


def _too_deep(node: Node, source: SourceFile, shift: int) -> Diagnostic:
    span = Span(source, node.start_byte + shift, node.end_byte + shift)
    return messages.SYNTAX_NESTS_TOO_DEEP.at(span, limit=MAX_NESTING_DEPTH)


# ----------------------------------------------------------------------------- syntax errors


def _report_syntax_errors(root: Node, source: SourceFile, sink: DiagnosticSink) -> None:
    found = 0
    stack = [root]
    while stack and found < MAX_SYNTAX_ERRORS:
        node = stack.pop()
        if node.is_missing:
            span = Span(source, node.start_byte, node.start_byte)
            sink.add(messages.EXPECTED_TOKEN.at(span, token=node.type))
            found += 1
        elif node.type == "ERROR":
            sink.add(_syntax_error_at(node, source))
            found += 1
        elif node.has_error:
            stack.extend(reversed(node.children))


def _first_node_deeper_than(root: Node, limit: int, root_level: int = 0) -> Node | None:
    """The first node under `root` more than `limit` levels deep (see MAX_NESTING_DEPTH),
    walking without recursion."""
    cursor = root.walk()
    levels = [root_level]  # the level of each node on the cursor's path
    while True:
        if levels[-1] > limit:
            return cursor.node
        # a subtree of n nodes is at most n levels deep: one that cannot pass the limit is
        # not walked (`descendant_count` is stored in the tree), so a file costs a few
        # hundred steps instead of one per node
        if levels[-1] + cursor.node.descendant_count > limit and cursor.goto_first_child():
            levels.append(levels[-1] + _counts(cursor.node))
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return None
            levels.pop()
        levels[-1] = levels[-2] + _counts(cursor.node)


def _counts(node: Node) -> int:
    return 0 if node.type in _UNCOUNTED_LEVELS else 1


def _level(node: Node) -> int:
    level = 0
    current: Node | None = node
    while current is not None:
        level += _counts(current)
        current = current.parent
    return level


def _syntax_error_at(node: Node, source: SourceFile) -> Diagnostic:
    """An ERROR node; a token that starts a line after an unterminated one is reported as
    rustc does: a missing `;` at the end of the previous line."""
    span = Span(source, node.start_byte, max(node.end_byte, node.start_byte + 1))
    token = _first_token_text(node, source)
    before = source.data[: node.start_byte].rstrip()
    if (
        before
        and b"\n" in source.data[len(before) : node.start_byte]
        and before[-1:] not in (b";", b"{", b"}", b"(", b",", b"[")
    ):
        missing = Span(source, len(before), len(before))
        token_span = Span(source, node.start_byte, node.start_byte + len(token.encode()))
        unexpected = ((token_span, "unexpected token"),)
        return messages.EXPECTED_SEMICOLON.at(missing, unexpected, token=token)
    return messages.UNEXPECTED_TOKEN.at(span, token=token)


def _first_token_text(node: Node, source: SourceFile) -> str:
    while node.children:
        node = node.children[0]
    text = source.data[node.start_byte : node.end_byte].decode("utf-8", "replace")
    return text[:30] or "end of file"


# ----------------------------------------------------------------------------- converter


@dataclass
class _ModuleItems:
    """The items of one kernel module, as they are converted."""

    uses: list[A.UseDecl] = field(default_factory=list)
    functions: list[A.Function] = field(default_factory=list)
    consts: list[A.ConstItem] = field(default_factory=list)
    statics: list[A.StaticItem] = field(default_factory=list)
    structs: list[A.StructDef] = field(default_factory=list)
    impls: list[A.ImplBlock] = field(default_factory=list)
    traits: list[A.TraitDef] = field(default_factory=list)
    aliases: list[A.TypeAlias] = field(default_factory=list)


class _Converter:
    """Converts CST nodes; `shift` maps byte offsets of a re-parsed macro body back."""

    def __init__(self, source: SourceFile, sink: DiagnosticSink, shift: int) -> None:
        self.source = source
        self.sink = sink
        self.shift = shift
        self._expr_handlers: dict[str, Callable[[Node], A.Expr]] = {
            "integer_literal": self._int_literal,
            "float_literal": self._float_literal,
            "boolean_literal": self._bool_literal,
            "string_literal": self._string_literal,
            "identifier": self._path_expr,
            "self": self._path_expr,
            "scoped_identifier": self._path_expr,
            "generic_function": self._generic_function,
            "call_expression": self._call,
            "field_expression": self._field,
            "binary_expression": self._binary,
            "unary_expression": self._unary,
            "parenthesized_expression": self._parenthesized,
            "tuple_expression": self._tuple,
            "unit_expression": self._tuple,
            "array_expression": self._array,
            "type_cast_expression": self._cast,
            "reference_expression": self._reference,
            "block": self._block_expr,
            "unsafe_block": self._unsafe_block,
            "if_expression": self._if,
            "for_expression": self._for,
            "while_expression": self._while,
            "loop_expression": self._loop,
            "range_expression": self._range,
            "return_expression": self._return,
            "break_expression": self._break,
            "continue_expression": self._continue,
            "assignment_expression": self._assign,
            "compound_assignment_expr": self._compound_assign,
            "macro_invocation": self._macro,
            "struct_expression": self._struct,
            "closure_expression": self._closure,
            "index_expression": self._index,
        }

    # --- helpers

    def span(self, node: Node) -> Span:
        return Span(self.source, node.start_byte + self.shift, node.end_byte + self.shift)

    def text(self, node: Node) -> str:
        return self.source.data[node.start_byte + self.shift : node.end_byte + self.shift].decode(
            "utf-8"
        )

    def unsupported(self, node: Node, what: str) -> None:
        self.sink.add(messages.NOT_SUPPORTED_IN_KERNELS.at(self.span(node), what=what))

    @staticmethod
    def named_children(node: Node) -> list[Node]:
        return [c for c in node.named_children if c.type not in ("line_comment", "block_comment")]

    # --- items

    def kernel_modules(
        self, container: Node, parent_path: tuple[str, ...], inside_kernel: bool
    ) -> list[A.KernelModule]:
        modules: list[A.KernelModule] = []
        attrs: list[Node] = []
        for child in container.named_children:
            if child.type == "attribute_item":
                attrs.append(child)
                continue
            if child.type == "mod_item":
                modules.extend(self._mod_item(child, attrs, parent_path, inside_kernel))
            if child.type not in ("line_comment", "block_comment"):
                attrs = []
        return modules

    def _mod_item(
        self, node: Node, attrs: list[Node], parent_path: tuple[str, ...], inside_kernel: bool
    ) -> list[A.KernelModule]:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        assert name_node is not None
        path = (*parent_path, self.text(name_node))
        is_kernel = inside_kernel or any(self._attr_is(a, _MODULE_ATTRS) for a in attrs)
        if body is None:
            if is_kernel:
                self.unsupported(node, "a kernel module without an inline body (`mod x;`)")
            return []
        if not is_kernel:
            return self.kernel_modules(body, path, inside_kernel=False)
        return self._kernel_module(node, body, path)

    def _kernel_module(self, node: Node, body: Node, path: tuple[str, ...]) -> list[A.KernelModule]:
        items = _ModuleItems()
        nested: list[A.KernelModule] = []
        attrs: list[Node] = []
        for child in self.named_children(body):
            kind = child.type
            if kind == "attribute_item":
                attrs.append(child)
                continue
            if kind == "mod_item":
                nested.extend(self._mod_item(child, attrs, path, inside_kernel=True))
            elif kind not in ("inner_attribute_item", "empty_statement", "macro_definition"):
                self._module_item(child, attrs, path, items)
            attrs = []
        module = A.KernelModule(
            self.span(node),
            path,
            tuple(items.uses),
            tuple(items.functions),
            tuple(items.consts),
            tuple(items.statics),
            tuple(items.structs),
            tuple(items.impls),
            tuple(items.traits),
            tuple(items.aliases),
        )
        return [module, *nested]

    def _module_item(
        self, child: Node, attrs: list[Node], path: tuple[str, ...], items: _ModuleItems
    ) -> None:
        kind = child.type
        if kind == "use_declaration":
            items.uses.extend(self._use(child))
        elif kind == "function_item":
            items.functions.append(self._function(child, attrs, path))
        elif kind == "const_item":
            items.consts.append(self._const_item(child))
        elif kind == "static_item":
            items.statics.extend(self._static_item(child))
        elif kind == "struct_item":
            items.structs.append(self._struct_item(child, path, attrs))
        elif kind == "impl_item":
            items.impls.append(self._impl_item(child, path))
        elif kind == "trait_item":
            items.traits.append(self._trait_item(child, path))
        elif kind == "type_item":
            items.aliases.append(self._type_item(child))
        else:
            self.unsupported(child, f"the item `{kind.replace('_', ' ')}`")

    # --- structs, impls, traits, type aliases (compile-time only: inlined where used)

    def _derives(self, attrs: list[Node]) -> tuple[str, ...]:
        """The traits of `#[derive(..)]` attributes (`Copy`, `Clone`, ...)."""
        out: list[str] = []
        for attr_item in attrs:
            if self._attr_path(attr_item)[-1:] != ("derive",):
                continue
            attr = next(c for c in attr_item.named_children if c.type == "attribute")
            args = attr.child_by_field_name("arguments")
            text = self.text(args)[1:-1] if args is not None else ""
            out.extend(t.strip().split("::")[-1] for t in text.split(",") if t.strip())
        return tuple(out)

    def _struct_item(self, node: Node, path: tuple[str, ...], attrs: list[Node]) -> A.StructDef:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        generics_node = node.child_by_field_name("type_parameters")
        where = next((c for c in node.named_children if c.type == "where_clause"), None)
        assert name is not None
        fields: list[A.StructField] = []
        if body is not None and body.type == "field_declaration_list":
            for field_node in self.named_children(body):
                field_name = field_node.child_by_field_name("name")
                field_type = field_node.child_by_field_name("type")
                if field_node.type != "field_declaration" or field_name is None:
                    continue
                assert field_type is not None
                fields.append(
                    A.StructField(
                        self.span(field_node), self.text(field_name), self.type_expr(field_type)
                    )
                )
        elif body is not None:  # `struct Name(T, U);`
            types = [c for c in self.named_children(body) if c.type != "visibility_modifier"]
            fields = [
                A.StructField(self.span(t), str(i), self.type_expr(t)) for i, t in enumerate(types)
            ]
        return A.StructDef(
            self.span(node),
            self.text(name),
            self._generic_params(generics_node, where),
            tuple(fields),
            path,
            self._derives(attrs),
        )

    def _impl_item(self, node: Node, path: tuple[str, ...]) -> A.ImplBlock:
        self_type = node.child_by_field_name("type")
        trait = node.child_by_field_name("trait")
        body = node.child_by_field_name("body")
        generics_node = node.child_by_field_name("type_parameters")
        where = next((c for c in node.named_children if c.type == "where_clause"), None)
        assert self_type is not None
        functions, consts, _ = self._associated_items(body, path)
        trait_name = None
        if trait is not None:
            trait_type = self.type_expr(trait)
            trait_name = trait_type.name if isinstance(trait_type, A.PathType) else self.text(trait)
        return A.ImplBlock(
            self.span(node),
            self._generic_params(generics_node, where),
            self.type_expr(self_type),
            trait_name,
            functions,
            consts,
            path,
        )

    def _trait_item(self, node: Node, path: tuple[str, ...]) -> A.TraitDef:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        assert name is not None
        functions, consts, required = self._associated_items(body, path)
        return A.TraitDef(self.span(node), self.text(name), functions, consts, required, path)

    def _associated_items(
        self, body: Node | None, path: tuple[str, ...]
    ) -> tuple[tuple[A.Function, ...], tuple[A.ConstItem, ...], tuple[str, ...]]:
        """The methods and consts of an `impl` or `trait` body (and, for a trait, the
        names of those without a default)."""
        functions: list[A.Function] = []
        consts: list[A.ConstItem] = []
        required: list[str] = []
        attrs: list[Node] = []
        for child in self.named_children(body) if body is not None else []:
            kind = child.type
            if kind == "attribute_item":
                attrs.append(child)
                continue
            name = child.child_by_field_name("name")
            if kind == "function_item":
                functions.append(self._function(child, attrs, path))
            elif kind == "const_item" and child.child_by_field_name("value") is not None:
                consts.append(self._const_item(child))
            elif kind in ("const_item", "function_signature_item") and name is not None:
                required.append(self.text(name))
            elif kind == "type_item" and name is not None:
                required.append(self.text(name))  # associated types are never inlined
            elif kind not in ("inner_attribute_item", "empty_statement"):
                self.unsupported(child, f"the item `{kind.replace('_', ' ')}` in an `impl`")
            attrs = []
        return tuple(functions), tuple(consts), tuple(required)

    def _type_item(self, node: Node) -> A.TypeAlias:
        name = node.child_by_field_name("name")
        type_node = node.child_by_field_name("type")
        assert name is not None and type_node is not None
        if node.child_by_field_name("type_parameters") is not None:
            self.unsupported(node, "a generic type alias")
        return A.TypeAlias(self.span(node), self.text(name), self.type_expr(type_node))

    def _attr_is(self, attr_item: Node, names: set[str]) -> bool:
        return self._attr_path(attr_item)[-1:] in [(n,) for n in names] and (
            len(self._attr_path(attr_item)) == 1 or self._attr_path(attr_item)[0] in _KERNEL_CRATES
        )

    def _attr_path(self, attr_item: Node) -> tuple[str, ...]:
        attr = next((c for c in attr_item.named_children if c.type == "attribute"), None)
        if attr is None or not attr.named_children:
            return ()
        return tuple(self.text(attr.named_children[0]).replace(" ", "").split("::"))

    def _use(self, node: Node) -> list[A.UseDecl]:
        argument = node.child_by_field_name("argument")
        if argument is None:
            return []
        return [A.UseDecl(self.span(node), path) for path in self._use_paths(argument, ())]

    def _use_paths(self, node: Node, prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
        """Flatten `a::{b::{c, d}, e as f}` into (a, b, c), (a, b, d), (a, e)."""
        kind = node.type
        if kind == "use_as_clause":
            path = node.child_by_field_name("path")
            return self._use_paths(path, prefix) if path is not None else []
        if kind == "use_wildcard":
            inner = [c for c in node.named_children]
            base = self._segments(inner[0]) if inner else ()
            return [(*prefix, *base, "*")]
        if kind == "scoped_use_list":
            path = node.child_by_field_name("path")
            items = node.child_by_field_name("list")
            base = (*prefix, *(self._segments(path) if path is not None else ()))
            return self._use_paths(items, base) if items is not None else []
        if kind == "use_list":
            return [p for c in self.named_children(node) for p in self._use_paths(c, prefix)]
        return [(*prefix, *self._segments(node))]

    def _segments(self, node: Node) -> tuple[str, ...]:
        return tuple(part for part in "".join(self.text(node).split()).split("::") if part)

    def _function(self, node: Node, attrs: list[Node], module_path: tuple[str, ...]) -> A.Function:
        """A function; the unsupported syntax in it is kept with it (`Function.problems`)
        and reported only if it is compiled or called."""
        outer = self.sink
        self.sink = DiagnosticSink()
        try:
            function = self._function_item(node, attrs, module_path)
            problems = tuple(self.sink)
        finally:
            self.sink = outer
        return replace(function, problems=problems) if problems else function

    def _function_item(
        self, node: Node, attrs: list[Node], module_path: tuple[str, ...]
    ) -> A.Function:
        name_node = node.child_by_field_name("name")
        assert name_node is not None
        generics_node = node.child_by_field_name("type_parameters")
        params_node = node.child_by_field_name("parameters")
        return_node = node.child_by_field_name("return_type")
        body_node = node.child_by_field_name("body")
        modifiers = [c for c in node.children if c.type == "function_modifiers"]
        is_unsafe = any("unsafe" in self.text(m) for m in modifiers)
        entry_attr = next((a for a in attrs if self._attr_is(a, {"entry"})), None)
        where = next((c for c in node.named_children if c.type == "where_clause"), None)
        generics = self._generic_params(generics_node, where)
        params = self._params(params_node) if params_node else ()
        self._names_once(generics, messages.GENERIC_NAME_REUSED)
        self._names_once(params, messages.PARAM_BOUND_TWICE)
        body = self._block(body_node) if body_node else A.Block(self.span(node), (), None)
        return A.Function(
            self.span(node),
            self.text(name_node),
            self.span(name_node),
            generics,
            params,
            self.type_expr(return_node) if return_node else None,
            body,
            is_unsafe,
            self._entry_attr(entry_attr) if entry_attr is not None else None,
            module_path,
        )

    def _names_once(
        self, declared: tuple[A.GenericParam, ...] | tuple[A.Param, ...], message: Message
    ) -> None:
        """rustc's E0403 / E0415: a name declared twice in one generics or parameter list
        (the second would shadow the first, and a generic could never be bound)."""
        first: dict[str, Span] = {}
        for item in declared:
            if item.name == "_":
                continue
            if item.name in first:
                secondary = ((first[item.name], f"first use of `{item.name}`"),)
                self.sink.add(message.at(item.span, secondary, name=item.name))
            else:
                first[item.name] = item.span

    def _generic_params(self, node: Node | None, where: Node | None) -> tuple[A.GenericParam, ...]:
        if node is None:
            return ()
        params = self._declared_generics(node)
        extra = self._where_bounds(where) if where is not None else {}
        return tuple(
            A.TypeParam(p.span, p.name, (*p.bounds, *extra.get(p.name, ())))
            if isinstance(p, A.TypeParam) and p.name in extra
            else p
            for p in params
        )

    def _where_bounds(self, where: Node) -> dict[str, tuple[str, ...]]:
        """`where T: A + B, F: Fn(E) -> E`: the bounds of each named type parameter."""
        out: dict[str, tuple[str, ...]] = {}
        for predicate in self.named_children(where):
            left = predicate.child_by_field_name("left")
            bounds = predicate.child_by_field_name("bounds")
            if left is None or bounds is None:
                continue
            names = tuple(self._bound_name(b) for b in self.named_children(bounds))
            out[self.text(left)] = out.get(self.text(left), ()) + names
        return out

    def _bound_name(self, bound: Node) -> str:
        """`ElementType`, `cutile::core::ElementType` -> `ElementType`; `Fn(E, E) -> E` ->
        `Fn`."""
        if bound.type == "function_type":
            trait = bound.child_by_field_name("trait")
            return self.text(trait).split("::")[-1] if trait is not None else "Fn"
        return self.text(bound).split("<")[0].split("::")[-1].strip()

    def _declared_generics(self, node: Node) -> tuple[A.GenericParam, ...]:
        out: list[A.GenericParam] = []
        for child in self.named_children(node):
            if child.type == "const_parameter":
                name = child.child_by_field_name("name")
                type_node = child.child_by_field_name("type")
                assert name is not None and type_node is not None
                out.append(
                    A.ConstParam(self.span(child), self.text(name), self.type_expr(type_node))
                )
            elif (
                child.type in ("type_identifier", "constrained_type_parameter")
                or child.type == "type_parameter"
            ):
                out.append(self._type_param(child))
            elif child.type in ("lifetime", "lifetime_parameter"):
                continue
            else:
                self.unsupported(child, f"the generic parameter `{self.text(child)}`")
        return tuple(out)

    def _type_param(self, node: Node) -> A.TypeParam:
        if node.type == "type_identifier":
            return A.TypeParam(self.span(node), self.text(node), ())
        name = node.child_by_field_name("name") or node.child_by_field_name("left")
        bounds = node.child_by_field_name("bounds")
        name_text = self.text(name) if name is not None else self.text(node).split(":")[0]
        bound_names = tuple(self._bound_name(b) for b in (bounds.named_children if bounds else []))
        return A.TypeParam(self.span(node), name_text.strip(), bound_names)

    def _params(self, node: Node) -> tuple[A.Param, ...]:
        out: list[A.Param] = []
        for child in self.named_children(node):
            if child.type == "attribute_item":
                continue
            if child.type == "self_parameter":
                out.append(self._self_param(child))
                continue
            if child.type != "parameter":
                self.unsupported(child, f"the parameter `{self.text(child)}`")
                continue
            pattern = child.child_by_field_name("pattern")
            type_node = child.child_by_field_name("type")
            assert pattern is not None and type_node is not None
            mutable = any(c.type == "mutable_specifier" for c in child.children)
            if pattern.type == "mut_pattern":
                mutable = True
                pattern = pattern.named_children[-1]
            out.append(
                A.Param(self.span(child), self.text(pattern), self.type_expr(type_node), mutable)
            )
        return tuple(out)

    def _self_param(self, node: Node) -> A.Param:
        """`self`, `mut self`, `&self`, `&mut self`: a parameter named `self` of type
        `Self` (or a reference to it)."""
        span = self.span(node)
        by_ref = any(c.type == "&" for c in node.children)
        mutable = any(c.type == "mutable_specifier" for c in node.children)
        self_type: A.TypeExpr = A.PathType(span, ("Self",))
        if by_ref:
            return A.Param(span, "self", A.RefType(span, self_type, mutable))
        return A.Param(span, "self", self_type, mutable)

    def _entry_attr(self, attr_item: Node) -> A.EntryAttr:
        attr = next(c for c in attr_item.named_children if c.type == "attribute")
        args = attr.child_by_field_name("arguments")
        if args is None:
            return A.EntryAttr(self.span(attr_item), ())
        options: list[A.EntryOption] = []
        for expr in self._reparse_token_tree(args):
            if isinstance(expr, A.Assign) and isinstance(expr.target, A.PathExpr):
                options.append(A.EntryOption(expr.span, expr.target.name, expr.value))
            elif isinstance(expr, A.PathExpr):
                options.append(A.EntryOption(expr.span, expr.name, None))
            else:
                self.sink.add(messages.ENTRY_OPTION_NOT_KEY_VALUE.at(expr.span))
        return A.EntryAttr(self.span(attr_item), tuple(options))

    def _const_item(self, node: Node) -> A.ConstItem:
        name = node.child_by_field_name("name")
        type_node = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        assert name is not None and type_node is not None
        if value is None:
            self.unsupported(node, "a `const` without a value")
            return A.ConstItem(
                self.span(node),
                self.text(name),
                self.type_expr(type_node),
                A.IntLit(self.span(node), 0, None),
            )
        return A.ConstItem(
            self.span(node), self.text(name), self.type_expr(type_node), self.expr(value)
        )

    def _static_item(self, node: Node) -> list[A.StaticItem]:
        name = node.child_by_field_name("name")
        type_node = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        assert name is not None and type_node is not None
        if value is None:
            self.unsupported(node, "a `static` without a value")
            return []
        mutable = any(c.type == "mutable_specifier" for c in node.children)
        return [
            A.StaticItem(
                self.span(node),
                self.text(name),
                self.type_expr(type_node),
                self.expr(value),
                mutable,
            )
        ]

    # --- macro bodies: re-parse the token tree as call arguments

    def _reparse_token_tree(self, token_tree: Node) -> tuple[A.Expr, ...]:
        inner = self.text(token_tree)[1:-1]
        if not inner.strip():  # `()`: nothing to parse again
            return ()
        prefix = "fn __cutile_macro() { __args("
        text = f"{prefix}{inner}); }}"
        start = token_tree.start_byte + self.shift + 1
        shift = start - len(prefix.encode("utf-8"))
        tree = _parse_within_budget(text.encode("utf-8"), self.source, self.sink, shift)
        if tree is None:
            return ()
        sub = _Converter(self.source, self.sink, shift=shift)
        if tree.root_node.has_error:
            self.sink.add(messages.MACRO_ARGUMENTS_UNPARSABLE.at(self.span(token_tree)))
            return ()
        call = _find_first(tree.root_node, "call_expression")
        assert call is not None
        arguments = call.child_by_field_name("arguments")
        assert arguments is not None
        # level n here is level n - level(arguments) + level(token_tree) in the file's tree
        room = MAX_NESTING_DEPTH - _level(token_tree) + _level(arguments)
        too_deep = _first_node_deeper_than(arguments, room, _level(arguments))
        if too_deep is not None:
            self.sink.add(_too_deep(too_deep, self.source, shift))
            return ()
        return tuple(sub.expr(a) for a in sub.named_children(arguments))

    # --- types

    def type_expr(self, node: Node) -> A.TypeExpr:
        kind = node.type
        span = self.span(node)
        if kind in ("primitive_type", "type_identifier"):
            return A.PathType(span, (self.text(node),))
        if kind == "scoped_type_identifier":
            return A.PathType(span, tuple(self.text(node).replace(" ", "").split("::")))
        if kind == "generic_type":
            base = node.child_by_field_name("type")
            args = node.child_by_field_name("type_arguments")
            assert base is not None
            path = self.type_expr(base)
            segments = path.segments if isinstance(path, A.PathType) else (self.text(base),)
            return A.PathType(span, segments, self.generic_args(args) if args else ())
        if kind == "reference_type":
            inner = node.child_by_field_name("type")
            assert inner is not None
            mutable = any(c.type == "mutable_specifier" for c in node.children)
            return A.RefType(span, self.type_expr(inner), mutable)
        if kind == "tuple_type":
            return A.TupleType(span, tuple(self.type_expr(c) for c in self.named_children(node)))
        if kind == "unit_type":
            return A.TupleType(span, ())
        if kind == "array_type":
            element = node.child_by_field_name("element")
            length = node.child_by_field_name("length")
            assert element is not None
            return A.ArrayType(span, self.type_expr(element), self.expr(length) if length else None)
        if kind == "pointer_type":
            inner = node.child_by_field_name("type")
            assert inner is not None
            mutable = any(c.type == "mutable_specifier" for c in node.children)
            return A.PointerType(span, self.type_expr(inner), mutable)
        if kind == "_" or self.text(node) == "_":
            return A.InferType(span)
        self.unsupported(node, f"the type `{self.text(node)}`")
        return A.InferType(span)

    def generic_args(self, node: Node) -> tuple[A.GenericArg, ...]:
        out: list[A.GenericArg] = []
        for child in self.named_children(node):
            span = self.span(child)
            if child.type == "lifetime":  # `Partition<'a, E, R>`: borrows are checked apart
                continue
            if child.type == "block":
                block = self._block(child)
                value = block.tail if block.tail is not None and not block.statements else None
                if value is None:
                    self.unsupported(child, "a const generic block with statements")
                    continue
                out.append(A.ConstArg(span, value))
            elif child.type in (
                "integer_literal",
                "unary_expression",
                "boolean_literal",
                "float_literal",
                "array_expression",
            ):
                out.append(A.ConstArg(span, self.expr(child)))
            else:
                out.append(A.TypeArg(span, self.type_expr(child)))
        return tuple(out)

    # --- statements and blocks

    def _block(self, node: Node) -> A.Block:
        statements: list[A.Stmt] = []
        tail: A.Expr | None = None
        children = self.named_children(node)
        for i, child in enumerate(children):
            kind = child.type
            if kind in ("attribute_item", "empty_statement", "inner_attribute_item"):
                continue
            if kind == "let_declaration":
                statements.append(self._let(child))
            elif kind == "expression_statement":
                inner = self.named_children(child)
                semicolon = self.text(child).rstrip().endswith(";")
                if not inner:
                    continue
                expr = self.expr(inner[0])
                if i == len(children) - 1 and not semicolon:  # `if c { a } else { b }` last
                    tail = expr
                else:
                    statements.append(A.ExprStmt(self.span(child), expr, semicolon))
            elif kind == "const_item":
                statements.append(self._const_item(child))
            elif kind.endswith("_item"):
                self.unsupported(child, f"the item `{kind.replace('_', ' ')}` inside a function")
            elif i == len(children) - 1:
                tail = self.expr(child)
            else:
                statements.append(A.ExprStmt(self.span(child), self.expr(child), False))
        return A.Block(self.span(node), tuple(hoist_diverging_ifs(statements)), tail)

    def _let(self, node: Node) -> A.Let:
        pattern = node.child_by_field_name("pattern")
        type_node = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        assert pattern is not None
        mutable = any(c.type == "mutable_specifier" for c in node.children)
        if node.child_by_field_name("alternative") is not None:
            self.unsupported(node, "`let ... else`")
        pat = self.pattern(pattern)
        if mutable and isinstance(pat, A.IdentPattern):
            pat = A.IdentPattern(pat.span, pat.name, True)
        return A.Let(
            self.span(node),
            pat,
            self.type_expr(type_node) if type_node else None,
            self.expr(value) if value else None,
        )

    def pattern(self, node: Node) -> A.Pattern:
        span = self.span(node)
        if node.type == "identifier":
            return A.IdentPattern(span, self.text(node))
        if node.type == "mut_pattern":
            inner = self.pattern(node.named_children[-1])
            if isinstance(inner, A.IdentPattern):
                return A.IdentPattern(span, inner.name, True)
            return inner
        if node.type == "tuple_pattern":
            parts = [c for c in node.children if c.is_named or c.type == "_"]
            parts = [c for c in parts if c.type not in ("line_comment", "block_comment")]
            return A.TuplePattern(span, tuple(self.pattern(c) for c in parts))
        if node.type == "slice_pattern":
            return A.ArrayPattern(span, tuple(self._sub_patterns(node)))
        if node.type == "struct_pattern":
            return self._struct_pattern(node)
        if node.type == "_" or self.text(node) == "_":
            return A.WildcardPattern(span)
        self.unsupported(node, f"the pattern `{self.text(node)}`")
        return A.WildcardPattern(span)

    def _sub_patterns(self, node: Node) -> list[A.Pattern]:
        parts = [c for c in node.children if c.is_named or c.type == "_"]
        parts = [c for c in parts if c.type not in ("line_comment", "block_comment")]
        for part in parts:
            if part.type == "remaining_field_pattern":
                self.unsupported(part, "a `..` rest pattern in an array pattern")
        return [self.pattern(c) for c in parts if c.type != "remaining_field_pattern"]

    def _struct_pattern(self, node: Node) -> A.Pattern:
        type_node = node.child_by_field_name("type")
        assert type_node is not None
        fields: list[tuple[str, A.Pattern]] = []
        rest = False
        for child in self.named_children(node):
            if child.type == "remaining_field_pattern":
                rest = True
            elif child.type == "field_pattern":
                name = child.child_by_field_name("name")
                sub = child.child_by_field_name("pattern")
                assert name is not None
                mutable = any(c.type == "mutable_specifier" for c in child.children)
                pattern = (
                    self.pattern(sub)
                    if sub is not None
                    else A.IdentPattern(self.span(child), self.text(name), mutable)
                )
                fields.append((self.text(name), pattern))
        segments = tuple(self.text(type_node).replace(" ", "").split("::"))
        return A.StructPattern(self.span(node), segments, tuple(fields), rest)

    # --- expressions

    def expr(self, node: Node) -> A.Expr:
        handler = self._expr_handlers.get(node.type)
        if handler is None:
            self.unsupported(node, f"the expression `{_short(self.text(node))}`")
            return A.TupleExpr(self.span(node), ())
        return handler(node)

    def _int_literal(self, node: Node) -> A.Expr:
        text = self.text(node).replace("_", "")
        is_hex = text.startswith(("0x", "0X"))
        if not is_hex and text.endswith(_FLOAT_SUFFIXES):  # `1f32` is a float literal
            return self._float_literal(node)
        value_text, suffix = _split_suffix(text, _INT_SUFFIXES)
        if suffix is None and not is_hex and text.endswith(("i128", "u128")):
            self.unsupported(node, "a 128-bit integer literal")
            return A.IntLit(self.span(node), 0, None)
        value = _int_value(value_text)
        if value is None:
            self.sink.add(messages.INTEGER_LITERAL_TOO_LARGE.at(self.span(node), limit=_U128_MAX))
            value = 0
        return A.IntLit(self.span(node), value, suffix)

    def _float_literal(self, node: Node) -> A.Expr:
        text = self.text(node)
        number = _FLOAT_NUMBER.match(text)
        assert number is not None  # tree-sitter's float literals start with a digit
        suffix = text[number.end() :].lstrip("_") or None
        if suffix is not None and suffix not in _FLOAT_SUFFIXES:
            self.sink.add(messages.INVALID_FLOAT_SUFFIX.at(self.span(node), suffix=_short(suffix)))
            suffix = None
        return A.FloatLit(self.span(node), float(number.group().replace("_", "")), suffix)

    def _string_literal(self, node: Node) -> A.Expr:
        content = "".join(
            self.text(c)
            for c in node.named_children
            if c.type in ("string_content", "escape_sequence")
        )
        return A.StrLit(self.span(node), content)

    def _bool_literal(self, node: Node) -> A.Expr:
        return A.BoolLit(self.span(node), self.text(node) == "true")

    def _path_expr(self, node: Node) -> A.Expr:
        segments = tuple(s for s in self.text(node).replace(" ", "").split("::") if s)
        generic_args: tuple[A.GenericArg, ...] = ()
        if node.type == "scoped_identifier":
            path = node.child_by_field_name("path")
            qualified = _find_first(path, "qualified_type") if path is not None else None
            if path is not None and path.type == "bracketed_type" and qualified is not None:
                # `<T as Trait>::NAME` reads as `T::NAME`
                self_type = qualified.child_by_field_name("type")
                name = node.child_by_field_name("name")
                assert self_type is not None and name is not None
                head = tuple(self.text(self_type).replace(" ", "").split("::"))
                return A.PathExpr(self.span(node), (*head, self.text(name)))
            if path is not None and path.type == "generic_type":
                # `Shape::<{ [..] }>` style paths: keep the type's generic args
                inner = self.type_expr(path)
                if isinstance(inner, A.PathType):
                    name = node.child_by_field_name("name")
                    assert name is not None
                    segments = (*inner.segments, self.text(name))
                    generic_args = inner.args
        return A.PathExpr(self.span(node), segments, generic_args)

    def _generic_function(self, node: Node) -> A.Expr:
        function = node.child_by_field_name("function")
        args = node.child_by_field_name("type_arguments")
        assert function is not None
        generic_args = self.generic_args(args) if args else ()
        if function.type == "field_expression":  # x.m::<T> — completed by _call
            inner = self._field(function)
            assert isinstance(inner, A.FieldAccess)
            name = function.child_by_field_name("field")
            assert name is not None
            return A.MethodCall(
                self.span(node), inner.value, inner.name, self.span(name), generic_args, ()
            )
        base = self.expr(function)
        if isinstance(base, A.PathExpr):
            return A.PathExpr(self.span(node), base.segments, generic_args)
        self.unsupported(node, "turbofish on this expression")
        return base

    def _call(self, node: Node) -> A.Expr:
        function = node.child_by_field_name("function")
        arguments = node.child_by_field_name("arguments")
        assert function is not None and arguments is not None
        args = tuple(self.expr(a) for a in self.named_children(arguments))
        span = self.span(node)
        if function.type == "field_expression":
            value = function.child_by_field_name("value")
            field_node = function.child_by_field_name("field")
            assert value is not None and field_node is not None
            return A.MethodCall(
                span, self.expr(value), self.text(field_node), self.span(field_node), (), args
            )
        callee = self.expr(function)
        if isinstance(callee, A.MethodCall):  # x.m::<T>(args)
            return A.MethodCall(
                span, callee.receiver, callee.method, callee.method_span, callee.generic_args, args
            )
        return A.Call(span, callee, args)

    def _field(self, node: Node) -> A.Expr:
        value = node.child_by_field_name("value")
        field_node = node.child_by_field_name("field")
        assert value is not None and field_node is not None
        return A.FieldAccess(self.span(node), self.expr(value), self.text(field_node))

    def _binary(self, node: Node) -> A.Expr:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        operator = node.child_by_field_name("operator")
        assert left is not None and right is not None and operator is not None
        return A.Binary(self.span(node), self.text(operator), self.expr(left), self.expr(right))

    def _unary(self, node: Node) -> A.Expr:
        operator = node.children[0]
        operand = node.named_children[-1]
        return A.Unary(self.span(node), self.text(operator), self.expr(operand))

    def _parenthesized(self, node: Node) -> A.Expr:
        inner = self.named_children(node)
        return self.expr(inner[0])

    def _tuple(self, node: Node) -> A.Expr:
        return A.TupleExpr(self.span(node), tuple(self.expr(c) for c in self.named_children(node)))

    def _array(self, node: Node) -> A.Expr:
        length = node.child_by_field_name("length")
        if length is not None:
            value = next(c for c in self.named_children(node) if c.end_byte <= length.start_byte)
            return A.ArrayRepeat(self.span(node), self.expr(value), self.expr(length))
        return A.ArrayExpr(self.span(node), tuple(self.expr(c) for c in self.named_children(node)))

    def _cast(self, node: Node) -> A.Expr:
        value = node.child_by_field_name("value")
        type_node = node.child_by_field_name("type")
        assert value is not None and type_node is not None
        return A.Cast(self.span(node), self.expr(value), self.type_expr(type_node))

    def _reference(self, node: Node) -> A.Expr:
        value = node.child_by_field_name("value")
        assert value is not None
        mutable = any(c.type == "mutable_specifier" for c in node.children)
        return A.Reference(self.span(node), self.expr(value), mutable)

    def _block_expr(self, node: Node) -> A.Expr:
        return A.BlockExpr(self.span(node), self._block(node))

    def _unsafe_block(self, node: Node) -> A.Expr:
        block = next(c for c in node.named_children if c.type == "block")
        return A.BlockExpr(self.span(node), self._block(block), unsafe=True)

    def _if(self, node: Node) -> A.Expr:
        condition = node.child_by_field_name("condition")
        consequence = node.child_by_field_name("consequence")
        alternative = node.child_by_field_name("alternative")
        assert condition is not None and consequence is not None
        if condition.type in ("let_condition", "let_chain"):
            self.unsupported(condition, "`if let`")
        else_branch: A.Block | A.IfExpr | None = None
        if alternative is not None:
            inner = self.named_children(alternative)[0]
            if inner.type == "if_expression":
                nested = self._if(inner)
                assert isinstance(nested, A.IfExpr)
                else_branch = nested
            else:
                else_branch = self._block(inner)
        return A.IfExpr(
            self.span(node), self.expr(condition), self._block(consequence), else_branch
        )

    def _for(self, node: Node) -> A.Expr:
        pattern = node.child_by_field_name("pattern")
        value = node.child_by_field_name("value")
        body = node.child_by_field_name("body")
        assert pattern is not None and value is not None and body is not None
        return A.ForExpr(
            self.span(node), self.pattern(pattern), self.expr(value), self._block(body)
        )

    def _while(self, node: Node) -> A.Expr:
        condition = node.child_by_field_name("condition")
        body = node.child_by_field_name("body")
        assert condition is not None and body is not None
        return A.WhileExpr(self.span(node), self.expr(condition), self._block(body))

    def _loop(self, node: Node) -> A.Expr:
        body = node.child_by_field_name("body")
        assert body is not None
        return A.LoopExpr(self.span(node), self._block(body))

    def _range(self, node: Node) -> A.Expr:
        children = node.children
        operator = next(c for c in children if c.type in ("..", "..=", "..."))
        start = next(
            (c for c in children if c.is_named and c.end_byte <= operator.start_byte), None
        )
        end = next((c for c in children if c.is_named and c.start_byte >= operator.end_byte), None)
        return A.RangeExpr(
            self.span(node),
            self.expr(start) if start else None,
            self.expr(end) if end else None,
            operator.type != "..",
        )

    def _return(self, node: Node) -> A.Expr:
        inner = self.named_children(node)
        return A.ReturnExpr(self.span(node), self.expr(inner[0]) if inner else None)

    def _break(self, node: Node) -> A.Expr:
        inner = [c for c in self.named_children(node) if c.type != "label"]
        if len(inner) != len(self.named_children(node)):
            self.unsupported(node, "a labelled `break`")
        return A.BreakExpr(self.span(node), self.expr(inner[0]) if inner else None)

    def _continue(self, node: Node) -> A.Expr:
        if self.named_children(node):
            self.unsupported(node, "a labelled `continue`")
        return A.ContinueExpr(self.span(node))

    def _assign(self, node: Node) -> A.Expr:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        assert left is not None and right is not None
        return A.Assign(self.span(node), self.expr(left), self.expr(right))

    def _compound_assign(self, node: Node) -> A.Expr:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        operator = node.child_by_field_name("operator")
        assert left is not None and right is not None and operator is not None
        return A.Assign(
            self.span(node), self.expr(left), self.expr(right), self.text(operator).rstrip("=")
        )

    def _macro(self, node: Node) -> A.Expr:
        macro = node.child_by_field_name("macro")
        assert macro is not None
        token_tree = next((c for c in node.named_children if c.type == "token_tree"), None)
        args = self._reparse_token_tree(token_tree) if token_tree is not None else ()
        return A.MacroCall(self.span(node), self.text(macro).split("::")[-1], args)

    def _struct(self, node: Node) -> A.Expr:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        assert name is not None and body is not None
        path = self._struct_path(name)
        fields: list[tuple[str, A.Expr]] = []
        for child in self.named_children(body):
            if child.type == "field_initializer":
                field_name = child.child_by_field_name("field")
                value = child.child_by_field_name("value")
                assert field_name is not None and value is not None
                fields.append((self.text(field_name), self.expr(value)))
            elif child.type == "shorthand_field_initializer":
                fields.append((self.text(child), A.PathExpr(self.span(child), (self.text(child),))))
            else:
                self.unsupported(child, "struct update syntax")
        return A.StructLit(self.span(node), path, tuple(fields))

    def _struct_path(self, node: Node) -> A.PathExpr:
        if node.type == "generic_type_with_turbofish" or node.type == "generic_type":
            base = node.child_by_field_name("type")
            args = node.child_by_field_name("type_arguments")
            assert base is not None
            segments = tuple(self.text(base).replace(" ", "").split("::"))
            return A.PathExpr(self.span(node), segments, self.generic_args(args) if args else ())
        return A.PathExpr(self.span(node), tuple(self.text(node).replace(" ", "").split("::")))

    def _closure(self, node: Node) -> A.Expr:
        params = node.child_by_field_name("parameters")
        body = node.child_by_field_name("body")
        assert params is not None and body is not None
        patterns = []
        for p in self.named_children(params):
            target = p.child_by_field_name("pattern") if p.type == "parameter" else p
            patterns.append(self.pattern(target if target is not None else p))
        return A.Closure(self.span(node), tuple(patterns), self.expr(body))

    def _index(self, node: Node) -> A.Expr:
        children = self.named_children(node)
        return A.Index(self.span(node), self.expr(children[0]), self.expr(children[1]))


_FLOAT_SUFFIXES = ("f16", "f32", "f64")
_INT_SUFFIXES = ("i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64", "usize")


_U128_MAX = 2**128 - 1
_FLOAT_NUMBER = re.compile(
    r"[0-9][0-9_]*(?:\.(?![A-Za-z_])[0-9_]*)?(?:[eE][+-]?[0-9_]*[0-9][0-9_]*)?"
)
_DIGITS_OF_U128_MAX = {16: 32, 8: 43, 2: 128, 10: 39}


def _int_value(text: str) -> int | None:
    """The value of an integer literal without `_`s and suffix; None when it is larger
    than any integer type holds (counted in digits first: Python refuses to convert more
    than 4,300 decimal digits)."""
    base = {"0x": 16, "0X": 16, "0o": 8, "0b": 2}.get(text[:2], 10)
    digits = (text[2:] if base != 10 else text).lstrip("0")
    if len(digits) > _DIGITS_OF_U128_MAX[base]:
        return None
    try:
        value = int(digits or "0", base)
    except ValueError:  # a digit of the wrong base: tree-sitter reported it already
        return 0
    return value if value <= _U128_MAX else None


def _split_suffix(text: str, suffixes: tuple[str, ...]) -> tuple[str, str | None]:
    if text.startswith(("0x", "0X", "0b", "0o")) and suffixes is not _INT_SUFFIXES:
        return text, None
    for suffix in sorted(suffixes, key=len, reverse=True):
        if text.endswith(suffix) and len(text) > len(suffix):
            return text[: -len(suffix)], suffix
    return text, None


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:37] + "..."


def _find_first(node: Node, kind: str) -> Node | None:
    if node.type == kind:
        return node
    for child in node.children:
        found = _find_first(child, kind)
        if found is not None:
            return found
    return None
