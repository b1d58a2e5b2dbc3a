"""Element-wise add z = x + y, ours (autotuned tile size) vs torch.add, f32 and bf16,
2^20 ... 2^28 elements.

    PYTHONPATH=. python3 -m tests.benchmarks.bench_add BUNDLE [--json OUT.json] [--quick]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from client_stubs import Bundle, DeviceTensor
from client_stubs.autotune import Prepare
from tests.benchmarks import configs
from tests.benchmarks.family import Reference, Row, fastest, max_error, parse_args, report

SIZES = tuple(1 << p for p in (20, 22, 24, 26, 28))
TOLERANCE = {"f32": 1e-6, "bf16": 0.05}  # bf16 rounding of sums up to ~10
ENTRIES = {"f32": ("add", torch.float32, 4), "bf16": ("add_generic", torch.bfloat16, 2)}


def candidates(bundle: Bundle, dtype: str, z, x, y) -> dict[str, Prepare]:  # type: ignore[no-untyped-def]
    function = ENTRIES[dtype][0]

    def prepare(
        tile: str, generics: dict[str, str] | None = None, entry: str = function
    ) -> Prepare:
        chosen = generics or ({"B": tile} if dtype == "f32" else {"E": dtype, "B": tile})

        def load():  # type: ignore[no-untyped-def]
            args = (DeviceTensor.wrap(z).partition((int(tile),)), *map(DeviceTensor.wrap, (x, y)))
            kernel = bundle.kernel(entry, chosen, for_args=args)
            return lambda: kernel(*args)

        return load

    found = {f"B={tile}": prepare(tile) for tile in configs.ADD_TILES}
    if dtype == "f32":
        for tile, occupancy, warps in configs.ADD_TUNED_CONFIGS:
            found[f"tuned B={tile} occ{occupancy} w{warps}"] = prepare(
                tile, {"B": tile, "OCC": occupancy, "WARPS": warps}, "add_tuned"
            )
    else:
        for tile, occupancy, warps in configs.ADD_BF16_TUNED_CONFIGS:
            chosen = {"E": dtype, "B": tile, "OCC": occupancy, "WARPS": warps}
            found[f"tuned B={tile} occ{occupancy} w{warps}"] = prepare(
                tile, chosen, "add_generic_tuned"
            )
    return found


def measure(bundle: Bundle, dtype: str, n: int, tune_cache: Path) -> Row:
    function, element, size = ENTRIES[dtype]
    x = torch.randn(n, device="cuda", dtype=element)
    y = torch.randn(n, device="cuda", dtype=element)
    z = torch.empty_like(x)
    reference = Reference(lambda: torch.add(x, y, out=z))
    name, ours, launch, tried = fastest(
        function, (n,), candidates(bundle, dtype, z, x, y), tune_cache
    )
    launch()
    expected = x + y
    error = max_error(z, expected)
    theirs = reference.seconds()
    return Row(
        "add",
        f"add {dtype}",
        f"2^{n.bit_length() - 1}",
        3 * size * n,
        "TB/s",
        ours,
        theirs,
        name,
        error,
        0.0,
        tried=tried,
    )


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(__doc__.splitlines()[0], argv)
    bundle = Bundle.open(args.bundle)
    tune_cache = args.tune_cache
    sizes = SIZES[-1:] if args.quick else SIZES
    rows = [measure(bundle, dtype, n, tune_cache) for dtype in ENTRIES for n in sizes]
    report("tests.benchmarks.bench_add", "element-wise add", rows, args.json)


if __name__ == "__main__":
    main()
