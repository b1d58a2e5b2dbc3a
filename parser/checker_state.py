"""The mutable state a type checker carries besides its scopes: the loop and `if` frames
being checked, and the literal hints found by earlier inference rounds (`typecheck_infer`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from parser import ast_nodes as A
from parser.typed_kernel import LocalVar
from parser.types import SemType


@dataclass
class Frame:
    """A loop or runtime `if` being checked: the scope depth it starts at, and the outer
    variables assigned inside it."""

    depth: int
    assigned: dict[int, LocalVar] = field(default_factory=dict)
    loop: A.ForExpr | A.WhileExpr | A.LoopExpr | None = None  # set for loops


@dataclass
class LiteralHints:
    """The types flexible bindings must have, found in earlier rounds (by pattern)."""

    types: dict[A.IdentPattern, SemType] = field(default_factory=dict)
    added: bool = False  # this round found something new
    final: bool = False  # the last round: report every mismatch

    def add(self, found: dict[A.IdentPattern, SemType]) -> bool:
        """Record `found`; whether anything changed (then another round is needed)."""
        if self.final or all(self.types.get(p) == t for p, t in found.items()):
            return False
        self.types.update(found)
        self.added = True
        return True
