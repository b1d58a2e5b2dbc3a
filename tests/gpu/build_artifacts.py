"""Compile every example kernel of rust_examples/catalog.json into one bundle folder
(run on the CPU machine, which has tileiras).

    python -m tests.gpu.build_artifacts [OUT]        # default OUT: gpu_artifacts/bundle

Then, on the GPU machine, with OUT copied along:

    PYTHONPATH=. CUTILE_GPU_ARTIFACTS=OUT python3 -m pytest tests/gpu -v

OUT holds exactly the kernels the tests name (`--specialize none`: the tests launch each
entry with arguments of their own); OUT/default holds a few kernels as `cutile-compile`
builds them by default, with their automatic variants, launched early
(tests/gpu/test_default_variants_gpu.py, tests/gpu/test_early_launch_gpu.py, and
`tests.benchmarks.launch_overhead OUT/default` for the per-launch choice of variant);
OUT/plain holds the same kernels built with `--no-early-launch`
(`tests.benchmarks.launch_overhead OUT/plain` for what early launches save).
"""

from __future__ import annotations

import sys
from pathlib import Path

from rust_examples.catalog import EXAMPLES, specializations
from service.cli.batch import main as cutile_compile

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "gpu_artifacts" / "bundle"


def argv(out: Path) -> list[str]:
    specs = specializations()
    files = sorted({str(EXAMPLES / s.file) for s in specs})
    entries = sorted({s.entry for s in specs})
    generics = [
        arg
        for s in specs
        for arg in ("--generics", f"{s.entry}:" + ",".join(f"{k}={v}" for k, v in s.generics))
    ]
    return [
        *files,
        *(arg for e in entries for arg in ("--entry", e)),
        *generics,
        "--arch",
        "sm_90",
        "-o",
        str(out),
        "--specialize",
        "none",
    ]


def default_argv(out: Path) -> list[list[str]]:
    """Kernels built the default way (general + automatic variants) into `out`."""
    tail = ("--arch", "sm_90", "-o", str(out))
    return [
        [
            str(EXAMPLES / "gemm.rs"),
            "--entry",
            "gemm",
            "--generics",
            "E=f16,BM=128,BN=128,BK=64",
            *tail,
        ],
        [str(EXAMPLES / "add.rs"), "--entry", "add", "--generics", "B=1024", *tail],
        [  # a two-pass row loop with no occupancy hint: it gets an occupancy variant
            str(EXAMPLES / "rms_norm.rs"),
            "--entry",
            "rms_norm",
            "--generics",
            "N=2048,BLOCK_SIZE=128",
            *tail,
        ],
    ]


def plain_argv(out: Path) -> list[list[str]]:
    """`default_argv`'s kernels compiled plain (not launched early)."""
    return [[*run, "--no-early-launch"] for run in default_argv(out)]


def variant_argv(
    out: Path, file: str, entry: str, generics: list[str], facts: list[str]
) -> list[str]:
    """cutile-compile arguments for `entry` of `file` at each of `generics`, assuming `facts`
    (`PARAM:dims=..`, prefixed with the entry here)."""
    return [
        str(EXAMPLES / file),
        *("--entry", entry),
        *(arg for g in generics for arg in ("--generics", g)),
        *(arg for fact in facts for arg in ("--facts", f"{entry}:{fact}")),
        *("--arch", "sm_90", "-o", str(out), "--specialize", "none"),
    ]


def variants(out: Path) -> list[list[str]]:
    """The specialized variants the GPU tests choose among with `for_args`, next to the
    general kernels `argv` builds."""
    # the f16 gemm for tensors whose extents and row strides are multiples of 8 (what
    # `specialize_for` measures on the client)
    gemm = variant_argv(
        out,
        "gemm.rs",
        "gemm",
        ["E=f16,BM=128,BN=128,BK=64"],
        [f"{p}:dims=8,8:strides=8,1" for p in ("z", "x", "y")],
    )
    # flash attention and its unchecked twin for 16-multiples: the TMA path the
    # safety-overhead benchmark compares safe and unchecked on
    attention = [
        variant_argv(
            out,
            "flash_attention.rs",
            entry,
            [f"E=bf16,BM=128,BN=64,D=128,CAUSAL={c}" for c in (0, 1)],
            [f"{p}:dims=16,1,16:strides=16,16,1" for p in ("out", "q", "k", "v")],
        )
        for entry in ("flash_attention", "flash_attention_unchecked")
    ]
    # `add` at B=256 (no other test asks for it by generics): general, relaxed for views
    # whose base is only 4-byte aligned (`x[1:]`), and for a strided last axis (`x[::2]`);
    # tests/gpu/test_relaxed_views_gpu.py launches them
    add = [
        variant_argv(out, "add.rs", "add", ["B=256"], [f"{p}:{fact}" for p in ("z", "x", "y")])
        for fact in ("align=4", "last_stride=any")
    ]
    return [gemm, *attention, variant_argv(out, "add.rs", "add", ["B=256"], []), *add]


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    runs = [argv(out), *variants(out), *default_argv(out / "default"), *plain_argv(out / "plain")]
    for run in runs:
        status = cutile_compile(run)
        if status:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
