"""Module verifier: each op's declared traits (`lowering.ir.core.Trait`), its own `verify()`,
and the structural rules of the IR.

SSA: every value is defined once; an operand must be a function parameter, an
enclosing block's argument, or a result of an earlier op in this or an enclosing block.
Regions end in the terminator their owner expects; function bodies end in `return`;
tile dimensions are powers of two (tileiras rejects anything else). The bodies of
`reduce`/`scan` hold only pure ops and yield one rank-0 tile per input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lowering.ir.core import Block, Function, Module, Op, Trait, Value, walk
from lowering.ir.ops_control import Break, Continue, For, If, Loop, Yield
from lowering.ir.ops_core import Return
from lowering.ir.ops_pointer import GetGlobal, pointee
from lowering.ir.ops_reduce import Reduce, Scan
from lowering.ir.types import ElementType, TileType

SYMBOL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Scope = dict[int, Value]


@dataclass
class _Checker:
    """Accumulates the errors of one function."""

    function: str
    errors: list[str] = field(default_factory=list)
    defined: set[int] = field(default_factory=set)

    def error(self, op: Op | None, message: str) -> None:
        where = f"@{self.function}" + (f": {op.NAME}" if op is not None else "")
        self.errors.append(f"{where}: {message}")


def verify_module(module: Module) -> list[str]:
    """All violations in `module`, in a stable order (empty when it is valid)."""
    errors: list[str] = []
    seen: set[str] = set()
    for fn in module.functions:
        if fn.name in seen:
            errors.append(f"@{fn.name}: duplicate function name")
        seen.add(fn.name)
        errors += verify_function(fn)
    return errors + _global_errors(module)


def _global_errors(module: Module) -> list[str]:
    """Globals have distinct symbol names, and every `get_global` names one of them with
    its element type."""
    errors: list[str] = []
    declared = {g.name: g for g in module.globals}
    if len(declared) != len(module.globals):
        errors.append("duplicate global name")
    for fn in module.functions:
        for op in walk(fn.body):
            if not isinstance(op, GetGlobal):
                continue
            var = declared.get(op.name)
            if var is None:
                errors.append(f"@{fn.name}: get_global: no global named @{op.name}")
            elif pointee(op.result) is not var.element:
                errors.append(f"@{fn.name}: get_global: @{op.name} holds {var.element}")
    return errors


def verify_function(fn: Function) -> list[str]:
    checker = _Checker(fn.name)
    _check_signature(fn, checker)
    scope: Scope = {}
    _define(fn.params, scope, checker)
    body = fn.body
    if body.args != fn.params:
        checker.error(None, "body block arguments must be the function parameters")
    _check_ops(body, scope, checker, loop=None, nested=False)
    last = body.ops[-1] if body.ops else None
    if not isinstance(last, Return):
        checker.error(None, "function body must end with return")
    return checker.errors


def _check_signature(fn: Function, checker: _Checker) -> None:
    if not SYMBOL.fullmatch(fn.name):
        checker.error(None, "name must match [A-Za-z_][A-Za-z0-9_]* (a PTX identifier)")
    if fn.is_entry and any(not _is_scalar_tile(p) for p in fn.params):
        checker.error(None, "entry parameters must be rank-0 tiles")


def _is_scalar_tile(value: Value) -> bool:
    return isinstance(value.type, TileType) and value.type.rank == 0


def _define(values: tuple[Value, ...], scope: Scope, checker: _Checker) -> None:
    for value in values:
        if value.id in checker.defined:
            checker.error(None, f"value {value} is defined more than once")
        checker.defined.add(value.id)
        scope[value.id] = value
        if not _power_of_two_dims(value):
            checker.error(None, f"{value}: tile dimensions must be powers of two ({value.type})")


def _power_of_two_dims(value: Value) -> bool:
    ty = value.type
    shape = ty.shape if isinstance(ty, TileType) else ()
    return all(d > 0 and d & (d - 1) == 0 for d in shape)


def _check_ops(
    block: Block, scope: Scope, checker: _Checker, loop: Op | None, nested: bool
) -> None:
    """Check the ops of `block`; `scope` already holds the block's arguments.

    `loop` is the nearest enclosing `for`/`loop` that a `continue`/`break` may target.
    """
    for position, op in enumerate(block.ops):
        _check_operands(op, scope, checker)
        for message in (*trait_errors(op), *op.verify()):
            checker.error(op, message.removeprefix(f"{op.NAME}: "))
        if Trait.TERMINATOR in op.TRAITS and position != len(block.ops) - 1:
            checker.error(op, "a terminator must be the last op of its block")
        if isinstance(op, Return) and nested:
            checker.error(op, "return is only allowed at the end of the function body")
        for region in op.regions:
            for inner in region.blocks:
                _check_region_block(op, inner, scope, checker, loop)
        _define(op.results, scope, checker)


def trait_errors(op: Op) -> list[str]:
    """The violations of what `op`'s class declares in `TRAITS`."""
    if Trait.SAME_TYPE not in op.TRAITS:
        return []
    values = (*op.results, *op.operand_values)
    first = values[0].type
    if any(v.type != first for v in values):
        return ["operand and result types differ"]
    if not isinstance(first, TileType) or not isinstance(first.element, ElementType):
        return ["operands must be tiles of numbers"]
    for trait, wants_float, kind in (
        (Trait.FLOATS, True, "float"),
        (Trait.INTEGERS, False, "integer"),
    ):
        if trait in op.TRAITS and first.element.is_float != wants_float:
            return [f"needs {kind} operands, got {first}"]
    return []


