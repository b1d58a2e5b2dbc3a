"""The core of our tile IR: SSA values, declarative ops, blocks, functions, modules.

An op is a frozen dataclass whose fields are tagged with their role:
`result()`, `operand()`, `operands()` (variadic), `optional_operand()`, `attribute()` and
`region()`. Generic code (printer, verifier, bytecode writer, passes) walks ops through
those roles. An op class declares its name, its `TRAITS` (constraints the verifier checks
generically: one operand and result type, a terminator, side effects, ...) and, for what no
trait says, its own `verify()` rules.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from lowering.ir.types import IRType, TokenType
from parser.spans import Span

RESULT, OPERAND, OPERANDS, OPTIONAL_OPERAND, ATTRIBUTE, REGION = (
    "result",
    "operand",
    "operands",
    "optional_operand",
    "attribute",
    "region",
)


class Trait(enum.Enum):
    """A constraint an op class declares; `lowering.ir.verify` checks each one generically."""

    SAME_TYPE = "operands and results share one tile type of numbers"
    FLOATS = "its shared type holds floats"  # with SAME_TYPE
    INTEGERS = "its shared type holds integers"  # with SAME_TYPE
    TERMINATOR = "ends its block"
    SIDE_EFFECTS = "does more than compute its results (so it is not pure)"
    LOOP = "its body is the target of `continue` and `break`"
    PURE_REGIONS = "its regions hold only pure ops"


# element-wise ops whose operands and result share one tile type
FLOAT_ELEMENTWISE = frozenset({Trait.SAME_TYPE, Trait.FLOATS})
INTEGER_ELEMENTWISE = frozenset({Trait.SAME_TYPE, Trait.INTEGERS})


@dataclass(frozen=True)
class Value:
    """An SSA value: a unique id within its function and a type."""

    id: int
    type: IRType

    def __str__(self) -> str:
        return f"%{self.id}"


def result() -> Any:
    return field(metadata={"role": RESULT})


def operand() -> Any:
    return field(metadata={"role": OPERAND})


def operands() -> Any:
    return field(default=(), metadata={"role": OPERANDS})


def optional_operand() -> Any:
    return field(default=None, metadata={"role": OPTIONAL_OPERAND})


def attribute(default: Any = dataclasses.MISSING) -> Any:
    return field(default=default, metadata={"role": ATTRIBUTE})


def region() -> Any:
    return field(metadata={"role": REGION})


@dataclass(frozen=True)
class Block:
    args: tuple[Value, ...]
    ops: tuple[Op, ...]


@dataclass(frozen=True)
class Region:
    blocks: tuple[Block, ...]

    @property
    def block(self) -> Block:
        return self.blocks[0]


@dataclass(frozen=True, kw_only=True)
class Op:
    """Base of every op. Subclasses set `NAME` and declare their fields by role."""

    NAME: ClassVar[str] = ""
    TRAITS: ClassVar[frozenset[Trait]] = frozenset()
    span: Span | None = field(default=None, compare=False, repr=False)

    @classmethod
    @functools.cache
    def fields_with_role(cls, role: str) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if f.metadata.get("role") == role)

    @property
    def results(self) -> tuple[Value, ...]:
        out: list[Value] = []
        for name in self.fields_with_role(RESULT):
            value = getattr(self, name)
            out.extend(value if isinstance(value, tuple) else (value,))
        return tuple(out)

    @property
    def operand_values(self) -> tuple[Value, ...]:
        """All operands in declaration order, variadics flattened, absent optionals skipped."""
        out: list[Value] = []
        for f in dataclasses.fields(self):
            role = f.metadata.get("role")
            value = getattr(self, f.name)
            if role == OPERAND:
                out.append(value)
            elif role == OPERANDS:
                out.extend(value)
            elif role == OPTIONAL_OPERAND and value is not None:
                out.append(value)
        return tuple(out)

    @property
    def attributes(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.fields_with_role(ATTRIBUTE)}

    @property
    def regions(self) -> tuple[Region, ...]:
        return tuple(getattr(self, name) for name in self.fields_with_role(REGION))

    @property
    def is_pure(self) -> bool:
        """No effect beyond its results: no regions, no tokens, no SIDE_EFFECTS trait."""
        if self.regions or Trait.SIDE_EFFECTS in self.TRAITS:
            return False
        values = (*self.results, *self.operand_values)
        return not any(isinstance(v.type, TokenType) for v in values)

    def verify(self) -> list[str]:
        """Rules of this op no trait says; human-readable violations (empty when valid)."""
        return []


@dataclass(frozen=True)
class Function:
    name: str
    params: tuple[Value, ...]
    body: Block
    is_entry: bool = True
    hints: tuple[Any, ...] = ()  # EntryHints, one per arch
    span: Span | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Module:
    functions: tuple[Function, ...]
    globals: tuple[Any, ...] = ()  # ops_pointer.GlobalVar: module-level device globals


OpT = TypeVar("OpT", bound=Op)


class Builder:
    """Builds one function: hands out value ids and collects ops into (nested) blocks."""

    def __init__(self) -> None:
        self._next_id = 0
        self._stack: list[list[Op]] = [[]]
        # the op that defines each value: results, and block arguments of its regions
        self.definitions: dict[int, Op] = {}

    def value(self, type: IRType) -> Value:
        value = Value(self._next_id, type)
        self._next_id += 1
        return value

    def add(self, op: OpT) -> OpT:
        self._stack[-1].append(op)
        for value in op.results:
            self.definitions[value.id] = op
        for region_ in op.regions:
            for block in region_.blocks:
                for arg in block.args:
                    self.definitions[arg.id] = op
        return op

    def emit(self, op_class: type[OpT], **fields: Any) -> OpT:
        """Create and append an op; result fields given as types get fresh values."""
        for name in op_class.fields_with_role(RESULT):
            given = fields[name]
            if isinstance(given, tuple):
                fields[name] = tuple(self._fresh(t) for t in given)
            else:
                fields[name] = self._fresh(given)
        return self.add(op_class(**fields))

    def _fresh(self, given: IRType | Value) -> Value:
        return given if isinstance(given, Value) else self.value(given)

    def region(
        self, arg_types: Sequence[IRType], fill: Callable[[tuple[Value, ...]], None]
    ) -> Region:
        """Build a one-block region: `fill(args)` emits its ops (ending in a terminator)."""
        args = tuple(self.value(t) for t in arg_types)
        self._stack.append([])
        try:
            fill(args)
        finally:
            ops = self._stack.pop()
        return Region((Block(args, tuple(ops)),))

    def finish(self, params: tuple[Value, ...]) -> Block:
        assert len(self._stack) == 1, "unbalanced nested regions"
        return Block(params, tuple(self._stack[0]))


def walk(block: Block) -> Iterator[Op]:
    """Every op of a block, nested ops included, in stream order (pre-order)."""
    for op in block.ops:
        yield op
        for reg in op.regions:
            for inner in reg.blocks:
                yield from walk(inner)


class FreshIds:
    """Fresh values for a pass that adds ops to `function`: ids past every one it uses."""

    def __init__(self, function: Function) -> None:
        used = [v.id for v in function.params]
        for op in walk(function.body):
            used.extend(v.id for v in op.results)
            used.extend(a.id for r in op.regions for b in r.blocks for a in b.args)
        self._next = max(used, default=-1) + 1

    def value(self, type: IRType) -> Value:
        value = Value(self._next, type)
        self._next += 1
        return value


def map_bodies(module: Module, rewrite: Callable[[Block, FreshIds], Block]) -> Module:
    """`module` with each function's body rewritten by `rewrite(body, ids)`, where `ids` gives
    fresh values past the function's (a function whose body comes back unchanged is kept)."""

    def function(f: Function) -> Function:
        body = rewrite(f.body, FreshIds(f))
        return f if body is f.body else dataclasses.replace(f, body=body)

    return dataclasses.replace(module, functions=tuple(function(f) for f in module.functions))


def map_regions(op: Op, rewrite: Callable[[Block], Block]) -> Op:
    """`op` with every block of its regions replaced by `rewrite(block)`; `op` itself when
    every rewrite returned its block unchanged (the same object)."""
    replaced = {}
    for name in op.fields_with_role("region"):
        region: Region = getattr(op, name)
        blocks = tuple(rewrite(b) for b in region.blocks)
        if any(new is not old for new, old in zip(blocks, region.blocks, strict=True)):
            replaced[name] = Region(blocks)
    return dataclasses.replace(op, **replaced) if replaced else op


def substitute(op: Op, values: dict[int, Value]) -> Op:
    """`op` with every operand whose id `values` maps replaced by its value there (nested
    regions are the caller's to walk); `op` itself when none is."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(op):
        role = f.metadata.get("role")
        value = getattr(op, f.name)
        if role in (OPERAND, OPTIONAL_OPERAND) and value is not None and value.id in values:
            changes[f.name] = values[value.id]
        elif role == OPERANDS and any(v.id in values for v in value):
            changes[f.name] = tuple(values.get(v.id, v) for v in value)
    return dataclasses.replace(op, **changes) if changes else op
