"""Every example kernel in rust_examples/catalog.json compiles: its front-end IR and its
launch contract match the checked-in golden dumps (`<entry>.<generics>.ir` and
`.contract.json`), and tileiras turns it into an sm_90 cubin with the entry symbol.

The contract dump is taken with a stand-in assembler (the contract does not depend on the
cubin) and shows the compiler and tileiras versions as placeholders.

Regenerate the goldens after an intended IR or contract change with
    CUTILE_UPDATE_GOLDENS=1 python -m pytest tests/test_examples.py
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import re
from pathlib import Path

import pytest

from lowering.contract import LaunchContract
from lowering.cubin_info import function_symbols
from lowering.ir.printer import print_module
from lowering.pipeline import CompileRequest, CompileResult, Stage, compile_kernel
from parser.render import render_all
from parser.spans import SourceFile
from rust_examples.catalog import Specialization, specializations
from tests.fake_cubin import StandInAssembler

GOLDEN = Path(__file__).resolve().parent / "golden"
SPECS = specializations()


def _compile(
    spec: Specialization, stop_after: Stage, assembler: object | None = None
) -> CompileResult:
    source = SourceFile(f"rust_examples/{spec.file}", spec.path.read_text())
    result = compile_kernel(
        CompileRequest((source,), spec.entry, spec.generics),
        stop_after=stop_after,
        assembler=assembler,  # type: ignore[arg-type]
    )
    assert result.ok, render_all(result.diagnostics)
    return result


def _golden_stem(spec: Specialization) -> str:
    generics = "_".join(f"{k}{re.sub(r'[^A-Za-z0-9]', '', v)}" for k, v in spec.generics)
    return f"{spec.entry}.{generics}"


def _plain(value: object) -> object:
    """A contract as JSON data: dataclasses as objects (fields in order), enums by name."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    return value


def contract_dump(contract: LaunchContract) -> str:
    stable = dataclasses.replace(contract, compiler_version="<compiler>")
    return json.dumps(_plain(stable), indent=2) + "\n"


def _check_golden(path: Path, text: str, what: str) -> None:
    if os.environ.get("CUTILE_UPDATE_GOLDENS"):
        path.write_text(text)
    assert path.exists(), f"no golden {path.name}: set CUTILE_UPDATE_GOLDENS=1"
    assert text == path.read_text(), f"{what} changed (see {path})"


@pytest.mark.parametrize("spec", SPECS, ids=[s.label for s in SPECS])
def test_ir_and_contract_match_their_golden_dumps(spec: Specialization) -> None:
    result = _compile(spec, Stage.CUBIN, StandInAssembler())
    stem = _golden_stem(spec)
    _check_golden(GOLDEN / f"{stem}.ir", print_module(result.ir), f"IR of {spec.label}")  # type: ignore[arg-type]
    contract = contract_dump(result.contract)  # type: ignore[arg-type]
    _check_golden(GOLDEN / f"{stem}.contract.json", contract, f"contract of {spec.label}")


@pytest.mark.parametrize("spec", SPECS, ids=[s.label for s in SPECS])
def test_example_compiles_to_an_sm90_cubin(tileiras, spec: Specialization) -> None:
    result = _compile(spec, Stage.CUBIN)
    assert result.contract.entry_symbol in function_symbols(result.cubin)  # type: ignore[union-attr]
