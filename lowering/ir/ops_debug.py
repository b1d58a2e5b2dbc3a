"""Debugging ops: printf-style printing (token-ordered) and device assertions."""

from __future__ import annotations

from dataclasses import dataclass

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
from lowering.ir.types import ElementType, TileType, TokenType

_CONVERSIONS = "diuoxXeEfFgGaAcsSpn%"


def count_format_args(text: str) -> int | None:
    """How many arguments a printf format consumes (`%%` none); None if one is unterminated.

    Same rule as Tile IR's verifier: a `%` expression runs to the first conversion letter.
    """
    count, pos = 0, 0
    while pos < len(text):
        if text[pos] != "%":
            pos += 1
            continue
        end = next((i for i in range(pos + 1, len(text)) if text[i] in _CONVERSIONS), None)
        if end is None:
            return None
        if text[pos : end + 1] != "%%":
            count += 1
        pos = end + 1
    return count


@dataclass(frozen=True, kw_only=True)
class PrintTko(Op):
    """Print `format` with one tile per `%` expression; ordered only through tokens.

    The result token exists from bytecode 13.2 on (13.1's print has none, so the writer
    refuses to emit this op for 13.1); the optional input `token` orders it after others.
    """

    NAME = "print_tko"
    TRAITS = frozenset({Trait.SIDE_EFFECTS})
    result_token: Value = result()
    format: str = attribute()
    args: tuple[Value, ...] = operands()
    token: Value | None = optional_operand()

    def verify(self) -> list[str]:
        errors = []
        expected = count_format_args(self.format)
        if expected is None:
            errors.append(f"unterminated format expression in {self.format!r}")
        elif expected != len(self.args):
            errors.append(f"format takes {expected} arguments, got {len(self.args)}")
        if any(not isinstance(a.type, TileType) for a in self.args):
            errors.append("arguments must be tiles")
        if not isinstance(self.result_token.type, TokenType):
            errors.append("result must be a token")
        if self.token is not None and not isinstance(self.token.type, TokenType):
            errors.append("token operand must be a token")
        return errors


@dataclass(frozen=True, kw_only=True)
class Assert(Op):
    """Report `message` (with the element index) for every false element of `condition`."""

    NAME = "assert"
    TRAITS = frozenset({Trait.SIDE_EFFECTS})
    message: str = attribute()
    condition: Value = operand()

    def verify(self) -> list[str]:
        ty = self.condition.type
        if not (isinstance(ty, TileType) and ty.element is ElementType.I1):
            return [f"condition must be an i1 tile, got {ty}"]
        return []
