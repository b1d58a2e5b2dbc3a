"""FP8 GEMM with per-tensor scales, ours (autotuned among the persistent `gemm_fp8_tuned`
configurations) vs torch._scaled_mm (cuBLASLt): z = (sx * x) @ (sy * y)^T, x [M, K] and
y [N, K] in f8e4m3fn, accumulated in f32, stored as bf16.

    PYTHONPATH=. python3 -m tests.benchmarks.bench_gemm_fp8 BUNDLE [--json OUT.json] [--quick]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import torch

from client_stubs import Bundle, DeviceTensor
from client_stubs.autotune import Prepare
from tests.benchmarks import configs
from tests.benchmarks.configs import map_shape
from tests.benchmarks.family import Reference, Row, checked, fastest, max_error, parse_args, report

SHAPES = ((4096, 4096, 4096), (8192, 8192, 8192))
SCALE_X, SCALE_Y = 0.5, 0.25


def fp8_view(t: torch.Tensor) -> DeviceTensor:
    """A DeviceTensor over a torch float8_e4m3fn tensor's memory, by pointer."""
    return DeviceTensor(t.data_ptr(), tuple(t.shape), t.stride(), "f8e4m3fn", t.device.index, t)


def _label(config: Mapping[str, str]) -> str:
    tile = f"{config['BM']}x{config['BN']}x{config['BK']}"
    hints = f"lat{config['LAT']} occ{config['OCC']} cta{config['CTA']} w{config['W']}"
    return f"{tile} {hints}{configs.map_label(config)}"


def candidates(bundle: Bundle, z, x, y) -> dict[str, Prepare]:  # type: ignore[no-untyped-def]
    m, n = z.shape
    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def prepare(config: Mapping[str, str]) -> Prepare:
        def load():  # type: ignore[no-untyped-def]
            tile = (int(config["BM"]), int(config["BN"]))
            tiles = -(-m // tile[0]) * -(-n // tile[1])
            cta = int(config["CTA"])
            blocks = min(tiles, sms * int(config["OCC"]))
            blocks = max(cta, blocks - blocks % cta)
            part = DeviceTensor.wrap(z).partition(tile).map(map_shape(config), blocks)
            args = (part, fp8_view(x), fp8_view(y), SCALE_X, SCALE_Y)
            kernel = bundle.kernel("gemm_fp8_tuned", config, for_args=args)
            return lambda: kernel(*args)

        return load

    return {_label(c): prepare(c) for c in configs.GEMM_FP8_TUNED}


def measure(bundle: Bundle, shape: tuple[int, int, int], tune_cache: Path) -> Row:
    m, n, k = shape
    torch.manual_seed(0)
    x = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    y = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    z = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    sx = torch.tensor(SCALE_X, device="cuda")
    sy = torch.tensor(SCALE_Y, device="cuda")

    def scaled_mm() -> torch.Tensor:
        return torch._scaled_mm(x, y.t(), scale_a=sx, scale_b=sy, out_dtype=torch.bfloat16)

    expected = scaled_mm()
    tolerance = 0.02 * float(expected.float().abs().max())
    found = {
        name: checked(prepare, z, expected, tolerance)
        for name, prepare in candidates(bundle, z, x, y).items()
    }
    reference = Reference(scaled_mm)
    name, ours, launch, tried = fastest("gemm fp8", shape, found, tune_cache)
    launch()
    error = max_error(z, expected)
    theirs = reference.seconds()
    return Row(
        "gemm_fp8",
        "gemm fp8 e4m3 -> bf16",
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
    shapes = SHAPES[-1:] if args.quick else SHAPES
    rows = [measure(bundle, s, args.tune_cache) for s in shapes]
    report("tests.benchmarks.bench_gemm_fp8", "FP8 GEMM", rows, args.json)


if __name__ == "__main__":
    main()