def _check_operands(op: Op, scope: Scope, checker: _Checker) -> None:
    for value in op.operand_values:
        known = scope.get(value.id)
        if known is None:
            checker.error(op, f"operand {value} is not defined in a dominating position")
        elif known.type != value.type:
            checker.error(op, f"operand {value} has type {value.type}, defined as {known.type}")


def _check_region_block(
    owner: Op, block: Block, scope: Scope, checker: _Checker, loop: Op | None
) -> None:
    inner_scope = dict(scope)
    _define(block.args, inner_scope, checker)
    if Trait.LOOP in owner.TRAITS:
        inner_loop: Op | None = owner
    else:
        inner_loop = loop if isinstance(owner, If) else None
    _check_ops(block, inner_scope, checker, inner_loop, nested=True)
    _check_terminator(owner, block, checker, loop)
    if Trait.PURE_REGIONS in owner.TRAITS:
        for op in block.ops[:-1]:
            if not op.is_pure:
                checker.error(op, f"only pure ops are allowed inside {owner.NAME}")


def _check_terminator(owner: Op, block: Block, checker: _Checker, loop: Op | None) -> None:
    allowed = _allowed_terminators(owner, loop)
    last = block.ops[-1] if block.ops else None
    if last is None or type(last) not in allowed:
        names = " or ".join(sorted(t.NAME for t in allowed))
        checker.error(owner, f"region must end with {names}")
        return
    got = tuple(v.type for v in last.operand_values)
    want = allowed[type(last)]
    if got != want:
        checker.error(last, f"carries {_fmt(got)} but {owner.NAME} expects {_fmt(want)}")


def _allowed_terminators(owner: Op, loop: Op | None) -> dict[type[Op], tuple[object, ...]]:
    """Terminator class -> operand types it must carry, for a block of `owner`."""
    outputs = tuple(v.type for v in owner.results)
    if isinstance(owner, For):
        return {Continue: outputs}
    if isinstance(owner, Loop):
        return {Continue: tuple(v.type for v in owner.init_values), Break: outputs}
    if isinstance(owner, (Reduce, Scan)):
        return {Yield: owner.yield_types}
    allowed: dict[type[Op], tuple[object, ...]] = {Yield: outputs}
    if isinstance(owner, If) and isinstance(loop, (For, Loop)):
        allowed[Continue] = tuple(v.type for v in loop.init_values)
        if isinstance(loop, Loop):
            allowed[Break] = tuple(v.type for v in loop.results)
    return allowed


def _fmt(types: tuple[object, ...]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"
