"""tests/benchmarks/decode/bench.py end to end on the CPU (torch CPU; skipped without torch): each
mode runs as on the GPU host, with the kernels emulated (tests/benchmarks/decode_emulation.py),
torch.cuda's timing and memory queries stood in, torch's CUDA graph replaced by its eager
step, and a small Qwen3-shaped model in place of the real ones."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from tests.benchmarks import timing  # noqa: E402
from tests.benchmarks.decode import bench, reference  # noqa: E402
from tests.benchmarks.decode.config import MODELS  # noqa: E402
from tests.benchmarks.decode_emulation import FakeBundle, Harness  # noqa: E402
from tests.benchmarks.test_decode_host import CUTILE_RS, SMALL  # noqa: E402
from tests.benchmarks.write_benchmarks_md import render  # noqa: E402


class _Event:
    def __init__(self, **_: object) -> None:
        self.at = 0.0

    def record(self, *_: object) -> None:
        self.at = time.perf_counter()

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, end: _Event) -> float:
        return max(end.at - self.at, 1e-6) * 1e3


class _EagerGraph(reference.DecodeGraph):
    """torch's decode step run eagerly at each replay (CPU torch has no CUDA graphs)."""

    def __init__(self, ref, tok, pos, exact) -> None:
        self.ref, self.tok, self.pos, self.exact = ref, tok, pos, exact
        self._step()
        self._step()  # the two warm-up steps of the real capture

    def replay(self) -> None:
        self._step()


@pytest.fixture
def cpu_bench(monkeypatch: pytest.MonkeyPatch) -> FakeBundle:
    Harness(monkeypatch)
    bundle = FakeBundle()
    monkeypatch.setattr(bench, "DEVICE", "cpu")
    monkeypatch.setitem(MODELS, "small", SMALL)
    monkeypatch.setitem(MODELS, "tiny", replace(SMALL, name="tiny"))
    monkeypatch.setattr(bench, "check_bundle", lambda path, specs: bundle)
    monkeypatch.setattr(bench, "copy_bandwidth", lambda: 4.0e12)
    monkeypatch.setattr(timing, "median_seconds", lambda launch, **_: (launch(), 1e-3)[1])
    monkeypatch.setattr(reference, "DecodeGraph", _EagerGraph)
    fakes = {
        "is_available": lambda: True,
        "mem_get_info": lambda: (1 << 40, 1 << 40),
        "synchronize": lambda: None,
        "empty_cache": lambda: None,
        "get_device_name": lambda: "CPU (emulated kernels)",
        "current_stream": lambda: None,
        "Event": _Event,
    }
    for name, fake in fakes.items():
        monkeypatch.setattr(torch.cuda, name, fake)
    return bundle


def test_correctness_mode_passes_and_prints_the_lockstep_report(
    cpu_bench: FakeBundle, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(["B", "correctness", "--model", "small", "--batch", "2", "--steps", "3"]) == 0
    text = capsys.readouterr().out
    assert "greedy tokens identical for the first 3 decode steps and at 3 of 3" in text
    assert "near ties at 0" in text
    assert "torch + CUDA graph vs torch eager" in text
    assert "correctness PASSED" in text


def test_speed_mode_writes_the_rows_benchmarks_md_renders(
    cpu_bench: FakeBundle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "decode.json"
    argv = ["B", "speed", "--runs", "small:2:64", "--steps", "6", "--json", str(out)]
    assert bench.main(argv) == 0
    payload = json.loads(out.read_text())
    (row,) = payload["rows"]
    assert (row["model"], row["batch"], row["context"]) == ("small", 2, 64)
    assert row["ours_tps"] > 0 and row["torch_graph_tps"] > 0 and row["torch_eager_tps"] > 0
    assert row["launches_per_step"] == 1 + SMALL.layers * 9 + 4  # embedding, layers, head
    assert "## Decode: Qwen3-shaped models" in render([payload])
    assert "qkv:" in row["plan"]


def test_speed_mode_times_an_also_bundle_in_the_same_run(
    cpu_bench: FakeBundle, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "decode.json"
    argv = ["B", "speed", "--runs", "small:1:64", "--steps", "4", "--also", "B2"]
    assert bench.main([*argv, "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["also_tps"] > 0
    text = capsys.readouterr().out
    assert "| --also tok/s | also/bound" in text and "the --also bundle:" in text


def test_memcheck_mode_runs_prefill_and_graph_decode(
    cpu_bench: FakeBundle, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(["B", "memcheck", "--steps", "2"]) == 0
    assert "memcheck workload ok" in capsys.readouterr().out


@pytest.mark.skipif(
    not (CUTILE_RS / "cutile-kernels").is_dir(), reason="no cutile-rs checkout (CUTILE_RS)"
)
def test_f16_modes_run_the_decoder_over_cutile_kernels(
    cpu_bench: FakeBundle, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cpu_bench.cutile_rs = CUTILE_RS
    argv = ["B", "correctness", "--f16", "--model", "small", "--steps", "2"]
    assert bench.main(argv) == 0
    assert "correctness PASSED" in capsys.readouterr().out
    out = tmp_path / "decode_f16.json"
    argv = ["B", "speed", "--f16", "--runs", "small:1:64", "--steps", "4", "--json", str(out)]
    assert bench.main(argv) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["model"] == "small (f16: cutile-kernels)" and row["ours_tps"] > 0
    assert bench.main(["B", "memcheck", "--f16", "--steps", "2"]) == 0
    with pytest.raises(SystemExit, match="batch 1 only"):
        bench.main(["B", "speed", "--f16", "--runs", "small:2:64"])
