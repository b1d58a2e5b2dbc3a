"""Core ops: tokens, grid dependencies, assumptions, grid queries, constants, shape changes,
return."""

from __future__ import annotations

import math
from dataclasses import dataclass

from lowering.ir.attributes import AssumePredicate, Bounded, DivBy, SameElements
from lowering.ir.core import (
    Op,
    Trait,
    Value,
    attribute,
    operand,
    operands,
    optional_operand,
    result,
)
from lowering.ir.types import TileType, TokenType


@dataclass(frozen=True, kw_only=True)
class MakeToken(Op):
    NAME = "make_token"
    result: Value = result()

    def verify(self) -> list[str]:
        return [] if isinstance(self.result.type, TokenType) else ["result must be a token"]


@dataclass(frozen=True, kw_only=True)
class JoinTokens(Op):
    NAME = "join_tokens"
    result: Value = result()
    tokens: tuple[Value, ...] = operands()

    def verify(self) -> list[str]:
        if len(self.tokens) < 2:
            return ["join_tokens needs at least two tokens"]
        return [] if all(isinstance(t.type, TokenType) for t in self.tokens) else ["non-token"]


@dataclass(frozen=True, kw_only=True)
class _GridDependencyOp(Op):
    """A grid-dependency control op (bytecode 13.4+): a result token, an optional one in."""

    TRAITS = frozenset({Trait.SIDE_EFFECTS})
    result_token: Value = result()
    token: Value | None = optional_operand()

    def verify(self) -> list[str]:
        errors = [] if isinstance(self.result_token.type, TokenType) else ["result must be a token"]
        if self.token is not None and not isinstance(self.token.type, TokenType):
            errors.append("token operand must be a token")
        return errors


@dataclass(frozen=True, kw_only=True)
class GdcWaitTko(_GridDependencyOp):
    """Wait until the grids this launch depends on (a programmatic dependent launch) have
    completed and their memory is visible; nothing to wait for in a plain launch. Memory
    accesses that must come after it take its token."""

    NAME = "gdc_wait_tko"


@dataclass(frozen=True, kw_only=True)
class GdcLaunchDependentsTko(_GridDependencyOp):
    """Let the grids that depend on this one start launching once every tile block of this
    grid has passed here (they still wait for its completion)."""

    NAME = "gdc_launch_dependents_tko"


@dataclass(frozen=True, kw_only=True)
class Assume(Op):
    """Tell the assembler a fact about a value; the result is the same value."""

    NAME = "assume"
    result: Value = result()
    predicate: AssumePredicate = attribute()
    value: Value = operand()

    def verify(self) -> list[str]:
        errors = [] if self.result.type == self.value.type else ["result type != operand type"]
        if isinstance(self.predicate, DivBy) and self.predicate.divisor <= 0:
            errors.append("div_by divisor must be positive")
        if isinstance(self.predicate, Bounded) and None not in (
            self.predicate.lower,
            self.predicate.upper,
        ):
            assert self.predicate.lower is not None and self.predicate.upper is not None
            if self.predicate.lower > self.predicate.upper:
                errors.append("bounded lower > upper")
        if isinstance(self.predicate, SameElements):
            errors += _same_elements_problems(self.predicate, self.value.type)
        return errors


def _same_elements_problems(predicate: SameElements, ty: object) -> list[str]:
    """One positive group size per tile dimension, each dividing its extent."""
    shape = getattr(ty, "shape", None)
    if shape is None or len(shape) != len(predicate.groups):
        return [f"same_elements needs one group per dimension of {ty}"]
    if any(g <= 0 or d % g for g, d in zip(predicate.groups, shape, strict=True)):
        return [f"same_elements groups {list(predicate.groups)} must divide {list(shape)}"]
    return []


@dataclass(frozen=True, kw_only=True)
class GetTileBlockId(Op):
    NAME = "get_tile_block_id"
    x: Value = result()
    y: Value = result()
    z: Value = result()


@dataclass(frozen=True, kw_only=True)
class GetNumTileBlocks(Op):
    NAME = "get_num_tile_blocks"
    x: Value = result()
    y: Value = result()
    z: Value = result()


@dataclass(frozen=True, kw_only=True)
class Constant(Op):
    """A constant tile. One value is a splat; otherwise one value per element (row-major)."""

    NAME = "constant"
    result: Value = result()
    values: tuple[int | float | bool, ...] = attribute()

    def verify(self) -> list[str]:
        ty = self.result.type
        if not isinstance(ty, TileType):
            return ["constant result must be a tile"]
        count = math.prod(ty.shape)
        if len(self.values) not in (1, count):
            return [f"constant has {len(self.values)} values for {count} elements"]
        return []


@dataclass(frozen=True, kw_only=True)
class Broadcast(Op):
    """Expand size-1 dimensions (same rank) to the result shape."""

    NAME = "broadcast"
    result: Value = result()
    source: Value = operand()

    def verify(self) -> list[str]:
        src, dst = self.source.type, self.result.type
        if not (isinstance(src, TileType) and isinstance(dst, TileType)):
            return ["broadcast works on tiles"]
        if src.element != dst.element or src.rank != dst.rank:
            return ["broadcast keeps element type and rank"]
        if any(s not in (1, d) for s, d in zip(src.shape, dst.shape, strict=False)):
            return [f"cannot broadcast {src} to {dst}"]
        return []


@dataclass(frozen=True, kw_only=True)
class Reshape(Op):
    NAME = "reshape"
    result: Value = result()
    source: Value = operand()

    def verify(self) -> list[str]:
        src, dst = self.source.type, self.result.type
        if not (isinstance(src, TileType) and isinstance(dst, TileType)):
            return ["reshape works on tiles"]
        if src.element != dst.element or math.prod(src.shape) != math.prod(dst.shape):
            return [f"cannot reshape {src} to {dst}"]
        return []


@dataclass(frozen=True, kw_only=True)
class Return(Op):
    NAME = "return"
    TRAITS = frozenset({Trait.TERMINATOR})
    values: tuple[Value, ...] = operands()
