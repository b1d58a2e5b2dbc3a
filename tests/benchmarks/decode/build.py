"""Compile every kernel the decoder benchmark launches into one bundle folder (on the CPU
machine, which has tileiras); copy the folder to the GPU host along with the repository.

    python -m tests.benchmarks.decode.build [OUT] [-j 2] [--cutile-rs PATH] [--no-early-launch]
                                                     # default OUT: gpu_artifacts/decode

Only the specializations the runs need (`tests.benchmarks.decode.kernels.specializations`): the
speed runs of `bench.STANDARD_RUNS` (decode only), correctness at batch 1 for Qwen3-4B and
Qwen3-32B shapes (prefill + decode, a 256-position cache) and the small memcheck model. With
a cutile-rs checkout (`--cutile-rs`, or CUTILE_RS), also the f16 decoder's kernels (its
cutile-kernels specializations, compiled unchanged from the checkout, and ours in f16) for
`bench.F16_RUNS`, correctness and memcheck. Jobs run as parallel cutile-compile processes,
each writing its own bundle folder, merged into OUT's manifest at the end; the artifact cache
makes a rebuild quick. Every kernel waits for prior grids, as `cutile-compile` builds it by
default, so that the decode step's kernels are launched early (programmatic dependent
launch); `--no-early-launch` builds plain kernels to compare with (or CUTILE_EARLY_LAUNCH=0
on the same bundle).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.benchmarks.decode import kernels as K
from tests.benchmarks.decode.bench import CORRECTNESS_CACHE, F16_RUNS, STANDARD_RUNS, Run
from tests.benchmarks.decode.config import MODELS

REPO = Path(__file__).resolve().parents[3]
DEFAULT_OUT = REPO / "gpu_artifacts" / "decode"
SOURCE = REPO / "rust_examples" / K.SOURCE


def bundle_specs(runs: Sequence[str] = STANDARD_RUNS) -> list[K.Spec]:
    """The union of every mode's specializations."""
    speed = [Run.parse(r) for r in runs]
    specs = [
        s for r in speed for s in K.specializations(r.config, r.batch, r.context, prefill=False)
    ]
    for name in ("4b", "32b", "tiny"):
        specs += K.specializations(MODELS[name], 1, CORRECTNESS_CACHE)
    return K.unique(specs)


def f16_specs() -> tuple[list[K.Spec], list[K.CutileSpec]]:
    """The f16 decoder's specializations: ours, and cutile-kernels'."""
    runs = [(Run.parse(r).config, Run.parse(r).context) for r in F16_RUNS]
    runs += [(MODELS["4b"], CORRECTNESS_CACHE), (MODELS["tiny"], CORRECTNESS_CACHE)]
    ours = K.unique(s for model, _ in runs for s in K.f16_specializations(model))
    cutile = K.unique(s for model, cache in runs for s in K.cutile_specializations(model, cache))
    return ours, cutile  # type: ignore[return-value]


def job_argv(specs: Sequence[K.Spec], out: Path, source: Path = SOURCE) -> list[str]:
    """One cutile-compile command line for `specs` (all of one source file) into `out`."""
    entries = sorted({s.entry for s in specs})
    return [
        str(source),
        *(a for e in entries for a in ("--entry", e)),
        *(a for s in specs for a in ("--generics", s.cli())),
        *("--arch", "sm_90", "-o", str(out)),
    ]


def merge(parts: Sequence[Path], out: Path) -> int:
    """Move the parts' files into `out` and write one manifest listing every kernel."""
    kernels = []
    manifest: dict = {}
    for part in parts:
        manifest = json.loads((part / "manifest.json").read_text())
        kernels += manifest["kernels"]
        for path in part.iterdir():
            if path.name != "manifest.json":
                shutil.move(str(path), out / path.name)
        shutil.rmtree(part)
    manifest["kernels"] = kernels
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return len(kernels)


def jobs_for(
    cutile_rs: Path | None, jobs: int
) -> list[tuple[Path, list[K.Spec] | list[K.CutileSpec]]]:
    """(source file, its specializations) per cutile-compile job: ours in `jobs` shares, and
    with a checkout one job per cutile-kernels file."""
    ours = bundle_specs()
    work: list[tuple[Path, list]] = []
    cutile: list[K.CutileSpec] = []
    if cutile_rs is not None:
        f16_ours, cutile = f16_specs()
        ours = K.unique([*ours, *f16_ours])
    work += [(SOURCE, ours[i :: max(1, jobs)]) for i in range(max(1, jobs))]
    for path in sorted({s.path for s in cutile}):
        work.append((cutile_rs / path, [s for s in cutile if s.path == path]))  # type: ignore[operator]
    return [(source, specs) for source, specs in work if specs]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--cutile-rs", type=Path, help="a cutile-rs checkout (or CUTILE_RS)")
    parser.add_argument("--list", action="store_true", help="print the specializations only")
    parser.add_argument(
        "--early-launch",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="kernels that wait for prior grids, launched early (the default); "
        "--no-early-launch: plain kernels",
    )
    args = parser.parse_args(argv)
    root = args.cutile_rs or (Path(os.environ["CUTILE_RS"]) if "CUTILE_RS" in os.environ else None)
    if root is not None and not (root / K.CUTILE_SRC).is_dir():
        print(f"error: {root} holds no {K.CUTILE_SRC}", file=sys.stderr)
        return 2
    work = jobs_for(root, args.jobs)
    if args.list:
        print("\n".join(s.label() for _, specs in work for s in specs))
        return 0
    if root is None:
        print("no cutile-rs checkout (--cutile-rs / CUTILE_RS): the f16 decoder is left out")
    args.out.mkdir(parents=True, exist_ok=True)
    parts = [args.out / f".part{i}" for i in range(len(work))]
    total = sum(len(specs) for _, specs in work)
    print(f"compiling {total} kernels in {len(work)} jobs into {args.out}", flush=True)

    def run(i: int) -> int:
        source, specs = work[i]
        argv = job_argv(specs, parts[i], source)  # type: ignore[arg-type]
        command = [sys.executable, "-m", "service.cli.batch", *argv]
        if not args.early_launch:
            command.append("--no-early-launch")
        return subprocess.run(command, cwd=REPO, check=False).returncode

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        codes = list(pool.map(run, range(len(work))))
    if any(codes):
        print(f"error: cutile-compile failed ({codes})", file=sys.stderr)
        return 1
    count = merge(parts, args.out)
    print(f"wrote {count} kernels to {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
