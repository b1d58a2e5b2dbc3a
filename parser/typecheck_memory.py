"""Type rules for the names of cuTile Rust's memory surface that are not calls: `None` (an
absent optional operand, `None::<scope::TileBlock>` with its type), `Latency::<N>` (the
latency hint of a raw pointer access) and module `static` globals.
"""

from __future__ import annotations

from parser import ast_nodes as A
from parser import messages
from parser.checker_surface import CheckerSurface
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
            self.report(messages.NONE_TYPE_ARG_COUNT.at(path.span, count=len(path.generic_args)))
            return None
        if path.generic_args:
            written = path.generic_args[0]
            if not isinstance(written, A.TypeArg):
                self.report(messages.EXPECTED_A_TYPE.at(written.span))
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
            self.report(messages.LATENCY_TYPE_NOT_CONSTANT.at(path.span))
            return None
        if not 0 <= value <= LATENCY_LIMIT:
            self.report(
                messages.LATENCY_HINT_OUT_OF_RANGE.at(arg.span, limit=LATENCY_LIMIT, value=value)
            )
            return None
        return LatencyTy(value)
