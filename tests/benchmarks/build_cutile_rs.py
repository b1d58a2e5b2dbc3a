"""Compile cutile-rs's own GEMM examples unchanged, the default way (`cutile-compile` with no
`--specialize` or `--facts`: the general kernel plus its automatic variants), for
`tests.benchmarks.bench_cutile_rs` (on the CPU machine, which has tileiras).

    python -m tests.benchmarks.build_cutile_rs --cutile-rs PATH [OUT]  # gpu_artifacts/cutile-rs

PATH is a local cutile-rs checkout (or CUTILE_RS); nothing of it is copied into this repository.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from service.cli.batch import main as cutile_compile
from tests.benchmarks.configs import CUTILE_RS_KERNELS

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "gpu_artifacts" / "cutile-rs"


def out_and_checkout(
    description: str, default_out: Path, argv: Sequence[str] | None
) -> tuple[Path, Path]:
    """`[OUT] --cutile-rs PATH` (or CUTILE_RS): the output folder and the checkout."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("out", nargs="?", type=Path, default=default_out)
    parser.add_argument("--cutile-rs", type=Path, default=os.environ.get("CUTILE_RS"))
    args = parser.parse_args(argv)
    if args.cutile_rs is None:
        parser.error("give --cutile-rs PATH (or set CUTILE_RS)")
    return args.out, args.cutile_rs


def main(argv: Sequence[str] | None = None) -> int:
    out, checkout = out_and_checkout(__doc__.splitlines()[0], DEFAULT_OUT, argv)
    for kernel in CUTILE_RS_KERNELS:
        generics = ",".join(f"{k}={v}" for k, v in kernel.generics.items())
        source = checkout / kernel.source
        command = [str(source), "--entry", kernel.entry, "--generics", generics]
        status = cutile_compile([*command, "--arch", "sm_90", "-o", str(out)])
        if status:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
