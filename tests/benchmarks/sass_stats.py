"""What a cubin's machine code shows about its speed, without a GPU: registers, shared memory,
spills, tensor-core instructions and how often the kernel waits for them, TMA and plain
global loads. The evidence BENCHMARKS.md and the README cite for a kernel far from torch.

    python -m tests.benchmarks.sass_stats CUBIN_OR_FOLDER [...]

It reads `cuobjdump -sass` and `cuobjdump -res-usage` (the `nvidia-cuda-cuobjdump` and
`nvidia-cuda-nvdisasm` wheels of the dev extras, or PATH). Counts are of instructions in the
code, not of executions: a wait in a loop counts once.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lowering.tileiras import nvidia_binary

# a wgmma of any input type: HGMMA (f16/bf16/tf32), QGMMA (fp8), IGMMA (i8), BGMMA (b1)
_WGMMA = re.compile(r"\b[HQIB]GMMA\.\S+")
# `WARPGROUP.DEPBAR.LE gsb0, 0x0`: wait until no wgmma of this warpgroup is in flight
# a warp-level MMA (mma.sync): HMMA (f16/bf16/tf32), IMMA (i8)
_MMA_SYNC = re.compile(r"\b[HI]MMA\.\S+")
_FULL_WAIT = re.compile(r"WARPGROUP\.DEPBAR\.LE\s+gsb0,\s*0x0\b")
_RESOURCES = re.compile(r"REG:(\d+).*?SHARED:(\d+)")
# `cuobjdump -elf`: the CTA size tileiras fixed (EIATTR_REQNTID, three hex values)
_REQNTID = re.compile(
    r"EIATTR_REQNTID\s+Format:\s*\S+\s+Value:\s*(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)"
)


@dataclass(frozen=True)
class SassStats:
    name: str
    bytes: int  # cubin size
    registers: int  # per thread
    shared: int  # static shared memory per block, bytes
    spills: int  # local-memory loads and stores (LDL / STL)
    wgmma: int  # warpgroup MMA instructions
    wgmma_full_waits: int  # waits for every wgmma in flight to finish
    tma_loads: int  # bulk tensor copies into shared memory (UTMALDG)
    global_loads: int  # plain loads from global memory (LDG)
    wgmma_kinds: tuple[str, ...] = ()  # e.g. ("HGMMA.64x128x16.F32",)
    mma_sync: int = 0  # warp-level MMA instructions (HMMA / IMMA)
    threads: int = 0  # per block (EIATTR_REQNTID); 0 where the dump was not read


def find_cuobjdump() -> str | None:
    """cuobjdump from the nvidia wheels (next to tileiras), else PATH."""
    return nvidia_binary("cuobjdump") or shutil.which("cuobjdump")


def stats_of_text(name: str, size: int, sass: str, resources: str, elf: str = "") -> SassStats:
    """The counts of one kernel's `cuobjdump -sass`, `-res-usage` (and `-elf`) text."""
    instructions = [line for line in sass.splitlines() if re.match(r"\s*/\*[0-9a-f]{4,}\*/", line)]
    code = "\n".join(instructions)
    found = _RESOURCES.search(resources)
    registers, shared = (int(found.group(1)), int(found.group(2))) if found else (0, 0)
    kinds = sorted({m.group(0).rstrip(";,") for m in _WGMMA.finditer(code)})
    return SassStats(
        name=name,
        bytes=size,
        registers=registers,
        shared=shared,
        spills=len(re.findall(r"\b(?:LDL|STL)\b", code)),
        wgmma=len(_WGMMA.findall(code)),
        wgmma_full_waits=len(_FULL_WAIT.findall(code)),
        tma_loads=len(re.findall(r"\bUTMALDG\b", code)),
        global_loads=len(re.findall(r"\bLDG\b", code)),
        wgmma_kinds=tuple(kinds),
        mma_sync=len(_MMA_SYNC.findall(code)),
        threads=_threads(elf),
    )


def _threads(elf: str) -> int:
    found = _REQNTID.search(elf)
    return 0 if found is None else math.prod(int(v, 16) for v in found.groups())


def stats(cubin: Path, cuobjdump: str) -> SassStats:
    """The counts of `cubin` (one kernel)."""

    def run(flag: str) -> str:
        done = subprocess.run(
            [cuobjdump, flag, str(cubin)], capture_output=True, text=True, timeout=120
        )
        if done.returncode:
            raise RuntimeError(f"cuobjdump {flag} {cubin}: {done.stderr.strip()}")
        return done.stdout

    size = cubin.stat().st_size
    return stats_of_text(cubin.name, size, run("-sass"), run("-res-usage"), run("-elf"))


def stats_of_cubin(name: str, cubin: bytes, cuobjdump: str) -> SassStats:
    """The counts of a cubin held in memory."""
    with tempfile.TemporaryDirectory(prefix="sass-stats-") as folder:
        path = Path(folder) / name
        path.write_bytes(cubin)
        return stats(path, cuobjdump)


def _cubins(paths: Sequence[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        found.extend(sorted(path.glob("*.cubin")) if path.is_dir() else [path])
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help="cubins, or folders of them")
    args = parser.parse_args(argv)
    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        print("error: cuobjdump not found (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)")
        return 2
    header = (
        "cubin",
        "bytes",
        "regs",
        "smem",
        "spills",
        "wgmma",
        "full waits",
        "TMA",
        "LDG",
        "mma",
        "threads",
    )
    print("  ".join(header))
    for cubin in _cubins(args.paths):
        s = stats(cubin, cuobjdump)
        row = (s.name, s.bytes, s.registers, s.shared, s.spills, s.wgmma, s.wgmma_full_waits)
        counts = (s.tma_loads, s.global_loads, s.mma_sync, s.threads)
        print("  ".join(map(str, (*row, *counts, *s.wgmma_kinds))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
