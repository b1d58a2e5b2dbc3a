"""Compile every kernel the decoder benchmark launches into one bundle folder (on the CPU
machine, which has tileiras); copy the folder to the GPU host along with the repository.

    python -m benchmarks.decode.build [OUT] [-j 2]      # default OUT: gpu_artifacts/decode

Only the specializations the runs need (`benchmarks.decode.kernels.specializations`): the
speed runs of `bench.STANDARD_RUNS` (decode only), correctness at batch 1 for Qwen3-4B and
Qwen3-32B shapes (prefill + decode, a 256-position cache) and the small memcheck model.
Jobs run as parallel cutile-compile processes, each writing its own bundle folder, merged
into OUT's manifest at the end; the artifact cache makes a rebuild quick.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.decode import kernels as K
from benchmarks.decode.bench import CORRECTNESS_CACHE, STANDARD_RUNS, Run
from benchmarks.decode.config import MODELS

REPO = Path(__file__).resolve().parents[2]
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


def job_argv(specs: Sequence[K.Spec], out: Path) -> list[str]:
    """One cutile-compile command line for `specs` into `out`."""
    entries = sorted({s.entry for s in specs})
    return [
        str(SOURCE),
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=DEFAULT_OUT)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--list", action="store_true", help="print the specializations only")
    args = parser.parse_args(argv)
    specs = bundle_specs()
    if args.list:
        print("\n".join(s.label() for s in specs))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = max(1, args.jobs)
    parts = [args.out / f".part{i}" for i in range(jobs)]
    shares = [specs[i::jobs] for i in range(jobs)]
    print(f"compiling {len(specs)} kernels in {jobs} jobs into {args.out}", flush=True)

    def run(i: int) -> int:
        command = [sys.executable, "-m", "service.batch_cli", *job_argv(shares[i], parts[i])]
        return subprocess.run(command, cwd=REPO, check=False).returncode

    with ThreadPoolExecutor(jobs) as pool:
        codes = list(pool.map(run, range(jobs)))
    if any(codes):
        print(f"error: cutile-compile failed ({codes})", file=sys.stderr)
        return 1
    count = merge([p for p, share in zip(parts, shares, strict=True) if share], args.out)
    print(f"wrote {count} kernels to {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
