"""`parser.parsed_files`: a clean parse is reused for the same `SourceFile` (and only for it),
a parse that reported anything is redone and reported every time, the kept ASTs stay within
their budget, and compiles from a reused parse equal compiles from a fresh one (a checking
error that the front end reports once per program is reported by each compile)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lowering.ir.printer import print_module
from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser import codes, cst_to_ast, parsed_files
from parser.diagnostics import DiagnosticSink
from parser.parsed_files import ParsedFiles, footprint
from parser.spans import SourceFile

KERNEL = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    fn f<const B: i32>(out: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        let t = x.partition(const_shape![B]).load([get_tile_block_id().0]);
        out.store(t);
    }
}
"""


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[SourceFile]:
    """The files `parse_file` really parsed (the cache's misses)."""
    seen: list[SourceFile] = []
    real = cst_to_ast.parse_file

    def counting(source: SourceFile, sink: DiagnosticSink, **kw: object):  # type: ignore[no-untyped-def]
        seen.append(source)
        return real(source, sink, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(parsed_files, "parse_file", counting)
    return seen


def test_the_same_file_is_parsed_once(parses: list[SourceFile]) -> None:
    cache = ParsedFiles()
    source = SourceFile("k.rs", KERNEL)
    first = cache.parse(source, DiagnosticSink())
    assert cache.parse(source, DiagnosticSink()) is first
    assert parses == [source] and len(cache) == 1


def test_another_file_of_the_same_text_is_parsed_again(parses: list[SourceFile]) -> None:
    """Spans name the compile's own file, never an earlier one of equal text."""
    cache = ParsedFiles()
    first, second = SourceFile("k.rs", KERNEL), SourceFile("k.rs", KERNEL)
    a, b = cache.parse(first, DiagnosticSink()), cache.parse(second, DiagnosticSink())
    assert a is not b and b.source is second and b.modules[0].span.file is second
    assert parses == [first, second]


def test_a_parse_with_diagnostics_is_reported_every_time_and_not_kept(
    parses: list[SourceFile],
) -> None:
    cache = ParsedFiles()
    broken = SourceFile("bad.rs", KERNEL.replace("out.store(t);", "out.store(t"))
    for _ in range(2):
        sink = DiagnosticSink()
        cache.parse(broken, sink)
        assert sink.has_errors
    assert parses == [broken, broken] and len(cache) == 0


def test_the_oldest_parses_go_past_the_budget(parses: list[SourceFile]) -> None:
    files = [SourceFile(f"k{i}.rs", KERNEL) for i in range(3)]
    cache = ParsedFiles(budget_bytes=2 * footprint(files[0]))
    for source in files:
        cache.parse(source, DiagnosticSink())
    assert len(cache) == 2 and cache.bytes == 2 * footprint(files[0])
    cache.parse(files[0], DiagnosticSink())  # evicted: parsed again
    assert parses == [*files, files[0]]
    huge = ParsedFiles(budget_bytes=footprint(files[0]) - 1)
    huge.parse(files[0], DiagnosticSink())
    assert len(huge) == 0  # bigger than the whole budget: never kept


def test_compiles_from_a_reused_parse_equal_compiles_from_a_fresh_one() -> None:
    source = SourceFile("k.rs", KERNEL)
    for b in ("64", "128", "64"):
        reused = compile_kernel(CompileRequest((source,), "f", (("B", b),)), stop_after=Stage.IR)
        fresh_source = SourceFile("k.rs", KERNEL)
        fresh = compile_kernel(
            CompileRequest((fresh_source,), "f", (("B", b),)), stop_after=Stage.IR
        )
        assert reused.ok and fresh.ok
        assert print_module(reused.ir) == print_module(fresh.ir)  # type: ignore[arg-type]


def test_a_check_error_reported_once_per_program_is_reported_by_every_compile() -> None:
    """An invalid `static` is checked once per program (`parser.statics`); two compiles of
    one parsed file are two programs, and each reports it."""
    text = KERNEL.replace("use cutile::core::*;", "use cutile::core::*;\n    static BAD: i32 = 0;")
    source = SourceFile("k.rs", text)
    for _ in range(2):
        result = compile_kernel(
            CompileRequest((source,), "f", (("B", "64"),)), stop_after=Stage.CHECK
        )
        assert [d.code for d in result.diagnostics] == [codes.UNSUPPORTED_TYPE]


def test_the_decoder_file_parses_once_for_all_its_kernels(parses: list[SourceFile]) -> None:
    path = Path(__file__).resolve().parents[2] / "rust_examples" / "decoder.rs"
    source = SourceFile(str(path), path.read_text())
    parsed_files.PARSED_FILES.parse(source, DiagnosticSink())
    for entry in ("embedding", "advance_position"):
        generics = (("E", "bf16"), ("BD", "512")) if entry == "embedding" else ()
        result = compile_kernel(CompileRequest((source,), entry, generics), stop_after=Stage.IR)
        assert result.ok
    assert parses == [source]
