"""A GPU session in few calls: build every artifact the GPU checks need here (tileiras), then
run the checks on the GPU machine, each step bounded, every log kept.

    python -m tests.gpu.session build [--cutile-rs PATH] [-j J]       # this machine
    PYTHONPATH=. python3 -m tests.gpu.session run OUT [--budget S] [--only A,B]   # the GPU

`build` writes gpu_artifacts/ (the bundle of every example, the benchmark bundle and the
decoder's kernels, each as built by default, launched early, and plain; the Rust host's
example binaries, which need cargo here; with a cutile-rs checkout also its GEMM examples
by our compiler and by its own, the bundle of every cutile-rs entry with the tuned-tiles
controls, for the compatibility runner's GPU mode, and that bundle without its occupancy
variants),
packs it into one gzipped tar (artifacts/gpu.tgz: a third of the size, so that all of it
fits the device's 64 MiB carry) and prints the paths to carry. `run` unpacks that tar
where gpu_artifacts/ is missing, takes the steps below in order, skips those whose artifacts
are missing, starts none whose bound exceeds what is left of `--budget` seconds (default 570:
one device call runs at most 600) after the steps before it took their real time, and
writes each step's output to OUT/<step>.log, the JSON some steps write beside it, and
OUT/summary.json (status and seconds per step). `--only` picks a
subset, so a session is a few calls of ~10 minutes each.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ART = "gpu_artifacts"
PACKED = "artifacts/gpu.tgz"  # git-ignored, carried to the device in place of ART
PY = sys.executable


@dataclass(frozen=True)
class Step:
    name: str
    argv: tuple[str, ...]  # "{out}" is replaced by the run's output folder
    seconds: int  # the bound of this step
    needs: tuple[str, ...]  # artifact folders it reads
    env: tuple[tuple[str, str], ...] = field(default=())


def _py(*args: str) -> tuple[str, ...]:
    return (PY, "-m", *args)


DECODE_RUNS = "4b:1:1024,4b:1:8192,32b:1:1024"
STEPS = (
    Step(
        "gpu-tests",
        _py("pytest", "tests/gpu", "--ignore=tests/gpu/test_decoder_gpu.py", "-q"),
        300,
        (f"{ART}/bundle",),
        (("CUTILE_GPU_ARTIFACTS", f"{ART}/bundle"),),
    ),
    Step(
        "decoder-tests",
        _py("pytest", "tests/gpu/test_decoder_gpu.py", "-q"),
        240,
        (f"{ART}/decode",),
        (("CUTILE_GPU_ARTIFACTS", f"{ART}/decode"),),
    ),
    Step(
        "launch-overhead",
        _py("tests.benchmarks.launch_overhead", f"{ART}/bundle/default"),
        120,
        (f"{ART}/bundle/default",),
    ),
    Step(
        "launch-overhead-plain",
        _py("tests.benchmarks.launch_overhead", f"{ART}/bundle/plain"),
        120,
        (f"{ART}/bundle/plain",),
    ),
    Step(  # the Rust host's examples and launch benchmark, prebuilt here (no cargo there)
        "rust-examples",
        ("bash", f"{ART}/rust/run_gpu_examples.sh", f"{ART}/rust", f"{ART}/bundle"),
        180,
        (f"{ART}/rust", f"{ART}/bundle"),
    ),
    Step(
        "decode-vs-plain",
        _py(
            "tests.benchmarks.decode.bench",
            f"{ART}/decode",
            "speed",
            "--runs",
            DECODE_RUNS,
            "--no-torch-eager",
            "--also",
            f"{ART}/decode-plain",
            "--json",
            "{out}/decode_vs_plain.json",
        ),
        540,
        (f"{ART}/decode", f"{ART}/decode-plain"),
    ),
    Step(
        "decode-correctness",
        _py("tests.benchmarks.decode.bench", f"{ART}/decode", "correctness"),
        300,
        (f"{ART}/decode",),
    ),
    Step(
        "decode-memcheck",
        (
            "compute-sanitizer",
            "--tool",
            "memcheck",
            "--report-api-errors",
            "no",
            "--error-exitcode",
            "1",
            *_py("tests.benchmarks.decode.bench", f"{ART}/decode", "memcheck"),
        ),
        300,
        (f"{ART}/decode",),
    ),
    Step(
        "bench-tables",
        _py("tests.benchmarks.run_all", f"{ART}/bench", "{out}/bench", "-o", "{out}/BENCHMARKS.md"),
        240,
        (f"{ART}/bench",),
    ),
    Step(
        "bench-tables-plain",
        _py(
            "tests.benchmarks.run_all",
            f"{ART}/bench-plain",
            "{out}/bench-plain",
            "-o",
            "{out}/BENCHMARKS-plain.md",
        ),
        240,
        (f"{ART}/bench-plain",),
    ),
    Step(
        "cutile-rs",
        _py(
            "tests.benchmarks.bench_cutile_rs",
            f"{ART}/cutile-rs",
            "--jit",
            f"{ART}/cutile-rs-jit/jit",
            "--json",
            "{out}/cutile_rs.json",
        ),
        300,
        (f"{ART}/cutile-rs", f"{ART}/cutile-rs-jit/jit"),
    ),
    Step(
        "compat",
        _py("tests.compat.gpu_check", f"{ART}/compat", "-o", "{out}/compat_gpu.json"),
        420,
        (f"{ART}/compat",),
    ),
    Step(  # the occupancy variant off: `tests.compat.compare_runs` against "compat"
        "compat-stripped",
        _py(
            "tests.compat.gpu_check",
            f"{ART}/compat-stripped",
            "-o",
            "{out}/compat_stripped_gpu.json",
        ),
        300,
        (f"{ART}/compat-stripped",),
    ),
)


def build_commands(cutile_rs: Path | None, jobs: int) -> list[tuple[str, ...]]:
    """What `build` runs, in order."""
    commands = [
        _py("tests.gpu.build_artifacts", f"{ART}/bundle"),
        _py("tests.benchmarks.decode.build", f"{ART}/decode", "-j", str(jobs)),
        _py(
            "tests.benchmarks.decode.build",
            f"{ART}/decode-plain",
            "-j",
            str(jobs),
            "--no-early-launch",
        ),
        _py("tests.benchmarks.build_bundle", f"{ART}/bench"),
        _py("tests.benchmarks.build_bundle", f"{ART}/bench-plain", "--no-early-launch"),
        ("bash", "client_stubs/rust/package_gpu_binaries.sh", f"{ART}/rust"),
    ]
    if cutile_rs is not None:
        commands += [
            _py(
                "tests.benchmarks.build_cutile_rs",
                f"{ART}/cutile-rs",
                "--cutile-rs",
                str(cutile_rs),
            ),
            _py(
                "tests.benchmarks.cutile_rs_jit",
                f"{ART}/cutile-rs-jit",
                "--cutile-rs",
                str(cutile_rs),
            ),
            _py(
                "tests.compat.runner",
                "--cutile-rs",
                str(cutile_rs),
                "-o",
                f"{ART}/compat.md",
                "--bundle",
                f"{ART}/compat",
                "-j",
                str(jobs),
            ),
            _py(
                "tests.compat.compare_runs",
                "--strip-occupancy-variants",
                f"{ART}/compat",
                f"{ART}/compat-stripped",
            ),
        ]
    return commands


# what the GPU steps read: packed into PACKED, carried with the compiled launcher
ARTIFACTS = (
    f"{ART}/bundle",
    f"{ART}/bench",
    f"{ART}/bench-plain",
    f"{ART}/decode",
    f"{ART}/decode-plain",
    f"{ART}/cutile-rs",
    f"{ART}/cutile-rs-jit/jit",
    f"{ART}/compat",
    f"{ART}/compat-stripped",
    f"{ART}/rust",
)
LAUNCHER = "client_stubs/native/_launch.abi3.so"


def pack(root: Path) -> Path | None:
    """The present ARTIFACTS of `root` in one gzipped tar, root / PACKED (None: none)."""
    present = [path for path in ARTIFACTS if (root / path).exists()]
    if not present:
        return None
    packed = root / PACKED
    packed.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(packed, "w:gz") as tar:
        for path in present:
            tar.add(root / path, arcname=path)
    return packed


def unpack(root: Path) -> bool:
    """Unpack root / PACKED into root where root / ART is missing; whether it did."""
    packed = root / PACKED
    if (root / ART).exists() or not packed.exists():
        return False
    # the "data" filter (no links out, no devices) where this Python has it (3.11.4+, 3.12+):
    # the GPU host's Python is not ours
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
    with tarfile.open(packed, "r:gz") as tar:
        tar.extractall(root, **safe)  # our own tar, packed by `pack`
    return True


def build(cutile_rs: Path | None, jobs: int) -> int:
    """Every build command, each one whatever the others did (the steps that read a failed
    one's output are skipped on the GPU); 1 if any failed."""
    failed = []
    for command in build_commands(cutile_rs, jobs):
        print("$", " ".join(command), flush=True)
        if subprocess.run(command, cwd=REPO, check=False).returncode:
            failed.append(command[2] if command[1] == "-m" else command[1])
    packed = pack(REPO)
    carry = [str(packed.relative_to(REPO))] if packed else []
    carry += [LAUNCHER] if (REPO / LAUNCHER).exists() else []
    print("carry:", json.dumps(carry))
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


def skip_reason(step: Step, left: float, root: Path) -> str:
    """Why `step` is not started with `left` seconds of the budget left ("": it is)."""
    missing = [need for need in step.needs if not (root / need).exists()]
    if missing:
        return f"missing {', '.join(missing)}"
    if step.seconds > left:
        return f"needs {step.seconds} s, {left:.0f} s left of the budget"
    return ""


def plan(only: set[str] | None, budget: float, root: Path) -> list[tuple[Step, str]]:
    """(step, why it is skipped or "") for every step, in order, were each to take its
    whole bound (`run` decides on the time the steps before took)."""
    left, rows = budget, []
    for step in STEPS:
        if only is not None and step.name not in only:
            continue
        why = skip_reason(step, left, root)
        left -= 0 if why else step.seconds
        rows.append((step, why))
    return rows


def run(out: Path, budget: float, only: set[str] | None) -> int:
    out.mkdir(parents=True, exist_ok=True)
    if unpack(REPO):
        print(f"unpacked {PACKED}", flush=True)
    summary: dict[str, dict[str, object]] = {}
    started = time.monotonic()
    for step in STEPS:
        if only is not None and step.name not in only:
            continue
        skipped = skip_reason(step, budget - (time.monotonic() - started), REPO)
        if skipped:
            summary[step.name] = {"status": "skipped", "why": skipped}
            print(f"{step.name}: skipped ({skipped})", flush=True)
            continue
        argv = [part.replace("{out}", str(out)) for part in step.argv]
        env = {**os.environ, "PYTHONPATH": str(REPO), **dict(step.env)}
        began = time.monotonic()
        with (out / f"{step.name}.log").open("w") as log:
            log.write("$ " + " ".join(argv) + "\n")
            log.flush()
            try:
                code = subprocess.run(
                    argv, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                    timeout=step.seconds, check=False,
                ).returncode  # fmt: skip
            except subprocess.TimeoutExpired:
                code = 124
        took = time.monotonic() - began
        summary[step.name] = {"status": code, "seconds": round(took, 1)}
        print(f"{step.name}: exit {code} in {took:.0f} s", flush=True)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"session: {time.monotonic() - started:.0f} s")
    return 0 if all(row["status"] in (0, "skipped") for row in summary.values()) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    building = modes.add_parser("build")
    building.add_argument("--cutile-rs", type=Path, default=os.environ.get("CUTILE_RS"))
    building.add_argument("-j", "--jobs", type=int, default=2)
    running = modes.add_parser("run")
    running.add_argument("out", type=Path)
    running.add_argument("--budget", type=float, default=570.0)
    running.add_argument(
        "--only", help="comma-separated step names: " + ", ".join(s.name for s in STEPS)
    )
    options = parser.parse_args(argv)
    if options.mode == "build":
        return build(options.cutile_rs, options.jobs)
    only = set(options.only.split(",")) if options.only else None
    return run(options.out, options.budget, only)


if __name__ == "__main__":
    sys.exit(main())
