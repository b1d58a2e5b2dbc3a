"""GPU timing with CUDA events (through torch), shared by the GPU benchmarks."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

import torch

# GPU cycles (about 0.5 ms) the stream sleeps before each sample: the host meanwhile queues the
# events and launches, so their host-side cost stays out of the timed interval
QUEUE_AHEAD_CYCLES = 1_000_000


def _sample(launch: Callable[[], object], inner: int) -> float:
    """Seconds per launch of `inner` back-to-back launches between two events."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(QUEUE_AHEAD_CYCLES)
    start.record()
    for _ in range(inner):
        launch()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / inner


def interleaved_medians(
    launches: Sequence[Callable[[], object]],
    *,
    warmup: int = 3,
    repeats: int = 20,
    inner: int = 1,
) -> list[float]:
    """Median seconds per launch of each of `launches`, timed in turns (the order reversed
    every round) so that clock and thermal drift fall on all of them alike."""
    for launch in launches:
        for _ in range(warmup):
            launch()
    torch.cuda.synchronize()
    samples: list[list[float]] = [[] for _ in launches]
    for round_ in range(repeats):
        order = range(len(launches)) if round_ % 2 == 0 else reversed(range(len(launches)))
        for i in order:
            samples[i].append(_sample(launches[i], inner))
    return [statistics.median(s) for s in samples]


def median_seconds(launch: Callable[[], object], *, warmup: int = 3, repeats: int = 20) -> float:
    """Median seconds of one launch, after `warmup` untimed ones."""
    return interleaved_medians([launch], warmup=warmup, repeats=repeats)[0]
