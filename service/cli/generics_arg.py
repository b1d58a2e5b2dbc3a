"""`--generics` values of `cutile-compile` (and the editor's sample generics): `B=128`,
`E=f16,B=1024`, `128`, `S=[64, 32]`, `saxpy:E=f16,B=1024` (scoped to one entry)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from service.cli.facts_arg import names_entry
from service.convert import clip

_SCOPED = re.compile(r"\s*((?:[A-Za-z_]\w*::)*[A-Za-z_]\w*):(?!:)(.*)", re.DOTALL)
_NAMED = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(.*)", re.DOTALL)
_OPEN, _CLOSE = "[{(", "]})"


class UsageError(Exception):
    """A command line `cutile-compile` cannot use; its text is the message for the user."""


@dataclass(frozen=True)
class GenericsSet:
    """One `--generics` value: by name or by position, never both."""

    named: tuple[tuple[str, str], ...] = ()
    positional: tuple[str, ...] = ()
    entry: str | None = None  # `saxpy:E=f16,B=1024` applies to `saxpy` only

    def describe(self) -> str:
        items = [f"{n}={v}" for n, v in self.named] or list(self.positional)
        return ", ".join(items) or "no generics"

    def applies_to(self, entry: str) -> bool:
        return self.entry is None or names_entry(entry, self.entry)


def generics_for(entry: str, sets: Sequence[GenericsSet]) -> list[GenericsSet]:
    """The sets scoped to `entry`, else the unscoped ones, else one empty set."""
    scoped = [g for g in sets if g.entry is not None and g.applies_to(entry)]
    return scoped or [g for g in sets if g.entry is None] or [GenericsSet()]


def parse_generics(text: str) -> GenericsSet:
    """`B=128`, `E=f16,B=1024`, `128`, `S=[64, 32]`, `saxpy:E=f16,B=1024`; raises
    `UsageError`."""
    scope = _SCOPED.fullmatch(text)
    if scope is not None:
        if _SCOPED.fullmatch(scope.group(2)) is not None:  # `saxpy:add:B=1`
            raise UsageError(f"only one ENTRY: scope in generics {clip(text)!r}")
        inner = parse_generics(scope.group(2))
        return GenericsSet(inner.named, inner.positional, scope.group(1))
    items = [item.strip() for item in _split_top_level(text)]
    if items == [""]:
        return GenericsSet()
    named: dict[str, str] = {}
    positional: list[str] = []
    for item in items:
        if not item:
            raise UsageError(f"empty generic argument in {text!r}")
        match = _NAMED.fullmatch(item)
        if match is None:
            positional.append(item)
            continue
        name, value = match.group(1), match.group(2).strip()
        if not value:
            raise UsageError(f"generic {name} has no value in {text!r}")
        if name in named:
            raise UsageError(f"generic {name} given twice in {text!r}")
        named[name] = value
    if named and positional:
        raise UsageError(f"give generics by name or by position, not both: {text!r}")
    return GenericsSet(tuple(named.items()), tuple(positional))


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for ch in text:
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth < 0:
                raise UsageError(f"unbalanced brackets in generics {text!r}")
        elif ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    if depth != 0:
        raise UsageError(f"unbalanced brackets in generics {text!r}")
    parts.append("".join(current))
    return parts
