"""GPU mode of the compatibility runner: launch each compiled cutile-rs entry on this GPU,
compare with torch, time both.

    here:      python -m tests.compat.runner --cutile-rs PATH --bundle gpu_artifacts/compat
    GPU host:  PYTHONPATH=. python3 -m tests.compat.gpu_check gpu_artifacts/compat \\
                   -o compat_gpu.json [--only SUBSTRING] [--no-timing]
    here:      python -m tests.compat.runner --cutile-rs PATH --gpu-results compat_gpu.json

Cases live in `tests.compat.gpu_cases_examples` and `tests.compat.gpu_cases_kernels`, keyed
like the runner's tables (`path::function`); each is launched at the generics the runner
compiled (`cutile_rs_entries.json`). Writes `{"device": .., "cases": {key: {launched,
max_error, verdict, ours_s, torch_s, speed_vs_torch, note, grid, cubin_sha256, tuned}}}`:
`grid` and `cubin_sha256` are the first launch's (the variant the arguments chose), `tuned`
the same case at the generics of `tuned_tiles.json` (the source at tiles a GPU likes), for
the report's "far from torch" section.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

import torch

from client_stubs import Bundle, BundleEntry, driver
from tests.benchmarks.timing import median_seconds
from tests.compat.gpu_cases_examples import CASES as EXAMPLE_CASES
from tests.compat.gpu_cases_kernels import CASES as KERNEL_CASES
from tests.compat.gpu_support import CaseContext, CaseFn, Launched
from tests.compat.table import load_tuned

CASES: dict[str, CaseFn] = {**EXAMPLE_CASES, **KERNEL_CASES}
TUNED = load_tuned()  # the control: the same source at tiles a GPU likes
TABLE = Path(__file__).parent / "cutile_rs_entries.json"


class SourceBundle(Bundle):
    """A bundle whose entries are also told apart by the source file they came from (the
    examples reuse module and function names across files)."""

    def __init__(self, bundle: Bundle, sources: Sequence[str]) -> None:
        super().__init__(bundle.root, bundle.entries)
        self.sources = tuple(sources)

    @classmethod
    def open_with_sources(cls, path: Path) -> SourceBundle:
        bundle = Bundle.open(path)
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
        return cls(bundle, [k.get("source", "") for k in manifest["kernels"]])

    def for_source(self, source: str) -> Bundle:
        kept = tuple(e for e, s in zip(self.entries, self.sources, strict=True) if s == source)
        return Bundle(self.root, kept)


def run_case(key: str, bundle: SourceBundle, row: dict, timing: bool) -> dict:
    path, function = key.rsplit("::", 1)
    sm = driver.device_sm(driver.current_device())
    arch = str(row.get("arch") or "sm_90")
    if arch != sm:
        return {"launched": False, "verdict": f"needs {arch}"}
    case = CASES.get(key)
    if case is None:
        return {"launched": False, "verdict": "no GPU case"}
    generics = {str(k): str(v) for k, v in (row.get("generics") or {}).items()}
    scoped = bundle.for_source(path)
    result = _launch(case, scoped, function, generics, timing)
    tuned = TUNED.get(key)
    if tuned is not None and result.get("launched"):
        control = {**generics, **tuned}
        result["tuned"] = {"generics": control, **_launch(case, scoped, function, control, timing)}
    return result


def _launch(
    case: CaseFn, scoped: Bundle, function: str, generics: dict[str, str], timing: bool
) -> dict:
    """One case at `generics`: its verdict, errors, first launch and (with `timing`) times."""
    found = [e for e in scoped.entries if e.function == function and e.matches(generics)]
    if not found:
        return {"launched": False, "verdict": "not compiled"}
    entry: BundleEntry = found[0]
    context = CaseContext(scoped, entry.module, function, generics)
    try:
        launched = case(context)
        torch.cuda.synchronize()
        errors = [(c.name, c.max_error(), c.tolerance) for c in launched.outputs]
    except Exception as exc:  # reported per case, the run goes on
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return {"launched": False, "verdict": f"error: {detail[:300]}"}
    worst = max(
        (e / t if t else (0.0 if e == 0 else float("inf")) for _, e, t in errors), default=0.0
    )
    failing = [f"{n}: {e:.3g} > {t:.3g}" for n, e, t in errors if e > t]
    result: dict[str, object] = {
        "launched": True,
        "max_error": max((e for _, e, _ in errors), default=0.0),
        "error_over_tolerance": worst,
        "verdict": "pass" if not failing else "FAIL (" + "; ".join(failing) + ")",
        "note": launched.note,
    }
    if context.launches:
        first = context.launches[0]
        result.update(grid=list(first.grid), cubin_sha256=first.cubin_sha256)
    if timing:
        result.update(_times(launched))
    return result


def _times(launched: Launched) -> dict[str, float]:
    ours = median_seconds(launched.ours)
    times = {"ours_s": ours}
    if launched.reference is not None:
        theirs = median_seconds(launched.reference)
        times.update(torch_s=theirs, speed_vs_torch=theirs / ours if ours else 0.0)
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", type=Path)
    parser.add_argument("-o", "--output", type=Path, default=Path("compat_gpu.json"))
    parser.add_argument("--only", help="only cases whose key contains this")
    parser.add_argument("--no-timing", action="store_true")
    args = parser.parse_args(argv)
    bundle = SourceBundle.open_with_sources(args.bundle)
    table = json.loads(TABLE.read_text(encoding="utf-8"))
    results = {}
    for key, row in sorted(table.items()):
        if args.only and args.only not in key:
            continue
        results[key] = run_case(key, bundle, row, not args.no_timing)
        print(f"{key}: {results[key]['verdict']}", flush=True)
    device = torch.cuda.get_device_name()
    args.output.write_text(json.dumps({"device": device, "cases": results}, indent=1) + "\n")
    passed = sum(1 for r in results.values() if r["verdict"] == "pass")
    print(f"{passed}/{len(results)} passed on {device}; wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
