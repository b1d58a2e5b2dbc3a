"""Structured control flow: `for`, `loop`, `if` and their region terminators.

Region-owning ops carry their loop-carried or yielded values as a variadic `outputs`
result. Which terminator may end which region is checked in `lowering.ir.verify`; the
op classes here check operand/argument/result type agreement.
"""

from __future__ import annotations

from dataclasses import dataclass

from lowering.ir.core import Op, Region, Trait, Value, attribute, operand, operands, region, result
from lowering.ir.types import I1, ElementType, TileType


def _types(values: tuple[Value, ...]) -> tuple[object, ...]:
    return tuple(v.type for v in values)


def _is_scalar_int(value: Value) -> bool:
    ty = value.type
    return (
        isinstance(ty, TileType)
        and ty.rank == 0
        and isinstance(ty.element, ElementType)
        and not ty.element.is_float
    )


@dataclass(frozen=True, kw_only=True)
class For(Op):
    """`for %iv in [lower, upper) step step iter_values(init_values)`.

    The body's block arguments are the induction variable, then one per init value;
    `outputs` are the final iter values.
    """

    NAME = "for"
    TRAITS = frozenset({Trait.LOOP})
    outputs: tuple[Value, ...] = result()
    unsigned_cmp: bool = attribute(False)
    lower: Value = operand()
    upper: Value = operand()
    step: Value = operand()
    init_values: tuple[Value, ...] = operands()
    body: Region = region()

    def verify(self) -> list[str]:
        errors = self._bound_errors()
        if len(self.body.blocks) != 1:
            return [*errors, "for body must have exactly one block"]
        args = self.body.block.args
        if len(args) != 1 + len(self.init_values):
            return [*errors, "for body needs the induction variable plus one arg per init value"]
        if args[0].type != self.lower.type:
            errors.append("induction variable type must equal the bounds' type")
        if _types(args[1:]) != _types(self.init_values):
            errors.append("iter arg types must equal init value types")
        if _types(self.outputs) != _types(self.init_values):
            errors.append("for results must have the init values' types")
        return errors

    def _bound_errors(self) -> list[str]:
        bounds = (self.lower, self.upper, self.step)
        if not all(_is_scalar_int(v) for v in bounds):
            return ["for bounds and step must be rank-0 integer tiles"]
        if len({v.type for v in bounds}) != 1:
            return ["for bounds and step must share one type"]
        return []


@dataclass(frozen=True, kw_only=True)
class Loop(Op):
    """An unbounded loop; `continue` starts the next iteration, `break` leaves it."""

    NAME = "loop"
    TRAITS = frozenset({Trait.LOOP})
    outputs: tuple[Value, ...] = result()
    init_values: tuple[Value, ...] = operands()
    body: Region = region()

    def verify(self) -> list[str]:
        if len(self.body.blocks) != 1:
            return ["loop body must have exactly one block"]
        if _types(self.body.block.args) != _types(self.init_values):
            return ["loop block arg types must equal init value types"]
        return []


@dataclass(frozen=True, kw_only=True)
class If(Op):
    """`if condition { then } else { else }`; an else region with no blocks is absent."""

    NAME = "if"
    outputs: tuple[Value, ...] = result()
    condition: Value = operand()
    then_region: Region = region()
    else_region: Region = region()

    def verify(self) -> list[str]:
        errors = [] if self.condition.type == I1 else ["if condition must be tile<i1>"]
        if len(self.then_region.blocks) != 1:
            errors.append("then region must have exactly one block")
        if len(self.else_region.blocks) > 1:
            errors.append("else region must have at most one block")
        if self.outputs and not self.else_region.blocks:
            errors.append("an if with results needs an else region")
        for reg in (self.then_region, self.else_region):
            if any(block.args for block in reg.blocks):
                errors.append("if regions take no block arguments")
        return errors


@dataclass(frozen=True, kw_only=True)
class Yield(Op):
    """Ends an `if` region, giving the `if` its results."""

    NAME = "yield"
    TRAITS = frozenset({Trait.TERMINATOR})
    values: tuple[Value, ...] = operands()


@dataclass(frozen=True, kw_only=True)
class Continue(Op):
    """Ends a loop iteration, passing the next iter values."""

    NAME = "continue"
    TRAITS = frozenset({Trait.TERMINATOR})
    values: tuple[Value, ...] = operands()


@dataclass(frozen=True, kw_only=True)
class Break(Op):
    """Leaves the innermost `loop`, giving it its results."""

    NAME = "break"
    TRAITS = frozenset({Trait.TERMINATOR})
    values: tuple[Value, ...] = operands()
