"""Row softmax and RMSNorm in f32, ours (single-read kernels, autotuned rows per block and
launch hints) vs torch.softmax and torch's RMSNorm, rows 1k ... 32k by width 1k ... 16k.

    PYTHONPATH=. python3 -m tests.benchmarks.bench_norms BUNDLE [--json OUT.json] [--quick]

Bandwidth counts one read of x and one write of the output (the minimum traffic).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from client_stubs import Bundle, DeviceTensor
from client_stubs.autotune import Prepare
from tests.benchmarks import configs
from tests.benchmarks.family import Reference, Row, fastest, max_error, parse_args, report

ROWS = (1024, 4096, 32768)
EPS = 1e-6


def _rms_norm_torch(x: torch.Tensor, w: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    rms_norm = getattr(torch.nn.functional, "rms_norm", None)
    if rms_norm is not None:
        return rms_norm(x, (x.shape[1],), w, EPS)
    return torch.mul(x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS), w, out=out)


def candidates(
    bundle: Bundle, function: str, width: int, out, inputs, scalars
) -> dict[str, Prepare]:  # type: ignore[no-untyped-def]
    def prepare(entry: str, generics: dict[str, str]) -> Prepare:
        def load():  # type: ignore[no-untyped-def]
            part = DeviceTensor.wrap(out).partition((int(generics["BM"]), width))
            args = (part, *map(DeviceTensor.wrap, inputs), *scalars)
            kernel = bundle.kernel(entry, generics, for_args=args)
            return lambda: kernel(*args)

        return load

    n = str(width)
    found = {f"BM={bm}": prepare(function, {"BM": bm, "N": n}) for bm in configs.NORM_ROWS[width]}
    for bm, occupancy, warps in configs.NORM_TUNED_ROWS[width]:
        generics = {"BM": bm, "N": n, "OCC": occupancy, "WARPS": warps}
        found[f"tuned BM={bm} occ{occupancy} w{warps}"] = prepare(f"{function}_tuned", generics)
    return found


def measure(bundle: Bundle, function: str, rows: int, width: int, tune_cache: Path) -> Row:
    torch.manual_seed(0)
    x = torch.randn(rows, width, device="cuda")
    out = torch.empty_like(x)
    if function == "softmax":
        inputs, scalars = (x,), ()
        expected = torch.softmax(x, dim=1)
        reference = Reference(lambda: torch.softmax(x, dim=1))
        case, tolerance = "softmax f32", 1e-5
    else:
        w = torch.rand(width, device="cuda") + 0.5
        inputs, scalars = (x, w), (EPS,)
        expected = _rms_norm_torch(x, w, torch.empty_like(x))
        reference = Reference(lambda: _rms_norm_torch(x, w, out))
        case, tolerance = "rms_norm f32", 1e-4
    found = candidates(bundle, function, width, out, inputs, scalars)
    name, ours, launch, tried = fastest(function, (rows, width), found, tune_cache)
    launch()
    error = max_error(out, expected)
    theirs = reference.seconds()
    return Row(
        "norms",
        case,
        f"{rows}x{width}",
        2 * 4 * rows * width,
        "TB/s",
        ours,
        theirs,
        name,
        error,
        tolerance,
        tried=tried,
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(__doc__.splitlines()[0], argv)
    bundle = Bundle.open(args.bundle)
    tune_cache = args.tune_cache
    shapes = [(32768, 4096)] if args.quick else [(r, w) for r in ROWS for w in configs.NORM_WIDTHS]
    rows = [
        measure(bundle, function, r, w, tune_cache)
        for function in ("softmax", "rms_norm_rows")
        for r, w in shapes
    ]
    report("tests.benchmarks.bench_norms", "softmax and RMSNorm", rows, args.json)


if __name__ == "__main__":
    main()
