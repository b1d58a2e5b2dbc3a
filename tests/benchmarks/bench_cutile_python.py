"""cuTile Python (NVIDIA's cuda-tile 1.7.0) on the issue's target shapes, next to torch.

Three steps, because the GPU host's tileiras cannot compile (it lacks libNVVM and ptxas,
which are larger than a device call can carry):

    # GPU host: record the compile requests cuTile makes (bytecode and its cache key)
    python3 -m tests.benchmarks.bench_cutile_python capture REQUESTS.pkl
    # CPU machine, a Python 3.12 environment with cuda-tile, and the same tileiras release as
    # the GPU host's (with its libNVVM and ptxas): compile them with cuTile's own tileiras
    # invocation into a cuTile disk cache
    python3.12 -m tests.benchmarks.bench_cutile_python compile REQUESTS.pkl CACHE [--tileiras PATH]
    # GPU host: launch through cuTile (every compile is a cache hit) and time against torch
    python3 -m tests.benchmarks.bench_cutile_python run CACHE [--json OUT.json]

On the GPU host cuda-tile and nvidia-cuda-tileiras are installed with `pip install --no-deps
--target DIR` and DIR is on PYTHONPATH (the script puts DIR's tileiras on PATH: cuTile keys
its cache by `tileiras --version`). cuTile's probe for the newest bytecode version compiles a
module, which fails there, so capture and run report what the same tileiras reports on the
CPU machine (13.4); otherwise cuTile falls back to 13.1 and drops hints such as
`num_worker_warps`. The kernels are tests/benchmarks/cutile_python_kernels.py; each case times the
listed configurations (hints included) and keeps the fastest.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NEWEST_BYTECODE = "V_13_4"  # what cuTile's probe finds with tileiras 13.5 and its libNVVM


@dataclass(frozen=True)
class Case:
    """One target shape: cuTile launches by configuration name, torch's, and the check."""

    case: str  # the same names as our families' rows, so BENCHMARKS.md can join them
    shape: str
    work: float
    unit: str
    launches: dict[str, Callable[[], object]]
    reference: Callable[[], object]
    error: Callable[[], float]  # max error of the output after a launch
    tolerance: float


def _use_installed_tileiras() -> None:
    """Put the pip-installed tileiras (nvidia/cu13/bin under a sys.path entry) on PATH."""
    for entry in sys.path:
        folder = Path(entry or ".", "nvidia", "cu13", "bin")
        if (folder / "tileiras").exists():
            os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
            return


def _pin_bytecode_version() -> None:
    import cuda.tile._compile as compile_module

    newest = getattr(compile_module.BytecodeVersion, NEWEST_BYTECODE)
    compile_module._get_max_supported_bytecode_version = lambda *_, **__: newest


