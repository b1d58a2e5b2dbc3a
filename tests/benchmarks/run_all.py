"""Run every benchmark family on the GPU, each writing RESULTS/<family>.json, then write
BENCHMARKS.md from them.

    PYTHONPATH=. python3 -m tests.benchmarks.run_all BUNDLE RESULTS [--quick] [-o BENCHMARKS.md]
        [--cutile-cache CACHE]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path

from tests.benchmarks import (
    bench_add,
    bench_attention,
    bench_cutile_python,
    bench_decode_attention,
    bench_gemm,
    bench_gemm_fp8,
    bench_norms,
    write_benchmarks_md,
)

FAMILIES = {
    "add": bench_add.main,
    "norms": bench_norms.main,
    "gemm": bench_gemm.main,
    "gemm_fp8": bench_gemm_fp8.main,
    "attention": bench_attention.main,
    "decode_attention": bench_decode_attention.main,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle")
    parser.add_argument("results", type=Path)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", nargs="*", choices=sorted(FAMILIES), default=list(FAMILIES))
    parser.add_argument("-o", "--out", type=Path, default=Path("BENCHMARKS.md"))
    parser.add_argument(
        "--cutile-cache",
        type=Path,
        help="also time cuTile Python from this cache (tests/benchmarks/bench_cutile_python.py)",
    )
    args = parser.parse_args(argv)
    tune_cache = Path(tempfile.mkdtemp(prefix="tune-"))
    failed = []
    for name in args.only:
        family_argv = [args.bundle, "--json", str(args.results / f"{name}.json")]
        family_argv += ["--tune-cache", str(tune_cache)] + (["--quick"] if args.quick else [])
        sys.argv = [f"tests.benchmarks.bench_{name}", *family_argv]
        try:
            FAMILIES[name](family_argv)
        except Exception:  # one broken family still leaves the others' tables
            traceback.print_exc()
            failed.append(name)
    if args.cutile_cache is not None:
        cutile_argv = ["run", str(args.cutile_cache)]
        cutile_argv += ["--json", str(args.results / "cutile_python.json")]
        sys.argv = ["tests.benchmarks.bench_cutile_python", *cutile_argv]
        if bench_cutile_python.main(cutile_argv):
            failed.append("cutile_python")
    written = write_benchmarks_md.main([str(args.results), "-o", str(args.out)])
    return 1 if failed else written


if __name__ == "__main__":
    raise SystemExit(main())
