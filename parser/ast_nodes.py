"""The kernel AST: frozen dataclasses with spans, built once from tree-sitter's CST.

Only `#[cutile::module]` modules are converted; host code around them is never looked
at. Nothing after `parser.cst_to_ast` sees tree-sitter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

from parser.spans import SourceFile, Span

if TYPE_CHECKING:
    from parser.diagnostics import Diagnostic


@dataclass(frozen=True, eq=False)
class Node:
    span: Span = field(compare=False, repr=False)


# ----------------------------------------------------------------------------- types


@dataclass(frozen=True, eq=False)
class PathType(Node):
    """`f32`, `Tensor<f32, { [B] }>`, `Tile<E, S>`, `cutile::core::Token`."""

    segments: tuple[str, ...]
    args: tuple[GenericArg, ...] = ()

    @property
    def name(self) -> str:
        return self.segments[-1]


@dataclass(frozen=True, eq=False)
class RefType(Node):
    inner: TypeExpr
    mutable: bool


@dataclass(frozen=True, eq=False)
class TupleType(Node):
    elements: tuple[TypeExpr, ...]


@dataclass(frozen=True, eq=False)
class ArrayType(Node):
    element: TypeExpr
    length: Expr | None  # None for a slice `[T]`


@dataclass(frozen=True, eq=False)
class PointerType(Node):
    inner: TypeExpr
    mutable: bool


@dataclass(frozen=True, eq=False)
class InferType(Node):
    """`_`"""


TypeExpr = Union[PathType, RefType, TupleType, ArrayType, PointerType, InferType]


@dataclass(frozen=True, eq=False)
class TypeArg(Node):
    type: TypeExpr


@dataclass(frozen=True, eq=False)
class ConstArg(Node):
    """A const generic argument: `{ [BM, BN] }`, `128`, `-1`."""

    value: Expr


GenericArg = Union[TypeArg, ConstArg]


# ----------------------------------------------------------------------------- expressions


@dataclass(frozen=True, eq=False)
class IntLit(Node):
    value: int
    suffix: str | None  # "i32", "usize", ... or None


@dataclass(frozen=True, eq=False)
class FloatLit(Node):
    value: float
    suffix: str | None


@dataclass(frozen=True, eq=False)
class BoolLit(Node):
    value: bool


@dataclass(frozen=True, eq=False)
class StrLit(Node):
    value: str  # the raw text between the quotes (escapes kept as written)


@dataclass(frozen=True, eq=False)
class PathExpr(Node):
    """A name or path: `x`, `f32::NEG_INFINITY`, `ordering::Weak`, `f::<T>` (turbofish)."""

    segments: tuple[str, ...]
    generic_args: tuple[GenericArg, ...] = ()

    @property
    def name(self) -> str:
        return self.segments[-1]


@dataclass(frozen=True, eq=False)
class Call(Node):
    function: Expr
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class MethodCall(Node):
    receiver: Expr
    method: str
    method_span: Span = field(compare=False, repr=False)
    generic_args: tuple[GenericArg, ...]
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class Binary(Node):
    op: str  # "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "==", "<", "&&", ...
    lhs: Expr
    rhs: Expr


@dataclass(frozen=True, eq=False)
class Unary(Node):
    op: str  # "-", "!", "*"
    operand: Expr


@dataclass(frozen=True, eq=False)
class FieldAccess(Node):
    value: Expr
    name: str  # "0" for tuple fields


@dataclass(frozen=True, eq=False)
class Index(Node):
    value: Expr
    index: Expr


@dataclass(frozen=True, eq=False)
class TupleExpr(Node):
    elements: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class ArrayExpr(Node):
    elements: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class Cast(Node):
    value: Expr
    type: TypeExpr


@dataclass(frozen=True, eq=False)
class Reference(Node):
    value: Expr
    mutable: bool


@dataclass(frozen=True, eq=False)
class BlockExpr(Node):
    block: Block
    unsafe: bool = False


@dataclass(frozen=True, eq=False)
class IfExpr(Node):
    condition: Expr
    then_block: Block
    else_branch: Block | IfExpr | None


@dataclass(frozen=True, eq=False)
class ForExpr(Node):
    pattern: Pattern
    iterable: Expr
    body: Block


@dataclass(frozen=True, eq=False)
class WhileExpr(Node):
    condition: Expr
    body: Block


@dataclass(frozen=True, eq=False)
class LoopExpr(Node):
    body: Block


@dataclass(frozen=True, eq=False)
class RangeExpr(Node):
    start: Expr | None
    end: Expr | None
    inclusive: bool


@dataclass(frozen=True, eq=False)
class ReturnExpr(Node):
    value: Expr | None


@dataclass(frozen=True, eq=False)
class BreakExpr(Node):
    value: Expr | None


@dataclass(frozen=True, eq=False)
class ContinueExpr(Node):
    pass


@dataclass(frozen=True, eq=False)
class Assign(Node):
    target: Expr
    value: Expr
    op: str | None = None  # "+" for `+=`, None for plain `=`


@dataclass(frozen=True, eq=False)
class MacroCall(Node):
    """`const_shape![..]`, `cuda_tile_print!(..)`; args parsed as expressions when possible."""

    name: str
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class StructLit(Node):
    path: PathExpr
    fields: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True, eq=False)
class Closure(Node):
    params: tuple[Pattern, ...]
    body: Expr


@dataclass(frozen=True, eq=False)
class ArrayRepeat(Node):
    """`[value; count]`; `count` is a compile-time constant."""

    value: Expr
    count: Expr


Expr = Union[
    IntLit,
    FloatLit,
    BoolLit,
    StrLit,
    PathExpr,
    Call,
    MethodCall,
    Binary,
    Unary,
    FieldAccess,
    Index,
    TupleExpr,
    ArrayExpr,
    Cast,
    Reference,
    BlockExpr,
    IfExpr,
    ForExpr,
    WhileExpr,
    LoopExpr,
    RangeExpr,
    ReturnExpr,
    BreakExpr,
    ContinueExpr,
    Assign,
    MacroCall,
    StructLit,
    Closure,
    ArrayRepeat,
]


# ----------------------------------------------------------------------------- patterns


@dataclass(frozen=True, eq=False)
class IdentPattern(Node):
    name: str
    mutable: bool = False


@dataclass(frozen=True, eq=False)
class TuplePattern(Node):
    elements: tuple[Pattern, ...]


@dataclass(frozen=True, eq=False)
class WildcardPattern(Node):
    pass


@dataclass(frozen=True, eq=False)
class ArrayPattern(Node):
    """`[a, _, c]`: one pattern per element of an array."""

    elements: tuple[Pattern, ...]


@dataclass(frozen=True, eq=False)
class StructPattern(Node):
    """`Name { a, b: pat, .. }` (`rest` for the `..`)."""

    path: tuple[str, ...]
    fields: tuple[tuple[str, Pattern], ...]
    rest: bool = False


Pattern = Union[IdentPattern, TuplePattern, WildcardPattern, ArrayPattern, StructPattern]


# ----------------------------------------------------------------------------- statements


@dataclass(frozen=True, eq=False)
class Let(Node):
    pattern: Pattern
    type: TypeExpr | None
    value: Expr | None


@dataclass(frozen=True, eq=False)
class ExprStmt(Node):
    expr: Expr
    semicolon: bool


@dataclass(frozen=True, eq=False)
class ConstItem(Node):
    name: str
    type: TypeExpr
    value: Expr


@dataclass(frozen=True, eq=False)
class StaticItem(Node):
    """`static NAME: T = value;` at module level (only `Global<E, {[]}>` is supported)."""

    name: str
    type: TypeExpr
    value: Expr
    mutable: bool = False


Stmt = Union[Let, ExprStmt, ConstItem]


@dataclass(frozen=True, eq=False)
class Block(Node):
    statements: tuple[Stmt, ...]
    tail: Expr | None  # the final expression without a semicolon


# ----------------------------------------------------------------------------- items


@dataclass(frozen=True, eq=False)
class TypeParam(Node):
    name: str
    bounds: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class ConstParam(Node):
    name: str
    type: TypeExpr


GenericParam = Union[TypeParam, ConstParam]


@dataclass(frozen=True, eq=False)
class Param(Node):
    name: str
    type: TypeExpr
    mutable_binding: bool = False


@dataclass(frozen=True, eq=False)
class EntryOption(Node):
    key: str
    value: Expr | None  # None for a bare flag


@dataclass(frozen=True, eq=False)
class EntryAttr(Node):
    options: tuple[EntryOption, ...]


@dataclass(frozen=True, eq=False)
class Function(Node):
    name: str
    name_span: Span = field(compare=False, repr=False)
    generics: tuple[GenericParam, ...]
    params: tuple[Param, ...]
    return_type: TypeExpr | None
    body: Block
    is_unsafe: bool
    entry: EntryAttr | None
    module_path: tuple[str, ...]
    # unsupported syntax inside this function: reported only when the function is used
    # (an entry compiled or a call inlined), as cuTile compiles only what it reaches
    problems: tuple[Diagnostic, ...] = field(default=(), compare=False, repr=False)

    @property
    def qualified_name(self) -> str:
        return "::".join((*self.module_path, self.name))


@dataclass(frozen=True, eq=False)
class UseDecl(Node):
    path: tuple[str, ...]  # ("cutile", "core", "*")


@dataclass(frozen=True, eq=False)
class StructField(Node):
    name: str  # "0", "1", ... for a tuple struct
    type: TypeExpr


@dataclass(frozen=True, eq=False)
class StructDef(Node):
    """`struct Name { a: T, .. }`, `struct Name(T, ..);` or the unit `struct Name;`."""

    name: str
    generics: tuple[GenericParam, ...]
    fields: tuple[StructField, ...]
    module_path: tuple[str, ...]
    derives: tuple[str, ...] = ()  # `#[derive(Clone, Copy)]` -> ("Clone", "Copy")


@dataclass(frozen=True, eq=False)
class ImplBlock(Node):
    """`impl<..> Type { .. }` or `impl<..> Trait for Type { .. }`: methods, associated
    functions and consts of `self_type` (inlined where they are called)."""

    generics: tuple[GenericParam, ...]
    self_type: TypeExpr
    trait: str | None
    functions: tuple[Function, ...]
    consts: tuple[ConstItem, ...]
    module_path: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class TraitDef(Node):
    """`trait Name { .. }`: required items by name, default methods and consts."""

    name: str
    functions: tuple[Function, ...]  # default methods (with a body)
    consts: tuple[ConstItem, ...]  # associated consts with a default value
    required: tuple[str, ...]  # methods and consts without a default
    module_path: tuple[str, ...]


@dataclass(frozen=True, eq=False)
class TypeAlias(Node):
    """`type Name = T;`"""

    name: str
    type: TypeExpr


@dataclass(frozen=True, eq=False)
class KernelModule(Node):
    """A `#[cutile::module]` module (or an inline sub-module of one)."""

    path: tuple[str, ...]  # ("kernel",) or ("outer", "inner")
    uses: tuple[UseDecl, ...]
    functions: tuple[Function, ...]
    consts: tuple[ConstItem, ...]
    statics: tuple[StaticItem, ...] = ()
    structs: tuple[StructDef, ...] = ()
    impls: tuple[ImplBlock, ...] = ()
    traits: tuple[TraitDef, ...] = ()
    aliases: tuple[TypeAlias, ...] = ()


@dataclass(frozen=True, eq=False)
class ParsedFile:
    source: SourceFile
    modules: tuple[KernelModule, ...]


def split_trailing(block: Block, kind: type) -> tuple[tuple[Stmt, ...], Expr | None]:
    """Statements and tail of a body, reading a final `return x;` (kind ReturnExpr) as the
    tail `x` and dropping a final `continue;` / `return;`, which change nothing there."""
    statements, tail = block.statements, block.tail
    if tail is None and statements:
        last = statements[-1]
        if isinstance(last, ExprStmt) and isinstance(last.expr, kind):
            return statements[:-1], getattr(last.expr, "value", None)
    return statements, tail


def range_bounds(iterable: Expr) -> tuple[Expr, Expr, Expr | None] | None:
    """`a..b` or `(a..b).step_by(k)` as (start, end, step); None for anything else."""
    step = None
    if isinstance(iterable, MethodCall) and iterable.method == "step_by" and iterable.args:
        step = iterable.args[0]
        iterable = iterable.receiver
    if (
        isinstance(iterable, RangeExpr)
        and not iterable.inclusive
        and iterable.start is not None
        and iterable.end is not None
    ):
        return iterable.start, iterable.end, step
    return None


def early_return_guards(body: Block) -> list[IfExpr]:
    """`if c { ..; return; }` statements (no `else`) directly in a function body: an early
    exit; everything after such a statement runs only when `c` is false."""
    guards = []
    for statement in body.statements:
        if not (isinstance(statement, ExprStmt) and isinstance(statement.expr, IfExpr)):
            continue
        node = statement.expr
        last = node.then_block.statements[-1:] if node.then_block.tail is None else ()
        if (
            node.else_branch is None
            and last
            and isinstance(last[0], ExprStmt)
            and isinstance(last[0].expr, ReturnExpr)
            and last[0].expr.value is None
        ):
            guards.append(node)
    return guards
