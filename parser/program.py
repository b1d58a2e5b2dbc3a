"""Name resolution across files: kernel modules, their functions, and the requested entry.

Names resolve as in cuTile Rust: by unqualified identifier across every linked kernel
module (device functions are inlined, so there is no call graph to build here).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from parser import ast_nodes as A
from parser import messages
from parser.check_messages import did_you_mean
from parser.diagnostics import DiagnosticSink
from parser.items import ItemIndex


@dataclass(frozen=True, eq=False)  # one per compile: caches key on it by identity
class Program:
    files: tuple[A.ParsedFile, ...]
    modules: tuple[A.KernelModule, ...]

    def functions_named(self, name: str) -> tuple[A.Function, ...]:
        return tuple(f for m in self.modules for f in m.functions if f.name == name)

    @property
    def entries(self) -> tuple[A.Function, ...]:
        return tuple(f for m in self.modules for f in m.functions if f.entry is not None)

    @functools.cached_property
    def items(self) -> ItemIndex:
        """Structs, type aliases, traits and impls of every linked module."""
        return ItemIndex(self.modules)


def link(files: tuple[A.ParsedFile, ...], sink: DiagnosticSink) -> Program:
    """Collect the kernel modules of all files; a request with none is an error."""
    modules = tuple(m for f in files for m in f.modules)
    if not modules and files and not sink.has_errors:
        first = files[0].source
        sink.add(messages.NO_KERNEL_MODULE.at(None, file=first.name))
    return Program(files, modules)


def find_entry(program: Program, requested: str, sink: DiagnosticSink) -> A.Function | None:
    """The entry named `requested` ("add" or "kernel::add"); diagnoses unknown or ambiguous."""
    *module_path, name = requested.split("::")
    candidates = [
        f
        for f in program.entries
        if f.name == name
        and (not module_path or f.module_path[-len(module_path) :] == tuple(module_path))
    ]
    if len(candidates) == 1:
        entry = candidates[0]
        for problem in entry.problems:  # unsupported syntax in the entry itself
            sink.add(problem)
        return None if entry.problems else entry
    if len(candidates) > 1:
        names = ", ".join(f"`{f.qualified_name}`" for f in candidates)
        first_defined = ((candidates[0].name_span, "first defined here"),)
        sink.add(
            messages.AMBIGUOUS_ENTRY.at(
                candidates[1].name_span, first_defined, requested=requested, names=names
            )
        )
        return None
    if program.modules:
        _report_unknown_entry(program, requested, name, sink)
    return None


def _report_unknown_entry(
    program: Program, requested: str, name: str, sink: DiagnosticSink
) -> None:
    available = ", ".join(f"`{f.qualified_name}`" for f in program.entries) or "none"
    device = tuple(f for f in program.functions_named(name) if f.entry is None)
    if device:
        sink.add(
            messages.DEVICE_FUNCTION_NOT_ENTRY.at(
                device[0].name_span,
                requested=requested,
                device=device[0].qualified_name,
                available=available,
            )
        )
        return
    # a misspelling: the closest entry, by its name as it was asked for
    qualified = "::" in requested
    names = [f.qualified_name if qualified else f.name for f in program.entries]
    sink.add(
        messages.UNKNOWN_ENTRY.at(
            None,
            suggestions=did_you_mean(requested, names),
            requested=requested,
            available=available,
        )
    )
