"""Write BENCHMARKS.md from the JSON the family scripts wrote (`--json`), one table per
family with the exact command that produced it.

    python -m tests.benchmarks.write_benchmarks_md RESULTS_DIR [-o BENCHMARKS.md]

Reads every RESULTS_DIR/*.json; needs neither torch nor a GPU.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

ORDER = (
    "element-wise add",
    "softmax and RMSNorm",
    "GEMM",
    "FP8 GEMM",
    "flash attention",
    "decode attention",
    "cutile-rs GEMM, default path",
)
CUTILE_PYTHON = "cuTile Python"  # tests/benchmarks/bench_cutile_python.py: compared, not a target
# bench_cutile_rs --jit: the same kernels by cutile-rs's own compiler, compared, not a target
OTHER_COMPILER = "cutile-rs's compiler"
DECODE = "decode"  # tests/benchmarks/decode/bench.py: tokens/s of whole models, its own table
# issue 16's targets: (model, batch, least ours / bound, least ours / torch + CUDA graphs)
DECODE_TARGETS = (("Qwen3-4B", 1, 0.80, 1.00), ("Qwen3-32B", 1, 0.80, None))
HEADER = """# Benchmarks

Our kernels (compiled by cutile-serve from `rust_examples/`, the fastest of the declared
configurations in `tests/benchmarks/configs.py` per shape, picked by
`client_stubs/autotune.py`) next to torch in the same run. Times are medians of timed reps
after warm-up (`tests/benchmarks/timing.py`, rows and reports in
`tests/benchmarks/family.py`); torch is timed before and after ours and the faster time
counts; "ratio" is torch time / our time (above 1: we are faster).
Regenerate: `python -m tests.benchmarks.build_bundle` on the CPU machine, then on the GPU host
`PYTHONPATH=. python3 -m tests.benchmarks.run_all gpu_artifacts/bench bench_results`
(which ends by rewriting this file); add `--cutile-cache gpu_artifacts/cutile-cache` for the
cuTile Python table (README, "Speed on the GPU").
"""


# issues 7 and 14's targets: (case, shape, least ratio ours / torch in the same run)
TARGETS = (
    ("add f32", "2^28", 1.00),
    ("add f32", "2^20", 1.00),
    ("softmax f32", "1024x1024", 1.00),
    ("softmax f32", "32768x4096", 1.10),
    ("rms_norm f32", "32768x4096", 1.10),
    ("gemm f16", "8192x8192x8192", 1.00),
    ("gemm bf16", "8192x8192x8192", 1.00),
    ("gemm f16", "4096x4096x4096", 0.97),
    ("gemm bf16", "4096x4096x4096", 0.97),
    ("gemm fp8 e4m3 -> bf16", "4096x4096x4096", 0.90),
    ("gemm fp8 e4m3 -> bf16", "8192x8192x8192", 0.90),
    ("flash attention non-causal D=128", "4x32x4096x128", 1.00),
    ("flash attention causal D=128", "4x32x4096x128", 1.00),
    ("cutile-rs gemm.rs gemm f16", "4096x4096x4096", 0.85),
    ("cutile-rs persistent_gemm.rs gemm_persistent f16", "4096x4096x4096", 0.85),
)


def targets(results: Sequence[Mapping[str, object]]) -> str:
    """The targets table: each target's measured ratio, or "not measured"."""
    found = {
        (row["case"], row["shape"]): row["torch_s"] / row["ours_s"]
        for result in results
        if result["family"] not in (CUTILE_PYTHON, DECODE)
        for row in result["rows"]  # type: ignore[attr-defined]
        if not str(row.get("config", "")).startswith(OTHER_COMPILER)
    }
    lines = [
        "## Targets",
        "",
        "| case | shape | target | measured | met |",
        "|---|---|---:|---:|---|",
    ]
    for case, shape, least in TARGETS:
        ratio = found.get((case, shape))
        measured = "not measured" if ratio is None else f"{ratio:.2f}"
        met = "" if ratio is None else ("yes" if ratio >= least else f"no ({ratio - least:+.2f})")
        lines.append(f"| {case} | {shape} | {least:.2f} | {measured} | {met} |")
    return "\n".join(lines) + "\n"


def _rate(work: float, seconds: float) -> float:
    return work / seconds / 1e12


def _check(row: Mapping[str, float]) -> str:
    """The check column: "ok", or the error that exceeded the row's tolerance."""
    return "ok" if row["max_error"] <= row["tolerance"] else f"MISMATCH {row['max_error']:.3g}"


