"""Give an entry that names no occupancy for its target an occupancy hint (one pass over the
tile IR's entry hints; asked for by `CompileRequest.occupancy`).

Without an occupancy hint tileiras gives a kernel every register it can use: cutile-rs's
`rms_norm` examples run 256 threads of 255 registers, one tile block per SM, and on the H200
take 0.04-0.12x torch's time over 4,097 tile blocks. The same source with `occupancy = 4`
(64 registers, four blocks per SM, no spills) runs 2.8-3.3x faster, and softmax 2.4x (the
variant its launch takes, 16-byte rows, has 255 registers without the hint); a
`matvec` of 128 tile blocks (fewer than the SMs) runs 20% slower with it (BENCHMARKS.md,
"Experiment", 2026-12-05). So the hint is not a default of its own: `cutile-compile` builds an
occupancy variant beside the kernel, and its contract tells hosts to prefer it only for
launches of many tile blocks (`LaunchConfig.min_tile_blocks`).

An entry that names `occupancy` for its target keeps its own (and its other hints for the
target stay), and so does one that multiplies tiles (`mma`, on the tensor cores or not): its
accumulators need the registers (a 128x128 f32 tile alone is 64 a thread at 256 threads), and
the two `matvec`s that lost 20% above are such kernels.
"""

from __future__ import annotations

import dataclasses

from lowering.block_order import MMA_OPS
from lowering.ir.attributes import EntryHints
from lowering.ir.core import Function, Module, walk


def takes_default_occupancy(function: Function, arch: str) -> bool:
    """Whether the pass gives this function the hint: an entry that names no occupancy for
    `arch` and multiplies no tiles (`mma`)."""
    return (
        function.is_entry
        and not any(h.arch == arch and h.occupancy is not None for h in function.hints)
        and not any(isinstance(op, MMA_OPS) for op in walk(function.body))
    )


def with_default_occupancy(module: Module, arch: str, occupancy: int) -> Module:
    """`module` with `occupancy` as the hint of every entry `takes_default_occupancy`."""
    functions = tuple(
        _function(f, arch, occupancy) if takes_default_occupancy(f, arch) else f
        for f in module.functions
    )
    return dataclasses.replace(module, functions=functions)


def _function(function: Function, arch: str, occupancy: int) -> Function:
    hints: tuple[EntryHints, ...] = tuple(function.hints)
    own = next((h for h in hints if h.arch == arch), EntryHints(arch))
    others = tuple(h for h in hints if h.arch != arch)
    return dataclasses.replace(
        function, hints=(*others, dataclasses.replace(own, occupancy=occupancy))
    )
