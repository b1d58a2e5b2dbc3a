"""Deterministic MLIR-like text for IR modules, functions and ops (for tests and dumps).

Values print as `%id`; single operands print positionally, variadic groups as
`name[...]`, present optionals as `name(...)`; attributes print as `{name = value}` in
declaration order; nested regions print indented under their field name.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

from lowering.ir.attributes import EntryHints
from lowering.ir.core import (
    OPERAND,
    OPERANDS,
    OPTIONAL_OPERAND,
    REGION,
    Block,
    Function,
    Module,
    Op,
    Value,
)

INDENT = "  "


def print_module(module: Module) -> str:
    """The whole module: its globals, one a line, then its functions separated by a blank
    line, ending in a newline."""
    globals_ = "".join(f"{g}\n" for g in module.globals)
    return globals_ + "\n".join(print_function(fn) for fn in module.functions)


def print_function(fn: Function) -> str:
    kind = "entry" if fn.is_entry else "func"
    params = ", ".join(f"{p}: {p.type}" for p in fn.params)
    hints = f" optimization_hints=<{_hints(fn.hints)}>" if fn.hints else ""
    lines = [f"{kind} @{fn.name}({params}){hints} {{"]
    lines += [print_op(op, 1) for op in fn.body.ops]
    return "\n".join([*lines, "}"]) + "\n"


def print_op(op: Op, indent: int = 0) -> str:
    """One op (with its regions, if any) at `indent` levels; no trailing newline."""
    pad = INDENT * indent
    head = f"{pad}{_results(op)}{op.NAME}{_operands(op)}{_attributes(op)}{_types(op)}"
    lines = [head]
    for name in op.fields_with_role(REGION):
        lines += _region(name, getattr(op, name).blocks, indent + 1)
    return "\n".join(lines)


def _results(op: Op) -> str:
    names = ", ".join(str(v) for v in op.results)
    return f"{names} = " if names else ""


def _operands(op: Op) -> str:
    groups = [f for f in dataclasses.fields(op) if f.metadata.get("role") in _OPERAND_ROLES]
    if len(groups) == 1 and groups[0].metadata["role"] == OPERANDS:
        parts = [_names(getattr(op, groups[0].name))]
    else:
        parts = [_operand_group(op, f.name, f.metadata["role"]) for f in groups]
    text = ", ".join(p for p in parts if p)
    return f" {text}" if text else ""


_OPERAND_ROLES = (OPERAND, OPERANDS, OPTIONAL_OPERAND)


def _operand_group(op: Op, name: str, role: str) -> str:
    value = getattr(op, name)
    if role == OPERAND:
        return str(value)
    if role == OPERANDS:
        return f"{name}[{_names(value)}]"
    return "" if value is None else f"{name}({value})"


def _names(values: tuple[Value, ...]) -> str:
    return ", ".join(str(v) for v in values)


def _attributes(op: Op) -> str:
    """Absent optionals (None) and empty lists (e.g. no load/store hints) are left out."""
    items = [
        f"{k} = {format_attribute(v)}"
        for k, v in op.attributes.items()
        if v is not None and v != ()
    ]
    return f" {{{', '.join(items)}}}" if items else ""


def _types(op: Op) -> str:
    types = ", ".join(str(v.type) for v in op.results)
    return f" : {types}" if types else ""


def format_attribute(value: Any) -> str:
    """Enums lower-case by name, bools as true/false, strings quoted and escaped,
    sequences as [a, b]; records (identities, hints) by their own `str`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, enum.Enum):
        return value.name.lower()
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(format_attribute(v) for v in value) + "]"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _region(name: str, blocks: tuple[Block, ...], indent: int) -> list[str]:
    pad = INDENT * indent
    lines = [f"{pad}{name} {{"]
    for i, block in enumerate(blocks):
        args = ", ".join(f"{a}: {a.type}" for a in block.args)
        lines.append(f"{pad}^bb{i}({args}):")
        lines += [print_op(op, indent + 1) for op in block.ops]
    return [*lines, f"{pad}}}"]


def _hints(hints: tuple[EntryHints, ...]) -> str:
    return ", ".join(_arch_hint(h) for h in sorted(hints, key=lambda h: h.arch))


def _arch_hint(hint: EntryHints) -> str:
    fields = [f for f in dataclasses.fields(hint) if f.name != "arch"]
    values = [(f.name, getattr(hint, f.name)) for f in fields]
    items = [f"{name} = {value}" for name, value in values if value is not None]
    return f"{hint.arch} = {{{', '.join(items)}}}"
