"""Type rules for the names of cuTile Rust's memory surface that are not calls: `None` (an
absent optional operand, `None::<scope::TileBlock>` with its type), `Latency::<N>` (the
latency hint of a raw pointer access) and module `static` globals.
"""

from __future__ import annotations

from parser import ast_nodes as A
from parser import codes
from parser.checker_surface import CheckerSurface
from parser.diagnostics import error
from parser.statics import resolve_static
from parser.types import LatencyTy, OptionTy, SemType

LATENCY_LIMIT = 10  # tileiras accepts latency hints 1..=10; 0 means none


class MemoryRules(CheckerSurface):
    def memory_path(
        self, path: A.PathExpr, expected: SemType | None
    ) -> tuple[bool, SemType | None]:
        """(whether `path` names one of these, its type or None after an error)."""
        if path.segments == ("None",):
            return True, self._none(path, expected)
        if path.segments == ("Latency",) and path.generic_args:
            return True, self._latency(path)
        if len(path.segments) == 1:
            return resolve_static(self.program, path.name, self.resolver.env, self.sink)
        return False, None

    def _none(self, path: A.PathExpr, expected: SemType | None) -> SemType | None:
        if len(path.generic_args) > 1:
            self.report(
                error(
                    codes.GENERIC_ARGUMENT,
                    "`None` takes one type argument",
                    path.span,
                    f"found {len(path.generic_args)}",
                )
            )
            return None
        if path.generic_args:
            written = path.generic_args[0]
            if not isinstance(written, A.TypeArg):
                self.report(
                    error(codes.GENERIC_ARGUMENT, "expected a type", written.span, "not a type")
                )
                return None
            inner = self.resolver.resolve(written.type)
            return None if inner is None else OptionTy(inner, some=False)
        inner = expected.inner if isinstance(expected, OptionTy) else None
        return OptionTy(inner, some=False)

    def _latency(self, path: A.PathExpr) -> SemType | None:
        arg = path.generic_args[0]
        expr = (
            arg.value
            if isinstance(arg, A.ConstArg)
            else A.PathExpr(arg.span, getattr(arg.type, "segments", ("_",)))
        )
        value = self.fold(expr)
        if len(path.generic_args) != 1 or isinstance(value, bool) or not isinstance(value, int):
            self.report(
                error(
                    codes.GENERIC_ARGUMENT,
                    "`Latency` takes one compile-time integer: `Latency::<4>`",
                    path.span,
                    "not a compile-time latency",
                    help=("write a literal or a const generic",),
                )
            )
            return None
        if not 0 <= value <= LATENCY_LIMIT:
            self.report(
                error(
                    codes.GENERIC_ARGUMENT,
                    f"the latency hint must be in 0..={LATENCY_LIMIT}, found {value}",
                    arg.span,
                    "out of range",
                    notes=("tileiras accepts latencies 1..=10; `Latency::<0>` gives no hint",),
                )
            )
            return None
        return LatencyTy(value)
