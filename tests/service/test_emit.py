"""`cutile-compile --emit STAGE`: one stage's product of each kernel, printed or written."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from lowering.bytecode.writer import MAGIC
from service.cli import batch
from service.cli.batch import main
from tests.fake_cubin import fake_cubin
from tests.lowering.test_widen_accumulators import ZERO, gemm

ADD = str(Path(__file__).parents[2] / "rust_examples" / "add.rs")
ADD_B128 = [ADD, "--entry", "add", "--generics", "B=128"]


@dataclass(frozen=True)
class _Assembler:
    """Stands in for tileiras: a cubin that holds the requested symbol."""

    version: str = "13.5-fake"
    fingerprint: str = "fake"

    def assemble(self, bytecode: bytes, *, arch: str, symbol: str, **_: object) -> bytes:
        return fake_cubin(arch, symbol, b"cubin")


@pytest.mark.parametrize(
    ("stage", "expected"),
    [
        ("ast", "Function\n  name: 'add'\n"),
        ("typed", "fn kernel::add<B=128>\n"),
        ("ir", "entry @add_"),
    ],
)
def test_text_stages_print_to_stdout(stage: str, expected: str, capsys) -> None:
    assert main([*ADD_B128, "--emit", stage]) == 0
    out = capsys.readouterr().out
    assert out.startswith(expected)
    if stage == "typed":
        assert "Tile<f32, {[128]}>" in out


def test_bytecode_is_hex_on_stdout_and_raw_in_a_file(tmp_path: Path, capsys) -> None:
    assert main([*ADD_B128, "--emit", "bytecode"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("00000000  " + MAGIC[:4].hex(" "))
    assert main([*ADD_B128, "--emit", "bytecode", "-o", str(tmp_path)]) == 0
    (written,) = tmp_path.glob("*.tilebc")
    assert written.name == "add_B=128_sm_90.tilebc"
    assert written.read_bytes().startswith(MAGIC)


def test_contract_is_json(monkeypatch, capsys) -> None:
    monkeypatch.setattr(batch, "locate_assembler", lambda _path: _Assembler())
    assert main([*ADD_B128, "--emit", "contract"]) == 0
    contract = json.loads(capsys.readouterr().out)
    assert contract["kernel"]["entrySymbol"].startswith("add_")
    assert contract["target"]["sm"] == "sm_90"


def test_several_kernels_are_headed_and_failures_counted(capsys) -> None:
    argv = [ADD, "--entry", "add", "--generics", "B=128", "--generics", "B=64", "--emit", "ir"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "// add<B=128> (sm_90): ir" in out and "// add<B=64> (sm_90): ir" in out
    assert main([ADD, "--entry", "nope", "--emit", "ir"]) == 1


def test_emit_needs_no_out_but_refuses_a_server(capsys) -> None:
    assert main([*ADD_B128, "--emit", "ir", "--server", "localhost:1"]) == 2
    assert "--emit compiles here" in capsys.readouterr().err


def _mma_types(ir: str) -> list[str]:
    return [line.rsplit(": ", 1)[1] for line in ir.splitlines() if " = mmaf " in line]


def test_exact_accumulators_reach_the_compile(tmp_path: Path, capsys) -> None:
    """`--exact-accumulators` keeps a persistent GEMM's f16 accumulator (by default the
    k-loop nested in the tile loop carries it in f32: lowering.widen_accumulators)."""
    source = tmp_path / "gemm.rs"
    source.write_text(gemm("f16", ZERO))
    argv = [str(source), "--entry", "f", "--generics", "BM=64,BN=64,BK=32", "--emit", "ir"]
    assert main(argv) == 0
    assert _mma_types(capsys.readouterr().out) == ["tile<64x64xf32>"]
    assert main([*argv, "--exact-accumulators"]) == 0
    assert _mma_types(capsys.readouterr().out) == ["tile<64x64xf16>"]


def test_exact_f32_products_reach_the_compile(tmp_path: Path, capsys) -> None:
    """`--exact-f32-products` keeps an f32 product as written (by default three TF32
    products: lowering.split_f32_products)."""
    source = tmp_path / "gemm.rs"
    source.write_text(gemm("f32", "constant(0.0f32, const_shape![BM, BN])").replace("f16", "f32"))
    argv = [str(source), "--entry", "f", "--generics", "BM=64,BN=64,BK=32", "--emit", "ir"]
    assert main(argv) == 0
    assert len(_mma_types(capsys.readouterr().out)) == 3
    assert main([*argv, "--exact-f32-products"]) == 0
    assert len(_mma_types(capsys.readouterr().out)) == 1