def table(result: Mapping[str, object]) -> str:
    rows = result["rows"]
    assert isinstance(rows, list)
    unit = rows[0]["unit"] if rows else ""
    lines = [
        f"## {result['family']}",
        "",
        f"`{result['command']}` on {result['device']}, torch {result['torch']}",
        "",
        f"| case | shape | ours ({unit}) | torch ({unit}) | ratio | our config | check |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for row in rows:
        ours = _rate(row["work"], row["ours_s"])
        theirs = _rate(row["work"], row["torch_s"])
        ok = _check(row)
        lines.append(
            f"| {row['case']} | {row['shape']} | {ours:.2f} | {theirs:.2f} | "
            f"{row['torch_s'] / row['ours_s']:.2f} | {row['config']} | {ok} |"
        )
    return "\n".join(lines) + "\n"


def cutile_python_table(cutile: Mapping[str, object], ours: Sequence[Mapping[str, object]]) -> str:
    """cuTile Python's fastest configuration per case next to ours and torch's, from one run;
    "ours / cuTile" above 1: ours is faster."""
    mine = {(row["case"], row["shape"]): row for result in ours for row in result["rows"]}  # type: ignore[attr-defined]
    rows = cutile["rows"]
    assert isinstance(rows, list)
    lines = [
        "## cuTile Python",
        "",
        "The same kernels written in cuTile Python (tests/benchmarks/cutile_python_kernels.py,",
        "the fastest of the configurations listed in tests/benchmarks/bench_cutile_python.py),",
        "compiled by cuTile itself; see that script for how it runs on the GPU host.",
        "",
        f"`{cutile['command']}` on {cutile['device']}, torch {cutile['torch']}",
        "",
        "| case | shape | unit | ours | cuTile Python | torch | ours / cuTile | cuTile config "
        "| check |",
        "|---|---|---|---:|---:|---:|---:|---|---|",
    ]
    for row in rows:
        theirs = _rate(row["work"], row["ours_s"])
        torch_rate = _rate(row["work"], row["torch_s"])
        ok = _check(row)
        own = mine.get((row["case"], row["shape"]))
        ours_cell = "" if own is None else f"{_rate(own['work'], own['ours_s']):.2f}"
        versus = "" if own is None else f"{row['ours_s'] / own['ours_s']:.2f}"
        lines.append(
            f"| {row['case']} | {row['shape']} | {row['unit']} | {ours_cell} | {theirs:.2f} "
            f"| {torch_rate:.2f} "
            f"| {versus} | {row['config']} | {ok} |"
        )
    return "\n".join(lines) + "\n"


def decode_table(result: Mapping[str, object]) -> str:
    """Tokens/s of the decoder (ours), torch eager and torch + CUDA graphs, the bandwidth
    bound, and issue 16's targets on the batch-1 rows."""
    rows = result["rows"]
    assert isinstance(rows, list)
    lines = [
        "## Decode: Qwen3-shaped models",
        "",
        "Every operation of ours is a kernel of rust_examples/decoder.rs, the decode step a CUDA",
        "graph (tests/benchmarks/decode/); torch runs the same model on the same weights and KV",
        "cache.",
        "The bound is (weight + KV-cache bytes per step) / the measured copy bandwidth.",
        "",
        f"`{result['command']}` on {result['device']}, torch {result['torch']}",
        "",
        "| model | batch | context | ours (tok/s) | torch eager | torch + graphs | bound "
        "| ours / bound | ours / torch + graphs | target met |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        of_bound = row["ours_tps"] / row["bound_tps"]
        versus = row["ours_tps"] / row["torch_graph_tps"] if row["torch_graph_tps"] else 0.0
        eager = f"{row['torch_eager_tps']:.1f}" if row["torch_eager_tps"] else "not run"
        lines.append(
            f"| {row['model']} | {row['batch']} | {row['context']} | {row['ours_tps']:.1f} "
            f"| {eager} | {row['torch_graph_tps']:.1f} | {row['bound_tps']:.1f} "
            f"| {of_bound:.2f} | {versus:.2f} | {_decode_target(row, of_bound, versus)} |"
        )
    return "\n".join(lines) + "\n"


def _decode_target(row: Mapping[str, object], of_bound: float, versus: float) -> str:
    for model, batch, bound, torch_graphs in DECODE_TARGETS:
        if row["model"] == model and row["batch"] == batch:
            ok = of_bound >= bound and (torch_graphs is None or versus >= torch_graphs)
            wanted = f">= {bound:.2f} of bound" + (
                f", >= {torch_graphs:.2f}x torch + graphs" if torch_graphs else ""
            )
            return ("yes" if ok else "no") + f" ({wanted})"
    return ""


def render(results: Sequence[Mapping[str, object]]) -> str:
    ours = [r for r in results if r["family"] not in (CUTILE_PYTHON, DECODE)]
    ranked = sorted(
        ours, key=lambda r: ORDER.index(r["family"]) if r["family"] in ORDER else len(ORDER)
    )
    text = HEADER + "\n" + targets(ranked) + "".join("\n" + table(r) for r in ranked)
    for cutile in (r for r in results if r["family"] == CUTILE_PYTHON):
        text += "\n" + cutile_python_table(cutile, ranked)
    for decode in (r for r in results if r["family"] == DECODE):
        text += "\n" + decode_table(decode)
    return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("-o", "--out", type=Path, default=Path("BENCHMARKS.md"))
    args = parser.parse_args(argv)
    results = [json.loads(p.read_text()) for p in sorted(args.results.glob("*.json"))]
    if not results:
        parser.error(f"no *.json results in {args.results}")
    args.out.write_text(render(results))
    print(f"wrote {args.out} ({len(results)} tables)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
