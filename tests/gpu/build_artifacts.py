"""Compile the GPU tests' kernels into one bundle folder (run on the CPU machine).

    python -m tests.gpu.build_artifacts [OUT]        # default OUT: gpu_artifacts/bundle

Then, on the GPU machine, with OUT copied along:

    PYTHONPATH=. CUTILE_GPU_ARTIFACTS=OUT python3 -m pytest tests/gpu -v
"""

from __future__ import annotations

import sys
from pathlib import Path

from service.batch_cli import main as cutile_compile

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "gpu_artifacts" / "bundle"

# add: the Quick Start kernel (f32) and its generic twin in two more element types;
# saxpy: a scalar parameter of every float width (f16 and bf16 pack 2-byte scalars);
# copy_persistent: a MappedPartitionMut output, launched on a host-chosen persistent grid.
GENERICS = (
    "add:B=1024",
    "add_generic:E=f16,B=1024",
    "add_generic:E=bf16,B=1024",
    "saxpy:E=f32,B=1024",
    "saxpy:E=f16,B=1024",
    "saxpy:E=bf16,B=1024",
    "saxpy:E=f64,B=256",
    "copy_persistent:E=f32,BM=64,BN=64,MAP=[4, 1]",
)
FILES = ("add.rs", "saxpy.rs", "persistent_gemm.rs")
ENTRIES = ("add", "add_generic", "saxpy", "copy_persistent")


def argv(out: Path) -> list[str]:
    files = [str(REPO / "rust_examples" / name) for name in FILES]
    entries = [arg for name in ENTRIES for arg in ("--entry", name)]
    generics = [arg for spec in GENERICS for arg in ("--generics", spec)]
    return [*files, *entries, *generics, "--arch", "sm_90", "--no-cache", "-o", str(out)]


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    return cutile_compile(argv(out))


if __name__ == "__main__":
    sys.exit(main())