def _elementwise_and_rows() -> list[Case]:
    import cuda.tile as ct
    import torch

    from tests.benchmarks import cutile_python_kernels as k

    stream = torch.cuda.current_stream()
    n = 1 << 28
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    z = torch.empty_like(x)
    adds: dict[str, Callable[[], object]] = {}
    for tile in (1024, 4096):
        for hints in ({}, {"occupancy": 4, "num_worker_warps": 8}):
            kernel = k.add.replace_hints(**hints)
            name = f"tile {tile}" + (" occ4 w8" if hints else "")
            adds[name] = lambda kernel=kernel, tile=tile: ct.launch(
                stream, (n // tile,), kernel, (x, y, z, tile)
            )
    cases = [
        Case(
            "add f32",
            "2^28",
            12 * n,
            "TB/s",
            adds,
            lambda: torch.add(x, y, out=z),
            lambda: float((z - (x + y)).abs().max()),
            0.0,
        )
    ]
    rows, width = 32768, 4096
    xs, ys = torch.randn(rows, width, device="cuda"), torch.empty(rows, width, device="cuda")
    w = torch.rand(width, device="cuda") + 0.5

    def rms() -> torch.Tensor:
        return torch.nn.functional.rms_norm(xs, (width,), w, 1e-6)

    row_hints = (
        {},
        {"occupancy": 2, "num_worker_warps": 4},
        {"occupancy": 2, "num_worker_warps": 8},
    )

    for case, kernel_of, args, reference, tolerance in (
        ("softmax f32", k.softmax_rows, lambda bm: (xs, ys, bm, width), None, 1e-5),
        ("rms_norm f32", k.rms_norm_rows, lambda bm: (xs, w, ys, 1e-6, bm, width), rms, 1e-4),
    ):
        expected = reference or (lambda: torch.softmax(xs, dim=1))
        launches: dict[str, Callable[[], object]] = {}
        for bm in (2, 4, 8):
            for hints in row_hints:
                kernel = kernel_of.replace_hints(**hints)
                name = f"BM={bm}" + (f" occ2 w{hints['num_worker_warps']}" if hints else "")
                launches[name] = lambda kernel=kernel, bm=bm, args=args: ct.launch(
                    stream, (rows // bm,), kernel, args(bm)
                )
        cases.append(
            Case(
                case,
                f"{rows}x{width}",
                8 * rows * width,
                "TB/s",
                launches,
                expected,
                lambda expected=expected: float((ys - expected()).abs().max()),
                tolerance,
            )
        )
    return cases


def _gemm() -> list[Case]:
    import cuda.tile as ct
    import torch

    from tests.benchmarks import cutile_python_kernels as k

    stream = torch.cuda.current_stream()
    cases = []
    for size in (4096, 8192):
        for name, dtype in (("f16", torch.float16), ("bf16", torch.bfloat16)):
            a, b = (torch.randn(size, size, device="cuda", dtype=dtype) for _ in range(2))
            c = torch.empty(size, size, device="cuda", dtype=dtype)
            launches: dict[str, Callable[[], object]] = {}
            for bm, bn, bk, ctas in ((128, 128, 64, 1), (256, 128, 64, 2), (128, 256, 64, 2)):
                kernel = k.gemm_grouped.replace_hints(num_ctas=ctas) if ctas > 1 else k.gemm_grouped
                grid = ((size // bm) * (size // bn),)
                launches[f"{bm}x{bn}x{bk} group8 cta{ctas}"] = (
                    lambda kernel=kernel, grid=grid, a=a, b=b, c=c, t=(bm, bn, bk): ct.launch(
                        stream, grid, kernel, (a, b, c, *t, 8)
                    )
                )
            expected = torch.matmul(a, b)
            scale = float(expected.float().abs().max())
            cases.append(
                Case(
                    f"gemm {name}",
                    f"{size}x{size}x{size}",
                    2 * size**3,
                    "TFLOP/s",
                    launches,
                    lambda a=a, b=b, c=c: torch.matmul(a, b, out=c),
                    lambda c=c, e=expected: float((c.float() - e.float()).abs().max()),
                    0.02 * scale,
                )
            )
    return cases


def _attention() -> list[Case]:
    import cuda.tile as ct
    import torch
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    from tests.benchmarks import cutile_python_kernels as k

    stream = torch.cuda.current_stream()
    batch, heads, length, d = 4, 32, 4096, 128
    q, kk, v = (
        torch.randn(batch, heads, length, d, device="cuda", dtype=torch.bfloat16) for _ in range(3)
    )
    o = torch.empty_like(q)
    flat = [t.view(batch * heads, length, d) for t in (q, kk, v, o)]
    scale = math.log2(math.e) / math.sqrt(d)
    tiles = (
        (64, 128, {"occupancy": 2, "num_worker_warps": 4}),
        (128, 128, {"num_worker_warps": 8}),
        (128, 64, {"num_worker_warps": 8}),
    )
    cases = []
    for causal in (0, 1):
        launches: dict[str, Callable[[], object]] = {}
        for bm, bn, hints in tiles:
            kernel = k.attention.replace_hints(**hints)
            grid = (length // bm, batch * heads)  # query blocks first, as in ours
            name = f"BM={bm},BN={bn} occ{hints.get('occupancy', 1)} w{hints['num_worker_warps']}"
            launches[name] = lambda kernel=kernel, grid=grid, t=(bm, bn, d, causal): ct.launch(
                stream, grid, kernel, (*flat, scale, *t)
            )
        expected = sdpa(q, kk, v, is_causal=bool(causal))
        cases.append(
            Case(
                f"flash attention {'causal' if causal else 'non-causal'} D={d}",
                f"{batch}x{heads}x{length}x{d}",
                4 * batch * heads * length * length * d // (2 if causal else 1),
                "TFLOP/s",
                launches,
                lambda causal=causal: sdpa(q, kk, v, is_causal=bool(causal)),
                lambda e=expected: float((o.float() - e.float()).abs().max()),
                2e-2,
            )
        )
    return cases


def cases() -> list[Case]:
    return [*_elementwise_and_rows(), *_gemm(), *_attention()]


class _Captured(Exception):
    """Raised in place of running tileiras once the request is recorded."""


def capture(path: Path) -> int:
    """Launch every configuration once with cuTile's cache lookup and tileiras replaced by
    recorders; write [{key, bytecode, options, sm_arch, preview_features, linker_inputs}]."""
    import cuda.tile._compile as compile_module

    records: list[dict[str, Any]] = []
    keys: list[str] = []

    def lookup(cache_dir: str, key: str) -> None:
        keys.append(key)

    def record(bytecode_path: str, options: object, sm_arch: str, **kw: Any) -> str:
        records.append(
            {
                "key": keys.pop(),
                "bytecode": Path(bytecode_path).read_bytes(),
                "options": options,
                "sm_arch": sm_arch,
                "preview_features": kw.get("preview_features", ()),
                "linker_inputs": kw.get("linker_inputs", ()),
            }
        )
        raise _Captured

    compile_module.cache_lookup = lookup
    compile_module.compile_cubin = record
    failed = 0
    for case in cases():
        for name, launch in case.launches.items():
            try:
                launch()
                print(f"{case.case} {name}: already compiled", flush=True)
            except _Captured:
                pass
            except Exception as exc:  # a kernel cuTile rejects: reported, the rest go on
                failed += 1
                print(f"{case.case} {name}: {type(exc).__name__}: {exc}", flush=True)
    path.write_bytes(pickle.dumps(records))
    print(f"recorded {len(records)} compile requests in {path}")
    return 1 if failed else 0


def compile_requests(requests: Path, cache: Path) -> int:
    """Compile each recorded request with cuTile's own tileiras call into cuTile's cache."""
    import cuda.tile._compile as compile_module
    from cutile_cache._cache import MetadataV1, cache_store

    version = compile_module._get_compiler_version_string()
    if version is None:
        print("error: cuTile finds no tileiras here", file=sys.stderr)
        return 1
    cache.mkdir(parents=True, exist_ok=True)
    recorded = pickle.loads(requests.read_bytes())
    for request in recorded:
        with tempfile.TemporaryDirectory() as folder:
            bytecode = Path(folder, "kernel.bytecode")
            bytecode.write_bytes(request["bytecode"])
            started = time.perf_counter()
            cubin = Path(
                compile_module.compile_cubin(
                    str(bytecode),
                    request["options"],
                    request["sm_arch"],
                    timeout_sec=600,
                    remarks_output_file=None,
                    preview_features=request["preview_features"],
                    linker_inputs=request["linker_inputs"],
                )
            ).read_bytes()
        metadata = MetadataV1(
            kernel_names=[],
            compiler_version=version.strip(),
            compilation_timestamp=time.time(),
            compilation_time_seconds=time.perf_counter() - started,
            remarks="",
        )
        cache_store(str(cache), request["key"], cubin, metadata.to_dict())
    print(f"compiled {len(recorded)} requests into {cache}")
    return 0


def run(json_path: Path | None) -> int:
    """Time the fastest configuration of every case against torch (as the family scripts do)."""
    import torch

    from tests.benchmarks.family import Reference, Row, report
    from tests.benchmarks.timing import median_seconds

    rows = []
    for case in cases():
        reference = Reference(case.reference)
        tried: dict[str, float] = {}
        errors: dict[str, float] = {}
        for name, launch in case.launches.items():
            launch()
            torch.cuda.synchronize()
            errors[name] = case.error()
            if errors[name] <= case.tolerance:
                tried[name] = median_seconds(launch)
        best = min(tried, key=tried.__getitem__) if tried else min(errors, key=errors.__getitem__)
        rows.append(
            Row(
                "cuTile Python",
                case.case,
                case.shape,
                case.work,
                case.unit,
                tried.get(best, math.inf),
                reference.seconds(),
                best,
                errors[best],
                case.tolerance,
                tried=dict(sorted(tried.items(), key=lambda item: item[1])),
            )
        )
    report("tests.benchmarks.bench_cutile_python", "cuTile Python", rows, json_path)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    step = steps.add_parser("capture", help="GPU host: record cuTile's compile requests")
    step.add_argument("requests", type=Path)
    step = steps.add_parser("compile", help="CPU machine: compile them into a cuTile cache")
    step.add_argument("requests", type=Path)
    step.add_argument("cache", type=Path)
    step.add_argument(
        "--tileiras", type=Path, help="the tileiras to compile with (the GPU host's version)"
    )
    step = steps.add_parser("run", help="GPU host: time the cached kernels against torch")
    step.add_argument("cache", type=Path)
    step.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if importlib.util.find_spec("cuda.tile") is None:
        print("error: cuTile Python is not installed for this Python (cuda-tile)", file=sys.stderr)
        return 2
    if args.step == "compile":
        if args.tileiras is not None:  # cuTile looks for tileiras on PATH after pip packages
            folder = args.tileiras.resolve().parent
            os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
        return compile_requests(args.requests, args.cache)
    # cuTile reads its cache folder from the environment when it is first imported
    cache = args.cache if args.step == "run" else Path(tempfile.mkdtemp(prefix="cutile-"))
    os.environ["CUDA_TILE_CACHE_DIR"] = str(cache.resolve())
    _use_installed_tileiras()
    _pin_bytecode_version()
    return capture(args.requests) if args.step == "capture" else run(args.json)


if __name__ == "__main__":
    sys.exit(main())
