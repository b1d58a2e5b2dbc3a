"""Front-end compile time per example kernel: parse -> checks -> tile IR -> bytecode,
without tileiras (that is a separate process with its own cost).

    python -m tests.benchmarks.frontend_time [--repeat 30]

Prints, per specialization in rust_examples/catalog.json, the median and 90th percentile
over `--repeat` runs in one warm process (the first, cold run is reported separately).
"""

from __future__ import annotations

import argparse
import statistics
import time

from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser.spans import SourceFile
from rust_examples.catalog import specializations


def time_one(source: SourceFile, entry: str, generics: tuple[tuple[str, str], ...]) -> float:
    started = time.perf_counter()
    result = compile_kernel(CompileRequest((source,), entry, generics), stop_after=Stage.BYTECODE)
    elapsed = (time.perf_counter() - started) * 1000.0
    if not result.ok:
        raise SystemExit(
            f"{entry} failed to compile:\n" + "\n".join(d.message for d in result.diagnostics)
        )
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    print(f"{'kernel':64} {'cold ms':>8} {'median ms':>10} {'p90 ms':>8}")
    for spec in specializations():
        source = SourceFile(f"rust_examples/{spec.file}", spec.path.read_text())
        cold = time_one(source, spec.entry, spec.generics)
        runs = sorted(time_one(source, spec.entry, spec.generics) for _ in range(args.repeat))
        p90 = runs[int(0.9 * (len(runs) - 1))]
        print(f"{spec.label:64} {cold:8.2f} {statistics.median(runs):10.2f} {p90:8.2f}")


if __name__ == "__main__":
    main()
