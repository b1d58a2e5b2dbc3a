"""GPU timing with CUDA events (through torch), shared by the GPU benchmarks.

`median_seconds` runs warm-up launches, then `reps` samples, each a batch of back-to-back
launches between two CUDA events (batched until a sample lasts ~1 ms, so launch overhead does
not hide a short kernel), and returns the median seconds per launch. `interleaved_medians`
times several launches in turns, for pairs that must see the same clocks.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence

import torch

# GPU cycles (about 0.5 ms) the stream sleeps before each sample: the host meanwhile queues the
# events and launches, so their host-side cost stays out of the timed interval
QUEUE_AHEAD_CYCLES = 1_000_000
WARMUP = 3
REPS = 10
MIN_SAMPLE_SECONDS = 1e-3


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


def median_seconds(
    launch: Callable[[], object],
    *,
    warmup: int = WARMUP,
    reps: int = REPS,
    min_sample: float = MIN_SAMPLE_SECONDS,
) -> float:
    for _ in range(warmup):
        launch()
    torch.cuda.synchronize()
    batch = 1
    samples: list[float] = []
    while len(samples) < reps:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            launch()
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1e3
        if not samples and seconds < min_sample and batch < 1024:
            batch = min(1024, batch * max(2, int(min_sample / max(seconds, 1e-7))))
            continue  # the first, calibrating sample is not kept
        samples.append(seconds / batch)
    return statistics.median(samples)
