"""Compile every example kernel of rust_examples/catalog.json into one bundle folder
(run on the CPU machine, which has tileiras).

    python -m tests.gpu.build_artifacts [OUT]        # default OUT: gpu_artifacts/bundle

Then, on the GPU machine, with OUT copied along:

    PYTHONPATH=. CUTILE_GPU_ARTIFACTS=OUT python3 -m pytest tests/gpu -v
"""

from __future__ import annotations

import sys
from pathlib import Path

from rust_examples.catalog import EXAMPLES, specializations
from service.batch_cli import main as cutile_compile

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
    ]


# A variant of the f16 gemm specialized for tensors whose extents and row strides are
# multiples of 8 (`--facts`, what `specialize_for` measures on the client): it sits next to
# the general kernel, and `Bundle.find(..., for_args=...)` picks it for such tensors.
GEMM_FACTS = [
    arg for param in ("z", "x", "y") for arg in ("--facts", f"gemm:{param}:dims=8,8:strides=8,1")
]


def facts_argv(out: Path) -> list[str]:
    return [
        str(EXAMPLES / "gemm.rs"),
        "--entry",
        "gemm",
        "--generics",
        "E=f16,BM=128,BN=128,BK=64",
        *GEMM_FACTS,
        "--arch",
        "sm_90",
        "-o",
        str(out),
    ]


# flash attention and its unchecked twin (bf16, 128x64 tiles, D=128) specialized for tensors
# whose length, head dim and strides are multiples of 16: the TMA path the safety-overhead
# benchmark compares safe and unchecked on (`for_args` picks them for such tensors).
ATTENTION_FACTS = "dims=1,16,16:strides=16,16,1"


def attention_facts_argv(out: Path, entry: str) -> list[str]:
    facts = (f"{entry}:{param}:{ATTENTION_FACTS}" for param in ("out", "q", "k", "v"))
    return [
        str(EXAMPLES / "flash_attention.rs"),
        "--entry",
        entry,
        *("--generics", "E=bf16,BM=128,BN=64,D=128,CAUSAL=0"),
        *("--generics", "E=bf16,BM=128,BN=64,D=128,CAUSAL=1"),
        *(arg for fact in facts for arg in ("--facts", fact)),
        "--arch",
        "sm_90",
        "-o",
        str(out),
    ]


# `add` at B=256 (no other test asks for it by generics) in three variants: the general one, one
# relaxed for views whose base is only 4-byte aligned (`x[1:]`) and one for views whose last
# axis is strided (`x[::2]`); tests/gpu/test_relaxed_views_gpu.py launches them.
RELAXED_ADD = {
    "misaligned": [f"add:{param}:align=4" for param in ("z", "x", "y")],
    "strided": [f"add:{param}:last_stride=any" for param in ("z", "x", "y")],
}


def relaxed_add_argv(out: Path, facts: list[str]) -> list[str]:
    return [
        str(EXAMPLES / "add.rs"),
        "--entry",
        "add",
        "--generics",
        "B=256",
        *(arg for fact in facts for arg in ("--facts", fact)),
        "--arch",
        "sm_90",
        "-o",
        str(out),
    ]


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    runs = [
        argv(out),
        facts_argv(out),
        *(attention_facts_argv(out, e) for e in ("flash_attention", "flash_attention_unchecked")),
        relaxed_add_argv(out, []),
        *(relaxed_add_argv(out, facts) for facts in RELAXED_ADD.values()),
    ]
    for run in runs:
        status = cutile_compile(run)
        if status:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
