"""Helpers for the prelude-family tests: a small kernel around a body, its typed `let`s,
its one error, and its printed IR after a real tileiras run."""

from __future__ import annotations

from lowering.ir.printer import print_module
from lowering.pipeline import (
    DEFAULT_ARCH,
    CompileRequest,
    CompileResult,
    Stage,
    compile_kernel,
)
from lowering.tileiras import Tileiras
from parser.diagnostics import Diagnostic
from parser.spans import SourceFile
from parser.types import SemType

# `t` is a [4, 64] f32 tile; `n` a runtime i32; `z` the [4, 64] f32 output.
SIG = "z: &mut Tensor<f32, { [4, 64] }>, x: &Tensor<f32, { [-1, -1] }>, n: i32, s: f32"
PRELUDE = "let t: Tile<f32, { [4, 64] }> = load_tile_like(x, z);"


def module(
    body: str, sig: str = SIG, params: str = "", prelude: str = PRELUDE, qualifier: str = ""
) -> str:
    """An entry `{qualifier}fn f{params}({sig})` whose body is `prelude` then `body`."""
    lines = "\n".join(f"        {line}" for line in (prelude, *body.strip().splitlines()))
    return (
        "#[cutile::module]\n"
        "mod k {\n"
        "    use cutile::core::*;\n"
        "    #[cutile::entry()]\n"
        f"    {qualifier}fn f{params}({sig}) {{\n"
        f"{lines}\n"
        "    }\n"
        "}\n"
    )


def compile_body(
    body: str,
    stage: Stage = Stage.CHECK,
    values: dict[str, str] | None = None,
    assembler: Tileiras | None = None,
    arch: str = DEFAULT_ARCH,
    **kw: str,
) -> CompileResult:
    """Compile `module(body, **kw)` for `arch` up to `stage`, binding generics to `values`."""
    request = CompileRequest(
        (SourceFile("k.rs", module(body, **kw)),),
        "f",
        tuple((values or {}).items()),
        arch=arch,
    )
    return compile_kernel(request, stop_after=stage, assembler=assembler)


def lets(body: str, **kw: str) -> dict[str, SemType]:
    """The type of every `let` in the body, by name (the last binding of a name wins)."""
    result = compile_body(body, **kw)
    assert result.ok, [d.message for d in result.diagnostics]
    kernel = result.kernel
    return {v.name: v.type for vs in kernel.lets.values() for v in vs}  # type: ignore[attr-defined]


def the_error(body: str, **kw: str) -> Diagnostic:
    """The one error the body produces."""
    result = compile_body(body, **kw)
    found = [d for d in result.diagnostics if d.is_error]
    assert len(found) == 1, [d.message for d in result.diagnostics]
    return found[0]


def primary_text(diagnostic: Diagnostic) -> str:
    """The source text under the error's primary label."""
    span = diagnostic.primary_span
    assert span is not None
    return span.text


def assembled_ir(body: str, tileiras: Tileiras, **kw: str) -> str:
    """The printed IR of the body's kernel, after tileiras accepted it (an sm_90 cubin unless
    `arch=` says otherwise)."""
    result = compile_body(body, Stage.CUBIN, assembler=tileiras, **kw)
    assert result.ok, [d.message for d in result.diagnostics]
    assert result.cubin
    return print_module(result.ir)  # type: ignore[arg-type]
