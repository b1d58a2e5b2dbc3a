"""COMPATIBILITY.md's "far from torch, and why": for each launched entry under 0.9x torch, the
evidence of why it is slow, and the control that tells a slow tile choice from a slow compiler.

The evidence, all measured: what the entry's first launch ran on the GPU (its tile blocks, and
the cubin the arguments chose; `gpu_check`), its output tile (elements and bytes per tile block,
from the contract), what that cubin's machine code shows (registers, local-memory spills,
tensor-core instructions; `tests.benchmarks.sass_stats`), and the same source launched in the
same run at tiles a GPU likes (`tuned_tiles.json`: only the tile generics change).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from client_stubs.dtypes import DTYPES
from protos.generated.cutile.compile.v1 import contract_pb2
from tests.benchmarks.sass_stats import SassStats, find_cuobjdump, stats_of_cubin
from tests.compat.result import Result

SLOW = 0.9  # below this fraction of torch's speed a row is explained
SMALL_TILE_BYTES = 4096  # an output tile under this moves too little per tile block
MANY_BLOCKS = 65536  # tile blocks past this cost more to schedule than small tiles do
FEW_RESIDENT = 2  # at most this many tile blocks per SM at a time hide little latency
GPU_SMS = 132  # the H100's and the H200's

# what one sm_90 SM holds (the H100 and H200 alike)
SM_REGISTERS = 65536
SM_THREADS = 2048
SM_BLOCKS = 32
SM_SHARED_BYTES = 233472  # 228 KiB
BLOCK_RESERVED_SHARED = 1024  # the driver's share of each block's shared memory

_OUTPUTS = (contract_pb2.PARAM_KIND_TENSOR_OUT, contract_pb2.PARAM_KIND_TENSOR_OUT_MAPPED)


@dataclass(frozen=True)
class OutputTile:
    """The first output's partition tile: what one tile block writes."""

    shape: tuple[int, ...]
    dtype: str

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def bytes(self) -> int:
        size = DTYPES[self.dtype].itemsize if self.dtype in DTYPES else 0
        return self.elements * size

    def __str__(self) -> str:
        return f"{list(self.shape)} {self.dtype} ({self.bytes:,} B)"


@dataclass(frozen=True)
class Run:
    """One launch of an entry as the GPU check measured it, with its cubin's machine code."""

    speed: float | None  # torch's time / ours
    verdict: str
    blocks: int | None  # tile blocks of the first launch
    machine: SassStats | None


@dataclass(frozen=True)
class Evidence:
    tile: OutputTile | None
    run: Run
    control: Run | None  # the same source at the tuned tiles
    control_generics: str = ""


def output_tile(contract: bytes) -> OutputTile | None:
    parsed = contract_pb2.LaunchContract.FromString(contract)
    for param in parsed.params:
        if param.kind in _OUTPUTS and all(d > 0 for d in param.tile_shape):
            return OutputTile(tuple(param.tile_shape), param.dtype)
    return None


