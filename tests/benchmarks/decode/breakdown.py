"""Where a decode step's GPU time goes: each kernel's time per step, from CUDA's own activity
records (torch.profiler over graph replays; CUPTI reports every kernel node of a replayed
graph by its function name).

`decode.bench speed --breakdown` prints this table after timing ours: per kernel function the
launches per step, the mean µs per launch, µs per step and its share of the step's kernel time,
then the kernels' sum against the measured step time (the rest is the gaps between kernels).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class KernelTime:
    name: str
    launches_per_step: float
    us_per_launch: float

    @property
    def us_per_step(self) -> float:
        return self.launches_per_step * self.us_per_launch


def aggregate(events: list[tuple[str, float]], steps: int) -> list[KernelTime]:
    """(kernel name, µs) records of `steps` decode steps -> per-kernel times, largest first."""
    totals: dict[str, list[float]] = {}
    for name, us in events:
        totals.setdefault(name, []).append(us)
    rows = [
        KernelTime(short_name(name), len(times) / steps, sum(times) / len(times))
        for name, times in totals.items()
    ]
    return sorted(rows, key=lambda r: r.us_per_step, reverse=True)


def short_name(symbol: str) -> str:
    """A kernel's function name without its generic suffix's length (names stay readable)."""
    return symbol if len(symbol) <= 60 else symbol[:57] + "..."


def profile_kernels(
    replay: Callable[[], None], steps_per_replay: int, replays: int
) -> list[KernelTime]:
    """Run `replay` `replays` times under the CUDA activity profiler and aggregate its kernels."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            replay()
        torch.cuda.synchronize()
    events = [
        (e.name, e.device_time)
        for e in prof.events()
        if e.device_type == torch.autograd.DeviceType.CUDA and e.device_time > 0
    ]
    return aggregate(events, steps_per_replay * replays)


def format_table(rows: list[KernelTime], step_us: float) -> str:
    total = sum(r.us_per_step for r in rows)
    lines = [f"  {'kernel':<60} {'per step':>8} {'µs each':>8} {'µs/step':>9} {'share':>6}"]
    for r in rows:
        share = r.us_per_step / total if total else 0.0
        lines.append(
            f"  {r.name:<60} {r.launches_per_step:8.1f} {r.us_per_launch:8.2f} "
            f"{r.us_per_step:9.1f} {share:6.1%}"
        )
    lines.append(
        f"  kernels {total:.1f} µs of a {step_us:.1f} µs step "
        f"(gaps between kernels: {max(step_us - total, 0.0):.1f} µs)"
    )
    return "\n".join(lines)
