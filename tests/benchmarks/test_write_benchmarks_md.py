"""tests/benchmarks/write_benchmarks_md.py: tables from the family scripts' JSON, in family
order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benchmarks.write_benchmarks_md import main, render


def _result(family: str, unit: str, rows: list[dict]) -> dict:
    return {
        "family": family,
        "command": f"PYTHONPATH=. python3 -m tests.benchmarks.x B --json {family}.json",
        "device": "NVIDIA H200",
        "torch": "2.11",
        "rows": [{"unit": unit, "tried": {}, **row} for row in rows],
    }


GEMM = _result(
    "GEMM",
    "TFLOP/s",
    [
        {
            "case": "gemm f16",
            "shape": "8192x8192x8192",
            "work": 2 * 8192**3,
            "ours_s": 2 * 8192**3 / 700e12,
            "torch_s": 2 * 8192**3 / 770e12,
            "config": "persistent 256x128x64",
            "max_error": 0.1,
            "tolerance": 1.0,
        },
        {
            "case": "gemm bf16",
            "shape": "1024x1024x1024",
            "work": 2.0,
            "ours_s": 1e-12,
            "torch_s": 2e-12,
            "config": "aligned",
            "max_error": 3.0,
            "tolerance": 1.0,
        },
    ],
)
ADD = _result(
    "element-wise add",
    "TB/s",
    [
        {
            "case": "add f32",
            "shape": "2^28",
            "work": 4.3e12,
            "ours_s": 1.0,
            "torch_s": 1.0,
            "config": "B=1024",
            "max_error": 0.0,
            "tolerance": 0.0,
        }
    ],
)


def test_rows_become_table_lines_with_rates_ratio_and_check() -> None:
    text = render([GEMM, ADD])
    assert text.index("## element-wise add") < text.index("## GEMM")  # family order
    assert "`PYTHONPATH=. python3 -m tests.benchmarks.x B --json GEMM.json` on NVIDIA H200" in text
    assert (
        "| case | shape | ours (TFLOP/s) | torch (TFLOP/s) | ratio | our config | check |" in text
    )
    assert (
        "| gemm f16 | 8192x8192x8192 | 700.00 | 770.00 | 0.91 | persistent 256x128x64 | ok |"
        in (text)
    )
    assert "| gemm bf16 | 1024x1024x1024 | 2.00 | 1.00 | 2.00 | aligned | MISMATCH 3 |" in text
    assert "| add f32 | 2^28 | 4.30 | 4.30 | 1.00 | B=1024 | ok |" in text


def test_targets_show_the_measured_ratio_and_the_gap() -> None:
    text = render([GEMM, ADD])
    assert "| gemm f16 | 8192x8192x8192 | 1.00 | 0.91 | no (-0.09) |" in text
    assert "| add f32 | 2^28 | 1.00 | 1.00 | yes |" in text
    assert "| gemm bf16 | 4096x4096x4096 | 0.97 | not measured |  |" in text


def test_main_reads_every_json_in_the_folder(tmp_path: Path) -> None:
    for name, result in (("gemm", GEMM), ("add", ADD)):
        (tmp_path / f"{name}.json").write_text(json.dumps(result))
    out = tmp_path / "BENCHMARKS.md"
    assert main([str(tmp_path), "-o", str(out)]) == 0
    assert out.read_text() == render([ADD, GEMM])


def test_an_empty_folder_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exited:
        main([str(tmp_path)])
    assert exited.value.code == 2


CUTILE = _result(
    "cuTile Python",
    "TFLOP/s",
    [
        {
            "case": "gemm f16",
            "shape": "8192x8192x8192",
            "work": 2 * 8192**3,
            "ours_s": 2 * 8192**3 / 640e12,  # cuTile Python's time
            "torch_s": 2 * 8192**3 / 770e12,
            "config": "128x128x64 group8 cta1",
            "max_error": 0.1,
            "tolerance": 1.0,
        },
        {
            "case": "gemm f16",
            "shape": "256x256x256",  # a shape we did not time
            "work": 2.0,
            "ours_s": 1e-12,
            "torch_s": 1e-12,
            "config": "128x128x64 group8 cta1",
            "max_error": 0.0,
            "tolerance": 1.0,
        },
    ],
)


def test_cutile_python_rows_sit_next_to_ours_and_are_no_target() -> None:
    text = render([CUTILE, GEMM, ADD])
    assert text.index("## GEMM") < text.index("## cuTile Python")
    assert (
        "| gemm f16 | 8192x8192x8192 | TFLOP/s | 700.00 | 640.00 | 770.00 | 1.09 "
        "| 128x128x64 group8 cta1 | ok |" in text
    )
    assert "| gemm f16 | 256x256x256 | TFLOP/s |  | 2.00 | 2.00 |  |" in text
    # the target still reads our row (0.91), not cuTile Python's (0.83)
    assert "| gemm f16 | 8192x8192x8192 | 1.00 | 0.91 | no (-0.09) |" in text


def _decode_row(model: str, batch: int, ours: float, graphs: float, bound: float) -> dict:
    return {
        "model": model,
        "batch": batch,
        "context": 1024,
        "steps": 64,
        "ours_tps": ours,
        "torch_eager_tps": 0.0,
        "torch_graph_tps": graphs,
        "bound_tps": bound,
        "step_bytes": 8_000_000_000,
        "copy_bandwidth": 4.3e12,
        "launches_per_step": 292,
        "plan": "",
    }


DECODE = {
    "family": "decode",
    "command": "PYTHONPATH=. python3 -m tests.benchmarks.decode.bench B speed --json decode.json",
    "device": "NVIDIA H200",
    "torch": "2.11",
    "rows": [
        _decode_row("Qwen3-4B", 1, 430.0, 400.0, 500.0),
        _decode_row("Qwen3-32B", 1, 50.0, 55.0, 66.0),
        _decode_row("Qwen3-4B", 64, 6000.0, 5000.0, 9000.0),
    ],
}


def test_decode_rows_get_their_own_table_and_the_issue_16_targets() -> None:
    text = render([GEMM, DECODE])
    assert text.index("## GEMM") < text.index("## Decode: Qwen3-shaped models")
    # 430 / 500 = 0.86 of the bound, 1.08x torch + graphs: both batch-1 targets met
    assert (
        "| Qwen3-4B | 1 | 1024 | 430.0 | not run | 400.0 | 500.0 | 0.86 | 1.07 "
        "| yes (>= 0.80 of bound, >= 1.00x torch + graphs) |" in text
    )
    assert "| Qwen3-32B | 1 | 1024 | 50.0 | not run | 55.0 | 66.0 | 0.76 | 0.91 | no (" in text
    assert "| Qwen3-4B | 64 | 1024 | 6000.0 | not run | 5000.0 | 9000.0 | 0.67 | 1.20 |  |" in text
    # the kernel targets table ignores decode rows
    assert "| gemm f16 | 8192x8192x8192 | 1.00 |" in text


def test_the_other_compilers_rows_are_no_target() -> None:
    """bench_cutile_rs --jit times the same kernels built by cutile-rs's compiler: the target
    row is ours (the default path), whichever of the two comes last."""
    shape = "4096x4096x4096"
    row = {"case": "cutile-rs gemm.rs gemm f16", "shape": shape, "work": 2 * 4096**3}
    row |= {"max_error": 0.0, "tolerance": 1.0}
    ours = {**row, "ours_s": 1.0, "torch_s": 0.9, "config": "default path, 128x128x64"}
    theirs = {**row, "ours_s": 2.0, "torch_s": 0.9, "config": "cutile-rs's compiler, 128x128x64"}
    text = render([_result("cutile-rs GEMM, default path", "TFLOP/s", [ours, theirs])])
    assert f"| cutile-rs gemm.rs gemm f16 | {shape} | 0.85 | 0.90 | yes |" in text
