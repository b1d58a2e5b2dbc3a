"""Pick the fastest of a few declared kernel configurations, once per shape class.

Explicit and simple: the caller declares the candidates (a name and a `prepare` that loads
the compiled variant and returns a zero-argument launch), `Autotuner.pick` times each on the
GPU, and remembers the winner per (kernel, shape class, arch) in a JSON file in the client
cache folder. The next `pick` for the same key launches nothing and returns the remembered
winner while it is still among the candidates.

    tuner = Autotuner()
    key = TuneKey("gemm_tuned", shape_class((m, n, k)), "sm_90")
    choice = tuner.pick(key, bundle_candidates(bundle, "gemm_tuned", configs, args_for))
    launch = choice.launch  # the winner, ready to call
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from client_stubs import driver
from client_stubs.cache import default_cache_dir

Launch = Callable[[], object]
Prepare = Callable[[], Launch]
Timer = Callable[[Launch], float]
RECORD_FILE = "autotune.json"


@dataclass(frozen=True)
class TuneKey:
    kernel: str
    shape_class: str
    arch: str

    def text(self) -> str:
        return f"{self.kernel}|{self.shape_class}|{self.arch}"


@dataclass(frozen=True)
class Choice:
    """The winner; `seconds` holds what was timed now (empty when remembered), `failed`
    the candidates that could not be prepared or launched, with the reason."""

    name: str
    launch: Launch
    remembered: bool
    seconds: Mapping[str, float] = field(default_factory=dict)
    failed: Mapping[str, str] = field(default_factory=dict)


class NoCandidateError(RuntimeError):
    """No candidate could be prepared and timed."""


def shape_class(extents: Sequence[int]) -> str:
    """Extents rounded up to powers of two, e.g. (1000, 4096) -> "1024x4096": shapes in one
    class share a winner."""
    return "x".join(str(1 << max(int(e) - 1, 0).bit_length()) for e in extents)


def gpu_timer(warmup: int = 2, samples: int = 5, min_seconds: float = 2e-3) -> Timer:
    """Median seconds per launch over `samples` batches, each long enough (`min_seconds`)
    that launch overhead and clock resolution do not dominate; the GPU is synchronized
    around every batch."""

    def time_launch(launch: Launch) -> float:
        for _ in range(warmup):
            launch()
        driver.synchronize()
        start = time.perf_counter()
        launch()
        driver.synchronize()
        batch = max(1, int(min_seconds / max(time.perf_counter() - start, 1e-7)))
        results = []
        for _ in range(samples):
            start = time.perf_counter()
            for _ in range(batch):
                launch()
            driver.synchronize()
            results.append((time.perf_counter() - start) / batch)
        return statistics.median(results)

    return time_launch


class Autotuner:
    """Times declared candidates and remembers winners in `<cache_dir>/autotune.json`."""

    def __init__(
        self, cache_dir: str | os.PathLike[str] | None = None, timer: Timer | None = None
    ) -> None:
        self.path = Path(cache_dir if cache_dir is not None else default_cache_dir()) / RECORD_FILE
        self.timer = timer if timer is not None else gpu_timer()

    def remembered(self, key: TuneKey) -> str | None:
        entry = self._load().get(key.text())
        return entry.get("winner") if isinstance(entry, dict) else None

    def pick(self, key: TuneKey, candidates: Mapping[str, Prepare]) -> Choice:
        if not candidates:
            raise NoCandidateError(f"{key.text()}: no candidates declared")
        known = self.remembered(key)
        if known in candidates:
            try:
                return Choice(known, candidates[known](), remembered=True)
            except Exception:  # the remembered variant is gone: tune again
                pass
        seconds: dict[str, float] = {}
        failed: dict[str, str] = {}
        launches: dict[str, Launch] = {}
        for name, prepare in candidates.items():
            try:
                launches[name] = prepare()
                seconds[name] = self.timer(launches[name])
            except Exception as exc:  # a variant that does not build or launch loses
                failed[name] = f"{type(exc).__name__}: {exc}"
        if not seconds:
            raise NoCandidateError(f"{key.text()}: every candidate failed: {failed}")
        winner = min(seconds, key=seconds.__getitem__)
        self._remember(key, winner, seconds)
        return Choice(winner, launches[winner], False, seconds, failed)

    def forget(self, key: TuneKey) -> None:
        records = self._load()
        if records.pop(key.text(), None) is not None:
            self._save(records)

    def _remember(self, key: TuneKey, winner: str, seconds: Mapping[str, float]) -> None:
        records = self._load()
        records[key.text()] = {"winner": winner, "seconds": dict(seconds)}
        self._save(records)

    def _load(self) -> dict[str, object]:
        try:
            records = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return records if isinstance(records, dict) else {}

    def _save(self, records: Mapping[str, object]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".autotune-")
        try:
            with os.fdopen(fd, "w") as out:
                json.dump(records, out, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def config_name(generics: Mapping[str, object]) -> str:
    """A stable candidate name from its generics: "BK=64,BM=128,BN=256"."""
    return ",".join(f"{k}={generics[k]}" for k in sorted(generics))


def bundle_candidates(
    bundle: object,
    function: str,
    configs: Sequence[Mapping[str, object]],
    args_for: Callable[[Mapping[str, object]], Sequence[object]],
) -> dict[str, Prepare]:
    """One candidate per config: the bundle's variant of `function` with those generics
    (the most specialized one the arguments fit), launched on `args_for(config)`."""

    def prepare(config: Mapping[str, object]) -> Prepare:
        def load() -> Launch:
            args = tuple(args_for(config))
            kernel = bundle.kernel(function, config, for_args=args)  # type: ignore[attr-defined]
            return lambda: kernel(*args)

        return load

    return {config_name(c): prepare(c) for c in configs}
