"""The entry option `optimization_hints = (sm_90 = (num_cta_in_cga = 2, occupancy = 1), ...)`.

Per architecture (`arch`), hints to tileiras about how to run the kernel: `num_cta_in_cga`
(CTAs per tile block, a power of two up to 16; 1 before sm_90), `occupancy` (tile blocks
per SM it should aim for, 1..=32) and `num_worker_warps_per_cta` (a power of two up to 32,
bytecode 13.3+). Values are integer literals or const generics, so a sweep can vary them
through the request's generics. Parsed here into data; the lowering writes them as the
entry's `optimization_hints` attribute (Tile IR checks the same ranges).

`max_divisibility` (a power of two) is ours, not tileiras's: a ceiling on the divisibility
the compiler may assume on that arch from what it was not told in the source (the
default base alignment and the host's measured facts), as cuTile Rust's JIT caps its
inferred hints. Declared `preconditions` are stated facts and stay as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from parser import ast_nodes as A
from parser import messages
from parser.arch import ARCHS
from parser.diagnostics import DiagnosticSink
from parser.type_eval import eval_const

HINT_KEYS = ("num_cta_in_cga", "occupancy", "num_worker_warps_per_cta", "max_divisibility")
_PER_OP_KEYS = ("latency", "allow_tma")
_ARCH = re.compile(r"^sm_(\d+)$")


@dataclass(frozen=True)
class ArchHints:
    """The entry hints for one architecture; None leaves a hint out."""

    arch: str
    num_cta_in_cga: int | None = None
    occupancy: int | None = None
    num_worker_warps_per_cta: int | None = None
    max_divisibility: int | None = None


def divisibility_cap(hints: tuple[ArchHints, ...], arch: str) -> int | None:
    """The `max_divisibility` hint for `arch`, or None (no ceiling)."""
    return next((h.max_divisibility for h in hints if h.arch == arch), None)


def parse_optimization_hints(
    value: A.Expr, env: Mapping[str, object], sink: DiagnosticSink
) -> tuple[ArchHints, ...]:
    """One `ArchHints` per `sm_NN = (..)` item; every malformed item is reported."""
    items = value.elements if isinstance(value, A.TupleExpr) else (value,)
    parsed: list[ArchHints] = []
    for item in items:
        arch = _arch_key(item, sink)
        if arch is None:
            continue
        assert isinstance(item, A.Assign)
        if any(h.arch == arch for h in parsed):
            sink.add(messages.ARCH_HINTS_TWICE.at(item.target.span, arch=arch))
            continue
        hints = _arch_hints(arch, item.value, env, sink)
        if hints is not None:
            parsed.append(hints)
    return tuple(parsed)


def _key_of(expr: A.Expr) -> str | None:
    if isinstance(expr, A.PathExpr) and len(expr.segments) == 1 and not expr.generic_args:
        return expr.segments[0]
    return None


def _arch_key(item: A.Expr, sink: DiagnosticSink) -> str | None:
    key = _key_of(item.target) if isinstance(item, A.Assign) and item.op is None else None
    if key is None:
        sink.add(messages.MALFORMED_ARCH_HINTS.at(item.span))
        return None
    if key not in ARCHS:
        sink.add(messages.UNKNOWN_HINT_ARCH.at(item.target.span, arch=key, known=", ".join(ARCHS)))
        return None
    return key


def _arch_hints(
    arch: str, value: A.Expr, env: Mapping[str, object], sink: DiagnosticSink
) -> ArchHints | None:
    items = value.elements if isinstance(value, A.TupleExpr) else (value,)
    found: dict[str, int] = {}
    ok = True
    for item in items:
        key = _key_of(item.target) if isinstance(item, A.Assign) and item.op is None else None
        problem = _key_problem(key, found)
        if problem is not None:
            message, fields = problem
            sink.add(message.at(item.span, **fields))
            ok = False
            continue
        assert isinstance(item, A.Assign) and key is not None
        number = _hint_value(arch, key, item.value, env, sink)
        if number is None:
            ok = False
            continue
        found[key] = number
    return ArchHints(arch, **found) if ok else None


def _key_problem(
    key: str | None, found: Mapping[str, int]
) -> tuple[messages.Message, dict[str, str]] | None:
    if key is None:
        return messages.MALFORMED_HINT, {}
    if key in _PER_OP_KEYS:
        return messages.PER_LOAD_HINT, {"key": key}
    if key not in HINT_KEYS:
        return messages.UNKNOWN_HINT, {"key": key, "known": ", ".join(HINT_KEYS)}
    if key in found:
        return messages.HINT_TWICE, {"key": key}
    return None


def _hint_value(
    arch: str, key: str, expr: A.Expr, env: Mapping[str, object], sink: DiagnosticSink
) -> int | None:
    try:
        value = eval_const(expr, env)
    except Exception:
        value = None
    if not isinstance(value, int) or isinstance(value, bool):
        sink.add(messages.HINT_NOT_CONSTANT.at(expr.span, arch=arch, key=key))
        return None
    problem = _range_problem(arch, key, value)
    if problem is not None:
        sink.add(
            messages.HINT_OUT_OF_RANGE.at(
                expr.span, arch=arch, key=key, problem=problem, value=value
            )
        )
        return None
    return value


def _is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _range_problem(arch: str, key: str, value: int) -> str | None:
    if key == "occupancy":
        return None if 1 <= value <= 32 else "must be in 1..=32"
    if key == "max_divisibility":
        return None if _is_power_of_two(value) else "must be a power of two"
    if key == "num_worker_warps_per_cta":
        ok = _is_power_of_two(value) and value <= 32
        return None if ok else "must be a power of two up to 32"
    major = int(_ARCH.match(arch).group(1)) // 10  # type: ignore[union-attr]
    if major < 9:
        return None if value == 1 else f"must be 1 before sm_90 (no clusters on {arch})"
    return None if _is_power_of_two(value) and value <= 16 else "must be a power of two up to 16"
