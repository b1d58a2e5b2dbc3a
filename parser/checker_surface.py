"""What the type rules need of the checker that runs them: its state and the few operations
one family of rules asks of another.

The rule families (`typecheck_ops`, `typecheck_control`, `typecheck_calls`,
`typecheck_debug_and_literals`, `typecheck_memory`, `typecheck_items`, `typecheck_infer`,
`persistent_iterables`) derive from this protocol instead of importing the concrete
`typecheck.Checker`, which composes them: the rules depend on the surface, the checker on the
rules, and nothing back.
"""

from __future__ import annotations

from typing import Any, Protocol

from parser import ast_nodes as A
from parser.call_target import CallTarget
from parser.checker_state import Frame, LiteralHints
from parser.diagnostics import Diagnostic, DiagnosticSink
from parser.inline_budget import InlineBudget
from parser.program import Program
from parser.type_eval import TypeResolver
from parser.typed_kernel import LocalVar, TypedBody
from parser.types import ConstValue, SemType


class CheckerSurface(Protocol):
    """One body's checker, as the rules see it."""

    program: Program
    resolver: TypeResolver
    sink: DiagnosticSink | Any
    facts: TypedBody
    inline_stack: tuple[str, ...]
    budget: InlineBudget
    scopes: list[dict[str, LocalVar]]
    frames: list[Frame]
    var_depth: dict[int, int]
    negated_literals: set[A.IntLit]
    inference: LiteralHints
    defaulted: set[A.Expr]
    flexible: dict[int, A.IdentPattern]
    module_path: tuple[str, ...]

    # the checker's own
    def report(self, diagnostic: Diagnostic) -> None: ...

    def expr(self, expr: A.Expr, expected: SemType | None) -> SemType | None: ...

    def fold(self, expr: A.Expr, through_lets: bool = False) -> ConstValue | None: ...

    def block(
        self, block: A.Block, expected: SemType | None, trailing: type | None = None
    ) -> SemType | None: ...

    def declare(self, var: LocalVar) -> LocalVar: ...

    def lookup(self, name: str) -> LocalVar | None: ...

    def callee_checker(
        self, function: A.Function, resolver: TypeResolver, sink: DiagnosticSink | Any
    ) -> CheckerSurface:
        """A checker for `function`'s body inlined at a call of this one (sharing the
        budget and the literal hints)."""
        ...

    def check_function_body(
        self,
        function: A.Function,
        params: tuple[LocalVar, ...],
        expected: SemType | None,
        trailing: type,
    ) -> SemType | None: ...

    # asked of one rule family by another
    def binary_result(self, op: str, ty: SemType, span: A.Span) -> SemType | None: ...

    def note_default(self, literal: A.Expr) -> None: ...

    def try_flex(self, expr: A.Expr, found: SemType, wanted: SemType) -> bool: ...

    def tuple_struct_call(self, call: A.Call) -> SemType | bool | None: ...

    def user_method(self, call: A.MethodCall, receiver: SemType) -> CallTarget | None: ...

    def associated_function(self, call: A.Call) -> CallTarget | bool | None: ...
