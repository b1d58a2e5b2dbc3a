"""`cutile-compile --emit STAGE`: one stage's product of each kernel, as a file or text.

The compile stops after the stage (`lowering.pipeline.compile_kernel`'s `stop_after`):

    ast       the entry function's syntax tree (spans left out)       Stage.PARSE
    typed     the type of every binding and expression, by position    Stage.CHECK
    ir        the verified tile IR, as the IR printer writes it        Stage.IR
    bytecode  Tile IR bytecode (hex on stdout, raw in a file)          Stage.BYTECODE
    contract  the launch contract as JSON (runs tileiras)              Stage.CUBIN
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping

from google.protobuf import json_format

from lowering.ir.printer import print_module
from lowering.pipeline import CompileRequest, CompileResult, Stage
from parser.front_end import DiagnosticSink, Function, SourceFile, Span, TypedKernel, parse_file
from service.cli.editor_check import typed_spans
from service.cli.facts_arg import names_entry
from service.convert import contract_to_proto

EMIT_STAGES: Mapping[str, Stage] = {
    "ast": Stage.PARSE,
    "typed": Stage.CHECK,
    "ir": Stage.IR,
    "bytecode": Stage.BYTECODE,
    "contract": Stage.CUBIN,
}
FILE_SUFFIXES: Mapping[str, str] = {
    "ast": ".ast.txt",
    "typed": ".typed.txt",
    "ir": ".ir.txt",
    "bytecode": ".tilebc",
    "contract": ".contract.json",
}
_HEX_ROW = 16


def stage_product(emit: str, request: CompileRequest, result: CompileResult) -> str | bytes:
    """What `--emit emit` shows of `result`, the compile of `request` stopped after
    `EMIT_STAGES[emit]` (which succeeded)."""
    if emit == "ast":
        return _ast_text(request)
    if emit == "typed":
        if not isinstance(result.kernel, TypedKernel):
            raise ValueError("the compile stopped before type checking")
        return _typed_text(result.kernel, request.sources[0])
    if emit == "ir":
        return print_module(result.ir)  # type: ignore[arg-type]
    if emit == "bytecode":
        if result.bytecode is None:
            raise ValueError("the compile stopped before writing bytecode")
        return result.bytecode
    if result.contract is None:
        raise ValueError("the compile stopped before the contract")
    proto = contract_to_proto(result.contract)  # type: ignore[arg-type]
    return json_format.MessageToJson(proto, always_print_fields_with_no_presence=True) + "\n"


def as_text(product: str | bytes) -> str:
    """`product` for a terminal: bytes as rows of hex, 16 bytes a row."""
    if isinstance(product, str):
        return product if product.endswith("\n") else product + "\n"
    rows = (product[i : i + _HEX_ROW] for i in range(0, len(product), _HEX_ROW))
    return "".join(f"{n * _HEX_ROW:08x}  {row.hex(' ')}\n" for n, row in enumerate(rows))


def _ast_text(request: CompileRequest) -> str:
    for source in request.sources:
        function = _entry_in(source, request.entry)
        if function is not None:
            return _tree(function, 0) + "\n"
    raise ValueError(f"no entry `{request.entry}`")


def _entry_in(source: SourceFile, entry: str) -> Function | None:
    """The entry function `entry` ("add" or "kernel::add") of `source`."""
    for module in parse_file(source, DiagnosticSink()).modules:
        for function in module.functions:
            if function.entry and names_entry(function.qualified_name, entry):
                return function
    return None


def _tree(value: object, depth: int) -> str:
    """An indented dump of AST dataclasses: one field a line, spans left out."""
    pad = "  " * (depth + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [
            (f.name, getattr(value, f.name))
            for f in dataclasses.fields(value)
            if not isinstance(getattr(value, f.name), Span) and not f.name.endswith("span")
        ]
        if not fields:
            return type(value).__name__
        lines = [f"{pad}{name}: {_tree(item, depth + 1)}" for name, item in fields]
        return type(value).__name__ + "\n" + "\n".join(lines)
    if isinstance(value, tuple) and value:
        return (
            "[\n" + "\n".join(f"{pad}{_tree(item, depth + 1)}" for item in value) + f"\n{pad[:-2]}]"
        )
    if isinstance(value, enum.Enum):
        return value.name
    return repr(value)


def _typed_text(kernel: TypedKernel, source: SourceFile) -> str:
    generics = ", ".join(f"{name}={value}" for name, value in kernel.generics.items())
    head = f"fn {kernel.function.qualified_name}" + (f"<{generics}>" if generics else "")
    lines = [head]
    for typed in sorted(typed_spans(kernel, "", generics, source), key=lambda t: (t.start, -t.end)):
        line, column = source.line_col(typed.start)
        text = " ".join(typed.text.split())
        if len(text) > 60:
            text = text[:57] + "..."
        lines.append(f"  {line}:{column}  {text}  : {typed.type}")
    return "\n".join(lines) + "\n"
