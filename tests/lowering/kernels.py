"""Helpers for lowering tests: compile example kernels up to a chosen stage."""

from __future__ import annotations

from pathlib import Path

from lowering.pipeline import (
    DEFAULT_ARCH,
    CompileRequest,
    CompileResult,
    Stage,
    compile_kernel,
)
from parser.spans import SourceFile

EXAMPLES = Path(__file__).resolve().parents[2] / "rust_examples"


def example(name: str) -> SourceFile:
    return SourceFile(f"rust_examples/{name}", (EXAMPLES / name).read_text())


def compile_example(
    name: str,
    entry: str,
    generics: dict[str, str],
    stop_after: Stage = Stage.CUBIN,
    **options: object,
) -> CompileResult:
    options.setdefault("early_launch", False)  # see `compile_text`
    request = CompileRequest((example(name),), entry, tuple(generics.items()), **options)  # type: ignore[arg-type]
    return compile_kernel(request, stop_after=stop_after)


def compile_text(
    text: str,
    entry: str = "f",
    generics: dict[str, str] | None = None,
    stop_after: Stage = Stage.CUBIN,
    arch: str = DEFAULT_ARCH,
    early_launch: bool = False,
) -> CompileResult:
    """`text` compiled to `stop_after`. Plain kernels unless `early_launch`: these tests read
    the IR the front end lowers, before the early-launch pass orders every access after a
    wait for prior grids (tests/lowering/test_grid_dependency.py)."""
    request = CompileRequest(
        (SourceFile("k.rs", text),),
        entry,
        tuple((generics or {}).items()),
        arch=arch,
        early_launch=early_launch,
    )
    return compile_kernel(request, stop_after=stop_after)
