"""cutile-rs's own GEMM examples, compiled unchanged the default way
(`tests.benchmarks.build_cutile_rs`), launched through `Bundle.kernel(...)` with no `for_args` and
no declared facts (the per-launch choice of variant is the default path's), vs torch.matmul:
f16 at 4096^3 and 8192^3, 128x128x64 tiles (issue 14's real-code target: >= 0.85x torch), and
`gemm.rs` on f32 (its host code's element) at 128x128x32 against torch's f32 matmul.
`--jit FOLDER` adds the same kernels compiled by cutile-rs's own compiler
(`tests.benchmarks.cutile_rs_jit`'s OUT/jit bundle), launched through our host on the same
tensors: the two compilers side by side.

    PYTHONPATH=. python3 -m tests.benchmarks.bench_cutile_rs BUNDLE [--json OUT.json] [--quick]
        [--jit gpu_artifacts/cutile-rs-jit/jit]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from tests.benchmarks.configs import (
    CUTILE_RS_KERNELS,
    CUTILE_RS_PERSISTENT_BLOCKS,
    CUTILE_RS_SIZES,
    CutileRsKernel,
)
from tests.benchmarks.family import Reference, Row, max_error, parse_args, report
from tests.benchmarks.timing import median_seconds
from tests.benchmarks.write_benchmarks_md import OTHER_COMPILER


def _launcher(bundle, kernel: CutileRsKernel, z, x, y) -> Callable[[], object]:  # type: ignore[no-untyped-def]
    from client_stubs import DeviceTensor

    compiled = bundle.kernel(kernel.entry, dict(kernel.generics))
    part = DeviceTensor.wrap(z).partition(_tile(kernel)[:2])
    if kernel.entry == "gemm_persistent":
        part = part.map((8, 1), CUTILE_RS_PERSISTENT_BLOCKS)
    args = (part, DeviceTensor.wrap(x), DeviceTensor.wrap(y))
    return lambda: compiled(*args)


def _tile(kernel: CutileRsKernel) -> tuple[int, int, int]:
    return tuple(int(kernel.generics[name]) for name in ("BM", "BN", "BK"))  # type: ignore[return-value]


def _element(kernel: CutileRsKernel) -> str:
    return kernel.generics.get("E") or kernel.generics["T"]


# of the largest output magnitude: f16 results keep 11 bits; f32 ones must be f32-accurate
# (torch.matmul on f32 is cuBLAS f32, TF32 off by default: ~2e-6 at 4096^3 on an H100)
TOLERANCE = {"f16": 0.02, "f32": 1e-5}


def measure(  # type: ignore[no-untyped-def]
    bundle, kernel: CutileRsKernel, size: int, compiler: str = "default path"
) -> Row:
    import torch

    element = _element(kernel)
    dtype = {"f16": torch.float16, "f32": torch.float32}[element]
    torch.manual_seed(0)
    x = torch.randn(size, size, device="cuda", dtype=dtype)
    y = torch.randn(size, size, device="cuda", dtype=dtype)
    z = torch.zeros(size, size, device="cuda", dtype=dtype)
    expected = torch.matmul(x, y)
    tolerance = TOLERANCE[element] * float(expected.float().abs().max())
    reference = Reference(lambda: torch.matmul(x, y))
    launch = _launcher(bundle, kernel, z, x, y)
    launch()
    torch.cuda.synchronize()
    error = max_error(z, expected)
    ours = median_seconds(launch)
    name = Path(kernel.source).name
    return Row(
        "cutile_rs",
        f"cutile-rs {name} {kernel.entry} {element}",
        f"{size}x{size}x{size}",
        2 * size**3,
        "TFLOP/s",
        ours,
        reference.seconds(),
        f"{compiler}, " + "x".join(map(str, _tile(kernel))),
        error,
        tolerance,
    )


def main(argv: Sequence[str] | None = None) -> None:
    from client_stubs import Bundle

    def jit_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--jit", type=Path, help="cutile-rs-compiled kernels (cutile_rs_jit)")

    args = parse_args(__doc__.splitlines()[0], argv, jit_option)
    bundle = Bundle.open(args.bundle)
    jit = None if args.jit is None else Bundle.open(args.jit)
    sizes = CUTILE_RS_SIZES[:1] if args.quick else CUTILE_RS_SIZES
    rows = []
    for size in sizes:
        for kernel in CUTILE_RS_KERNELS:
            if kernel.generics.get("K", str(size)) == str(size):
                rows.append(measure(bundle, kernel, size))
                if jit is not None:
                    rows.append(measure(jit, kernel, size, OTHER_COMPILER))
    report("tests.benchmarks.bench_cutile_rs", "cutile-rs GEMM, default path", rows, args.json)


if __name__ == "__main__":
    main()
