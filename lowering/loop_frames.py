"""The `for` loops being lowered (`LoopFrame`) and the checks waiting to be placed before
them (`PreheaderCheck` of an `Affine` index): the records `lowering.preheader` works on."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lowering.ir.core import Value
from parser import ast_nodes as A


@dataclass
class LoopFrame:
    """A `for` loop being lowered: its induction variable, bounds, and the checks that
    will be placed before it."""

    iv: Value
    lower: Value
    upper: Value
    hoistable: bool  # unit step and no `continue`
    depth: int  # the lowering's conditional depth at the loop
    pending: list[PreheaderCheck] = field(default_factory=list)

    def invariant(self, value: Value) -> bool:
        """Defined before the loop body (ids grow in emission order; the IV comes first)."""
        return value.id < self.iv.id


@dataclass(frozen=True)
class Affine:
    """`constant + sum(coefficient * value)`, every coefficient positive."""

    terms: tuple[tuple[int, Value], ...]
    constant: int


@dataclass(frozen=True)
class PreheaderCheck:
    index: Affine
    loops: tuple[LoopFrame, ...]  # the loop it is placed before, then inward to the access
    limit: Callable[[], Value]  # materializes the exclusive upper limit where it is called
    what: str
    span: A.Span
