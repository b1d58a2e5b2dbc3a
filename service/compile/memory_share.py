"""How much address space each tileiras run may map, so that the runs a server or a batch
compile has going at once stay within the machine together.

Each run is capped on its own (RLIMIT_AS, `lowering.tileiras`), at most `ADDRESS_SPACE_CAP`.
With one run per CPU, those caps alone add up past a large machine's memory (16 runs at
8 GiB against 128 GiB), so a few hostile kernels at once could drive the host into its
out-of-memory killer. `tileiras_memory_share` divides a total (default: half of the memory
this process may use, the container's cgroup limit where there is one) among the concurrent
runs, never below `MIN_ADDRESS_SPACE`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from lowering.tileiras import ADDRESS_SPACE_CAP, MIN_ADDRESS_SPACE

log = logging.getLogger(__name__)

CGROUP_MEMORY_MAX = Path("/sys/fs/cgroup/memory.max")


def machine_memory_bytes(cgroup_limit: Path = CGROUP_MEMORY_MAX) -> int | None:
    """Physical memory, or the cgroup (v2) limit where it is lower; None where unknown."""
    try:
        found = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        found = None
    try:
        text = cgroup_limit.read_text().strip()
    except OSError:
        text = "max"
    if text.isdecimal() and int(text) > 0:
        found = int(text) if found is None else min(found, int(text))
    return found if found is not None and found > 0 else None


def default_total_bytes() -> int | None:
    """Half of the machine's memory (None where unknown: no total)."""
    memory = machine_memory_bytes()
    return None if memory is None else memory // 2


def tileiras_memory_share(concurrent_runs: int, total_bytes: int | None) -> int:
    """Each of `concurrent_runs` runs' cap: `total_bytes` split evenly, between
    `MIN_ADDRESS_SPACE` and `ADDRESS_SPACE_CAP` (the most, for no total)."""
    if total_bytes is None:
        return ADDRESS_SPACE_CAP
    share = total_bytes // max(1, concurrent_runs)
    if share < MIN_ADDRESS_SPACE:
        log.warning(
            "%d tileiras runs at %d MiB each exceed the %d MiB meant for them all: "
            "fewer workers keep within it",
            concurrent_runs,
            MIN_ADDRESS_SPACE >> 20,
            total_bytes >> 20,
        )
    return max(MIN_ADDRESS_SPACE, min(ADDRESS_SPACE_CAP, share))
