"""Compile every kernel variant the benchmark scripts time into one bundle folder (on the CPU
machine, which has tileiras); copy the folder to the GPU host along with the repository.

    python -m tests.benchmarks.build_bundle [OUT]        # default OUT: gpu_artifacts/bench
    python -m tests.benchmarks.build_bundle OUT --family attention   # one family's kernels only
    python -m tests.benchmarks.build_bundle OUT --no-early-launch   # plain kernels

Each family compiles its declared configurations (tests/benchmarks/configs.py) twice where tensor
facts help: the general kernel and a `--facts` variant for tensors whose extents and strides
are multiples of 16 elements (every benchmark shape is), which `Bundle.kernel(...,
for_args=...)` picks. Only these (`--specialize none`): the configurations say which
variants each benchmark times; a group marked `specialize="auto"` gets the default path's
automatic variants instead. Kernels wait for prior grids and are launched early, as
`cutile-compile` builds them by default; `--no-early-launch` builds plain kernels: the same
benchmarks on such a bundle show what the wait costs a kernel.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from service.cli.batch import main as cutile_compile
from tests.benchmarks import configs

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "gpu_artifacts" / "bench"
EXAMPLES = REPO / "rust_examples"


def _generics(config: Mapping[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in config.items())


def _facts(entry: str, facts: Mapping[str, str]) -> list[str]:
    return [arg for param, fact in facts.items() for arg in ("--facts", f"{entry}:{param}:{fact}")]


def compile_jobs(
    out: Path, groups: Sequence[configs.Group] = configs.GROUPS
) -> Iterator[list[str]]:
    """One cutile-compile command line per (entry, facts) group."""
    for group in groups:
        generics = [arg for c in group.configs for arg in ("--generics", _generics(c))]
        base = [str(EXAMPLES / group.file), "--entry", group.entry, *generics]
        tail = ["--arch", "sm_90", "-o", str(out), "--specialize"]
        if group.general:
            yield [*base, *tail, group.specialize]
        if group.facts:
            yield [*base, *_facts(group.entry, group.facts), *tail, "none"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--family", choices=sorted(configs.FAMILIES), help="compile only this family's kernels"
    )
    parser.add_argument(
        "--early-launch",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="kernels that wait for prior grids, launched early (the default); "
        "--no-early-launch: plain kernels",
    )
    args = parser.parse_args(argv)
    groups = configs.FAMILIES[args.family] if args.family else configs.GROUPS
    extra = [] if args.early_launch else ["--no-early-launch"]
    for job in compile_jobs(args.out, groups):
        status = cutile_compile([*job, *extra])
        if status:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
