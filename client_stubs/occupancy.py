"""The occupancy variant's two numbers, one place for both sides: the compiler
(`lowering.default_occupancy`) compiles the hint and writes the threshold into the variant's
contract (`LaunchConfig.min_tile_blocks`); a served kernel (`client_stubs.served`) asks the
service for the variant at the first launch of a layout with that many tile blocks.

On the H200 the hint's gains came at 4,097 tile blocks (cutile-rs's `rms_norm` examples,
2.8-3.3x) and its losses below the 132 SMs (a `matvec` of 128 tile blocks, 20% slower):
BENCHMARKS.md, "Experiment" (2026-12-05). As a variant with these numbers, on an H100, the
launches that took it (2,049-4,097 tile blocks) ran 1.6-4.0x faster and no other launch
changed: BENCHMARKS.md, "The occupancy variant".
"""

from __future__ import annotations

VARIANT_OCCUPANCY = 4  # tile blocks per SM the variant's registers leave room for
MIN_TILE_BLOCKS = 1024  # the launches an occupancy variant serves: at least this many


def tile_blocks(grid: tuple[int, int, int], cluster_blocks: int = 1) -> int:
    """The tile blocks of a launch grid of CTAs (`cluster_blocks` CTAs a tile block)."""
    return grid[0] * grid[1] * grid[2] // max(1, cluster_blocks)
