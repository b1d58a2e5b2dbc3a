"""The cost model of device-function inlining: what one entry's inlining may expand.

Every call of a device function is checked (and later lowered) as a copy of its body with
that call's types, so work grows with the code inlined, not with the source: thirty
functions that each call the next twice are 3 KB of source and 2^30 copies. One entry's
inlining may therefore expand at most MAX_INLINED_NODES in all: each call costs the AST
nodes of its callee's body plus CALL_COST (nested calls are charged again), and calls may
nest at most MAX_INLINE_DEPTH deep. The first call that would pass either limit is
reported (CT0006) with the chain of calls that led to it, and inlining stops there; a call
back into a function already on that chain is recursion, reported as such.

A call costs about 0.3 ms to check, lower and encode, so the budget bounds the inlining of
one compile to well under a second. Every cutile-rs kernel spends at most 213 of it and
the largest example here 918; they nest device functions at most 2 deep.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from parser import ast_nodes as A
from parser import messages
from parser.diagnostics import Diagnostic
from parser.spans import Span

MAX_INLINED_NODES = 20_000
CALL_COST = 20  # what a call costs besides its body: a checker, scopes, facts
MAX_INLINE_DEPTH = 16


@dataclass
class InlineBudget:
    """What one entry's inlining has spent; shared by the checkers of every inlined body."""

    spent: int = 0
    reported: bool = False  # a limit was hit and reported: every later call stops quietly
    errors: int = 0  # errors the entry's checkers reported (see typecheck.MAX_ERRORS)
    sizes: dict[A.Function, int] = field(default_factory=dict)

    def charge(self, function: A.Function) -> bool:
        """Spend the cost of inlining `function` once more; False when it does not fit."""
        cost = self.sizes.get(function)
        if cost is None:
            cost = self.sizes[function] = node_count(function.body) + CALL_COST
        if self.spent + cost > MAX_INLINED_NODES:
            return False
        self.spent += cost
        return True


def node_count(root: object) -> int:
    """The AST nodes under `root` (itself included), counted without recursion."""
    count = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            stack.extend(node)
        elif dataclasses.is_dataclass(node) and type(node).__module__ == A.__name__:
            count += 1
            stack.extend(getattr(node, f.name) for f in dataclasses.fields(node))
    return count


def chain_note(stack: tuple[str, ...], callee: str) -> str:
    names = [*stack, callee]
    if len(names) > 12:
        names = [*names[:5], f"... {len(names) - 10} more ...", *names[-5:]]
    return "the chain of calls: " + " -> ".join(f"`{n}`" if " " not in n else n for n in names)


def too_deep(span: Span, stack: tuple[str, ...], callee: str) -> Diagnostic:
    return messages.CALLS_NEST_TOO_DEEP.at(
        span,
        limit=MAX_INLINE_DEPTH,
        callee=callee,
        level=len(stack) + 1,
        chain=chain_note(stack, callee),
    )


def over_budget(span: Span, stack: tuple[str, ...], callee: str) -> Diagnostic:
    return messages.INLINING_OVER_BUDGET.at(
        span, callee=callee, limit=MAX_INLINED_NODES, chain=chain_note(stack, callee)
    )
