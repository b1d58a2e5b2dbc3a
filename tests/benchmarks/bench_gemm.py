"""GEMM z = x @ y in f16 and bf16, ours (autotuned among the persistent `gemm_tuned`
configurations and `gemm_aligned`) vs torch.matmul (cuBLAS): squares 1024 ... 8192 and two
skinny shapes.

    PYTHONPATH=. python3 -m tests.benchmarks.bench_gemm BUNDLE [--json OUT.json] [--quick]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import torch

from client_stubs import Bundle, DeviceTensor
from client_stubs.autotune import Prepare
from tests.benchmarks import configs
from tests.benchmarks.configs import map_shape
from tests.benchmarks.family import (
    Reference,
    Row,
    checked,
    fastest,
    max_error,
    parse_args,
    report,
)

# (M, N, K)
SQUARES = tuple((s, s, s) for s in (1024, 2048, 4096, 8192))
SKINNY = ((256, 8192, 8192), (8192, 8192, 512))
ELEMENT = {"f16": torch.float16, "bf16": torch.bfloat16}


def _label(config: Mapping[str, str]) -> str:
    tile = f"{config['BM']}x{config['BN']}x{config['BK']}"
    if "OCC" not in config:
        return f"aligned {tile}"
    hints = f"lat{config['LAT']} occ{config['OCC']} cta{config['CTA']} w{config['W']}"
    return f"persistent {tile} {hints}{configs.map_label(config)}"


def candidates(bundle: Bundle, dtype: str, z, x, y) -> dict[str, Prepare]:  # type: ignore[no-untyped-def]
    m, n = z.shape
    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def prepare(config: Mapping[str, str]) -> Prepare:
        def load():  # type: ignore[no-untyped-def]
            tile = (int(config["BM"]), int(config["BN"]))
            part = DeviceTensor.wrap(z).partition(tile)
            if "OCC" in config:
                tiles = -(-m // tile[0]) * -(-n // tile[1])
                cta = int(config["CTA"])
                blocks = min(tiles, sms * int(config["OCC"]))
                blocks = max(cta, blocks - blocks % cta)
                part = part.map(map_shape(config), blocks)
            args = (part, DeviceTensor.wrap(x), DeviceTensor.wrap(y))
            function = "gemm_tuned" if "OCC" in config else "gemm_aligned"
            kernel = bundle.kernel(function, config, for_args=args)
            return lambda: kernel(*args)

        return load

    found = (*configs.GEMM_TUNED, *configs.GEMM_ALIGNED)
    return {_label(c): prepare(c) for c in found if c["E"] == dtype}


def measure(bundle: Bundle, dtype: str, shape: tuple[int, int, int], tune_cache: Path) -> Row:
    m, n, k = shape
    torch.manual_seed(0)
    x = torch.randn(m, k, device="cuda", dtype=ELEMENT[dtype])
    y = torch.randn(k, n, device="cuda", dtype=ELEMENT[dtype])
    z = torch.empty(m, n, device="cuda", dtype=ELEMENT[dtype])
    expected = torch.matmul(x, y)
    tolerance = 0.02 * float(expected.float().abs().max())
    found = {
        name: checked(prepare, z, expected, tolerance)
        for name, prepare in candidates(bundle, dtype, z, x, y).items()
    }
    reference = Reference(lambda: torch.matmul(x, y, out=z))
    name, ours, launch, tried = fastest(f"gemm {dtype}", shape, found, tune_cache)
    launch()
    error = max_error(z, expected)
    theirs = reference.seconds()
    return Row(
        "gemm",
        f"gemm {dtype}",
        f"{m}x{n}x{k}",
        2 * m * n * k,
        "TFLOP/s",
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
    shapes = SQUARES[-2:] if args.quick else SQUARES + SKINNY
    rows = [measure(bundle, dtype, s, tune_cache) for dtype in ELEMENT for s in shapes]
    report("tests.benchmarks.bench_gemm", "GEMM", rows, args.json)


if __name__ == "__main__":
    main()