def resident_blocks(machine: SassStats) -> int | None:
    """How many blocks of this kernel one SM runs at a time: the fewest its registers
    (allocated per warp, 8 at a time a thread), threads and shared memory allow."""
    if not machine.threads or not machine.registers:
        return None
    warps = math.ceil(machine.threads / 32)
    per_warp = math.ceil(machine.registers / 8) * 8 * 32
    limits = [SM_REGISTERS // (warps * per_warp), SM_THREADS // (warps * 32), SM_BLOCKS]
    if machine.shared:
        limits.append(SM_SHARED_BYTES // (machine.shared + BLOCK_RESERVED_SHARED))
    return min(limits)


def causes(evidence: Evidence) -> list[str]:
    """What the evidence says, each cause with its numbers; the control's outcome last."""
    found: list[str] = []
    run, tile = evidence.run, evidence.tile
    machine = run.machine
    if machine is not None and machine.spills:
        found.append(
            f"register spills: {machine.spills} local-memory instructions at "
            f"{machine.registers} registers a thread"
        )
    resident = resident_blocks(machine) if machine is not None else None
    if resident is not None and resident <= FEW_RESIDENT:
        assert machine is not None
        found.append(
            f"{resident} tile block(s) per SM at a time: {machine.threads} threads of "
            f"{machine.registers} registers, {machine.shared:,} B shared"
        )
    if tile is not None and 0 < tile.bytes < SMALL_TILE_BYTES:
        found.append(f"small tiles: each tile block writes {tile.bytes:,} B")
    if run.blocks is not None and run.blocks > MANY_BLOCKS:
        found.append(f"{run.blocks:,} tile blocks to schedule")
    if run.blocks is not None and run.blocks < GPU_SMS:
        found.append(f"{run.blocks} tile block(s): most of the GPU's {GPU_SMS} SMs idle")
    control = evidence.control
    if control is not None and control.speed is not None and control.verdict == "pass":
        if control.speed >= SLOW:
            found.append(
                f"the same source at {evidence.control_generics} runs at {control.speed:.2f}x "
                "torch: the host code's tile choice, not the compiler"
            )
        else:
            found.append(
                f"still {control.speed:.2f}x torch at {evidence.control_generics}: "
                "not the tile choice (the code the compiler and tileiras make of it)"
            )
    if not found:
        found.append("not explained yet")
    return found


def section(results: Sequence[Result], gpu: Mapping[str, Mapping[str, object]]) -> list[str]:
    """The section's lines (empty when no launched row is under `SLOW`)."""
    controls = {r.case.key.removesuffix("@tuned"): r for r in results if r.case.control}
    cuobjdump = find_cuobjdump()
    rows: list[str] = []
    for result in results:
        if result.case.control:
            continue
        measured = _measured(gpu, result)
        speed = measured.get("speed_vs_torch") if measured else None
        if not isinstance(speed, (int, float)) or speed >= SLOW or not result.builds:
            continue
        control_result = controls.get(result.case.key)
        tuned = measured.get("tuned") if measured else None
        evidence = Evidence(
            output_tile(result.builds[0][1]),
            _run(measured, result, cuobjdump),
            _run(tuned, control_result, cuobjdump) if isinstance(tuned, Mapping) else None,
            _generics(control_result, result),
        )
        rows.append(_row(result, evidence))
    if not rows:
        return []
    return [
        "## Far from torch, and why",
        "",
        f"Every launched entry under {SLOW}x torch, with what its first launch ran (tile blocks;",
        "the cubin the arguments chose), that cubin's machine code",
        "(`tests.benchmarks.sass_stats`: registers a thread, local-memory spill instructions,",
        "tensor-core instructions: wgmma + mma.sync) and the control: the same source at the",
        "tiles of `tests/compat/tuned_tiles.json`, launched in the same GPU run. `-`: not",
        "measured (GPU results from before this section existed; the machine code is then",
        "the general kernel's, not necessarily the variant that ran).",
        "",
        "| entry | generics | vs torch | output tile | tile blocks | regs | spills"
        " | tensor-core ops | tuned tiles | vs torch | why |",
        "|---|---|---:|---|---:|---:|---:|---:|---|---:|---|",
        *rows,
    ]


def _measured(gpu: Mapping[str, Mapping[str, object]], result: Result) -> Mapping[str, object]:
    case = result.case
    return gpu.get(case.key) or gpu.get(f"{case.site.path}::{case.site.function}") or {}


def _run(
    measured: Mapping[str, object] | None, result: Result | None, cuobjdump: str | None
) -> Run:
    measured = measured or {}
    speed = measured.get("speed_vs_torch")
    grid = measured.get("grid")
    blocks = math.prod(int(g) for g in grid) if isinstance(grid, list) else None
    return Run(
        float(speed) if isinstance(speed, (int, float)) else None,
        str(measured.get("verdict", "-")),
        blocks,
        _machine(result, measured.get("cubin_sha256"), cuobjdump),
    )


def _machine(result: Result | None, sha256: object, cuobjdump: str | None) -> SassStats | None:
    """The machine code of the cubin the launch ran (the general kernel when unknown)."""
    if result is None or not result.builds or cuobjdump is None:
        return None
    chosen = next((c for c, _ in result.builds if hashlib.sha256(c).hexdigest() == sha256), None)
    cubin = chosen if chosen is not None else result.builds[0][0]
    return stats_of_cubin(f"{result.case.site.function}.cubin", cubin, cuobjdump)


def _generics(control: Result | None, result: Result) -> str:
    if control is None:
        return ""
    changed = dict(control.case.generics)
    before = dict(result.case.generics)
    return ", ".join(f"{k}={v}" for k, v in changed.items() if before.get(k) != v)


def _row(result: Result, evidence: Evidence) -> str:
    case, run, control = result.case, evidence.run, evidence.control
    machine = run.machine
    generics = ", ".join(f"{k}={v}" for k, v in case.generics) or "-"
    cells = [
        f"`{case.site.path.rsplit('/', 1)[-1]}` `{case.site.function}`",
        _short(generics, 48),
        _speed(run.speed),
        str(evidence.tile) if evidence.tile else "-",
        f"{run.blocks:,}" if run.blocks is not None else "-",
        str(machine.registers) if machine else "-",
        str(machine.spills) if machine else "-",
        str(machine.wgmma + machine.mma_sync) if machine else "-",
        evidence.control_generics or "-",
        _speed(control.speed) if control else "-",
        "; ".join(causes(evidence)),
    ]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _speed(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "-"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
