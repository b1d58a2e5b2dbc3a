"""The address space each concurrent tileiras run gets out of a total for them all."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from lowering.tileiras import ADDRESS_SPACE_CAP, MIN_ADDRESS_SPACE
from service.compile.memory_share import machine_memory_bytes, tileiras_memory_share

GiB = 1 << 30


@pytest.mark.parametrize(
    ("runs", "total", "share"),
    [
        (2, 6 * GiB, 3 * GiB),  # split evenly
        (16, 64 * GiB, 4 * GiB),  # a 16-core, 128 GiB machine at its default total
        (1, 100 * GiB, ADDRESS_SPACE_CAP),  # never past the most one run may map
        (2, None, ADDRESS_SPACE_CAP),  # no total known: the most
        (0, 6 * GiB, 6 * GiB),  # no runs counts as one
    ],
)
def test_the_total_is_split_among_the_runs(runs: int, total: int | None, share: int) -> None:
    assert tileiras_memory_share(runs, total) == share


def test_a_total_too_small_for_the_runs_gives_each_the_least_and_says_so(caplog) -> None:
    with caplog.at_level(logging.WARNING):
        assert tileiras_memory_share(128, 64 * GiB) == MIN_ADDRESS_SPACE
    assert "fewer workers" in caplog.text


def test_a_cgroup_limit_below_the_machines_memory_is_the_machines(tmp_path: Path) -> None:
    physical = machine_memory_bytes(tmp_path / "none")
    assert physical is not None and physical > 0
    limit = tmp_path / "memory.max"
    limit.write_text(f"{GiB}\n")
    assert machine_memory_bytes(limit) == GiB
    for unlimited in ("max\n", f"{physical * 4}\n", "garbage", "0"):
        limit.write_text(unlimited)
        assert machine_memory_bytes(limit) == physical
