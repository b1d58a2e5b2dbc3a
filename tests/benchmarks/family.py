"""What every benchmark family shares: result rows (ours next to torch), the autotuned
choice among candidates, the correctness gate, the command line and the JSON the
BENCHMARKS.md writer reads. Timing itself is `tests.benchmarks.timing`."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from client_stubs.autotune import Autotuner, Prepare, TuneKey, shape_class
from tests.benchmarks.timing import REPS, WARMUP, median_seconds


class Reference:
    """torch's side of a row, timed once before ours and once after: the faster time counts,
    so neither the order of the runs nor the GPU's clock state flatters our kernel."""

    def __init__(self, launch: Callable[[], object]) -> None:
        self.launch = launch
        self.before = median_seconds(launch)

    def seconds(self) -> float:
        return min(self.before, median_seconds(self.launch))


@dataclass(frozen=True)
class Row:
    """One shape: ours (the autotuned winner `config`) next to torch."""

    family: str
    case: str  # e.g. "add bf16", "flash attention causal D=128"
    shape: str
    work: float  # bytes moved or floating-point operations
    unit: str  # "TB/s" or "TFLOP/s"
    ours_s: float
    torch_s: float
    config: str
    max_error: float
    tolerance: float
    tried: Mapping[str, float] = field(default_factory=dict)  # seconds per candidate

    @property
    def ours_rate(self) -> float:
        return self.work / self.ours_s / 1e12

    @property
    def torch_rate(self) -> float:
        return self.work / self.torch_s / 1e12

    @property
    def ratio(self) -> float:
        return self.torch_s / self.ours_s

    @property
    def correct(self) -> bool:
        return self.max_error <= self.tolerance

    def line(self) -> str:
        flag = "" if self.correct else f"  MISMATCH (max error {self.max_error:.3g})"
        return (
            f"{self.case:<34} {self.shape:<22} ours {self.ours_rate:8.2f} {self.unit:<7} "
            f"torch {self.torch_rate:8.2f} {self.unit:<7} ratio {self.ratio:5.2f}  [{self.config}]"
            + flag
        )


def fastest(
    kernel: str, extents: Sequence[int], candidates: dict[str, Prepare], tune_cache: Path
) -> tuple[str, float, Callable[[], object], dict[str, float]]:
    """The autotuned winner among `candidates` (name, seconds per launch, launch, and the
    seconds of every candidate timed); timed with `median_seconds`, remembered in
    `tune_cache`."""
    key = TuneKey(kernel, shape_class(extents), "sm_90")
    choice = Autotuner(tune_cache, median_seconds).pick(key, candidates)
    for name, why in choice.failed.items():
        print(f"  {kernel} {name}: failed: {why}", flush=True)
    seconds = choice.seconds.get(choice.name) or median_seconds(choice.launch)
    tried = dict(sorted(choice.seconds.items(), key=lambda item: item[1]))
    return choice.name, seconds, choice.launch, tried


def checked(
    prepare: Prepare, out: torch.Tensor, expected: torch.Tensor, tolerance: float
) -> Prepare:
    """`prepare`, after one launch whose output must match `expected`: a variant that computes
    the wrong thing fails (and so loses the autotuning) instead of winning on speed."""

    def load() -> Callable[[], object]:
        launch = prepare()
        out.zero_()
        launch()
        torch.cuda.synchronize()
        error = max_error(out, expected)
        if not error <= tolerance:
            raise ValueError(f"wrong result: max error {error:.3g} > {tolerance:.3g}")
        return launch

    return load


def max_error(ours: torch.Tensor, expected: torch.Tensor) -> float:
    return float((ours.float() - expected.float()).abs().max())


def parse_args(
    description: str,
    argv: Sequence[str] | None = None,
    extra: Callable[[argparse.ArgumentParser], object] | None = None,
) -> argparse.Namespace:
    """The arguments every benchmark family takes (`extra` adds a family's own)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "bundle", help="bundle folder from `python -m tests.benchmarks.build_bundle`"
    )
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument(
        "--tune-cache", type=Path, help="autotune record folder (default: a fresh one per run)"
    )
    parser.add_argument("--quick", action="store_true", help="only the largest shapes")
    if extra is not None:
        extra(parser)
    args = parser.parse_args(argv)
    if args.tune_cache is None:
        args.tune_cache = Path(tempfile.mkdtemp(prefix="tune-"))
    return args


def report(module: str, family: str, rows: list[Row], json_path: Path | None) -> None:
    print(f"== {family}: median of {REPS} timed reps after {WARMUP} warm-ups", flush=True)
    for row in rows:
        print(row.line(), flush=True)
        if len(row.tried) > 1:
            times = ", ".join(f"{name} {row.work / s / 1e12:.2f}" for name, s in row.tried.items())
            print(f"    candidates ({row.unit}): {times}", flush=True)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "family": family,
            "command": " ".join(["PYTHONPATH=. python3 -m", module, *sys.argv[1:]]),
            "device": torch.cuda.get_device_name(),
            "torch": torch.__version__,
            "rows": [asdict(r) for r in rows],
        }
        json_path.write_text(json.dumps(payload, indent=1))
