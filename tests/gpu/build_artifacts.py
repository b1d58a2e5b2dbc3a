"""Compile every example kernel of rust_examples/catalog.json into one bundle folder
(run on the CPU machine, which has tileiras).

    python -m tests.gpu.build_artifacts [OUT]        # default OUT: gpu_artifacts/bundle

Then, on the GPU machine, with OUT copied along:

    PYTHONPATH=. CUTILE_GPU_ARTIFACTS=OUT python3 -m pytest tests/gpu -v
"""

from __future__ import annotations

import sys
from pathlib import Path

from rust_examples.catalog import EXAMPLES, specializations
from service.batch_cli import main as cutile_compile

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "gpu_artifacts" / "bundle"


def argv(out: Path) -> list[str]:
    specs = specializations()
    files = sorted({str(EXAMPLES / s.file) for s in specs})
    entries = sorted({s.entry for s in specs})
    generics = [
        arg
        for s in specs
        for arg in ("--generics", f"{s.entry}:" + ",".join(f"{k}={v}" for k, v in s.generics))
    ]
    return [
        *files,
        *(arg for e in entries for arg in ("--entry", e)),
        *generics,
        "--arch",
        "sm_90",
        "-o",
        str(out),
    ]


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    return cutile_compile(argv(out))


if __name__ == "__main__":
    sys.exit(main())
