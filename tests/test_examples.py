"""Every example kernel in rust_examples/catalog.json compiles: its front-end IR matches the
checked-in golden dump, and tileiras turns it into an sm_90 cubin with the entry symbol.

Regenerate the goldens after an intended IR change with
    CUTILE_UPDATE_GOLDENS=1 python -m pytest tests/test_examples.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from lowering.cubin_info import function_symbols
from lowering.ir.printer import print_module
from lowering.pipeline import CompileRequest, CompileResult, Stage, compile_kernel
from parser.render import render_all
from parser.spans import SourceFile
from rust_examples.catalog import Specialization, specializations

GOLDEN = Path(__file__).resolve().parent / "golden"
SPECS = specializations()


def _compile(spec: Specialization, stop_after: Stage) -> CompileResult:
    source = SourceFile(f"rust_examples/{spec.file}", spec.path.read_text())
    result = compile_kernel(
        CompileRequest((source,), spec.entry, spec.generics), stop_after=stop_after
    )
    assert result.ok, render_all(result.diagnostics)
    return result


def _golden_name(spec: Specialization) -> str:
    generics = "_".join(f"{k}{re.sub(r'[^A-Za-z0-9]', '', v)}" for k, v in spec.generics)
    return f"{spec.entry}.{generics}.ir"


@pytest.mark.parametrize("spec", SPECS, ids=[s.label for s in SPECS])
def test_front_end_ir_matches_its_golden_dump(spec: Specialization) -> None:
    text = print_module(_compile(spec, Stage.IR).ir)  # type: ignore[arg-type]
    path = GOLDEN / _golden_name(spec)
    if os.environ.get("CUTILE_UPDATE_GOLDENS"):
        path.write_text(text)
    assert path.exists(), f"no golden for {spec.label}: set CUTILE_UPDATE_GOLDENS=1"
    assert text == path.read_text(), f"IR of {spec.label} changed (see {path})"


@pytest.mark.parametrize("spec", SPECS, ids=[s.label for s in SPECS])
def test_example_compiles_to_an_sm90_cubin(tileiras, spec: Specialization) -> None:
    result = _compile(spec, Stage.CUBIN)
    assert result.contract.entry_symbol in function_symbols(result.cubin)  # type: ignore[union-attr]
