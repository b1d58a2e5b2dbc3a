"""The kernel configurations the benchmarks time, in one place: tests/benchmarks/build_bundle.py
compiles them, and each family's script autotunes among its own (client_stubs/autotune.py).

Pure data, so the GPU host needs nothing but the client to read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

FACTS_1D = "dims=16:strides=1"
FACTS_2D = "dims=16,16:strides=16,1"
# flash attention's sequence-major [L, B * H, D] views of [B * H, L, D] tensors: L and D are
# 16-multiples, the head axis any extent; strides D, L * D and 1
FACTS_SEQ_MAJOR = "dims=16,1,16:strides=16,16,1"


@dataclass(frozen=True)
class Group:
    """Configurations of one entry; `facts` (param -> --facts text) adds a specialized
    variant next to the general one (`general=False`: only the specialized one);
    `specialize` is the general kernel's `--specialize` (`auto`: the default path's variants,
    as a user's `cutile-compile` builds them)."""

    file: str
    entry: str
    configs: tuple[Mapping[str, str], ...]
    facts: Mapping[str, str] | None = None
    general: bool = True
    specialize: str = "none"


ADD_TILES = ("1024", "4096")
# add_tuned: (B, occupancy, worker warps)
ADD_TUNED_CONFIGS = (("1024", "4", "8"), ("1024", "2", "8"))
# add_generic_tuned at bf16: 8 elements (16 bytes) per thread and input, or 16
ADD_BF16_TUNED_CONFIGS = (
    ("2048", "4", "8"),
    ("2048", "2", "8"),
    ("1024", "4", "4"),
    ("4096", "2", "8"),
)
ADD = (
    Group("add.rs", "add", tuple({"B": b} for b in ADD_TILES), dict.fromkeys("zxy", FACTS_1D)),
    Group(
        "add.rs",
        "add_tuned",
        tuple({"B": b, "OCC": o, "WARPS": w} for b, o, w in ADD_TUNED_CONFIGS),
        dict.fromkeys("zxy", FACTS_1D),
    ),
    Group(
        "add.rs",
        "add_generic",
        tuple({"E": "bf16", "B": b} for b in ADD_TILES),
        dict.fromkeys("zxy", FACTS_1D),
    ),
    Group(
        "add.rs",
        "add_generic_tuned",
        tuple({"E": "bf16", "B": b, "OCC": o, "WARPS": w} for b, o, w in ADD_BF16_TUNED_CONFIGS),
        dict.fromkeys("zxy", FACTS_1D),
    ),
)

NORM_WIDTHS = (1024, 4096, 16384)
# rows per tile block for each width (a whole [BM, N] f32 tile stays in registers)
NORM_ROWS = {1024: ("8", "16", "32"), 4096: ("2", "4", "8"), 16384: ("1", "2")}
NORM_CONFIGS = tuple({"BM": bm, "N": str(n)} for n in NORM_WIDTHS for bm in NORM_ROWS[n])
# softmax_tuned / rms_norm_rows_tuned: (BM, occupancy, worker warps) per width. Measured on the
# H200: occupancy 2 with 4-16 warps beats the unhinted kernels at every width (16384-wide rows
# 2.7 -> 4.1 TB/s); BM = 1 for 16384, 4 for 4096 and 16-32 for 1024 lead.
NORM_TUNED_ROWS = {
    1024: (("16", "2", "4"), ("16", "1", "8"), ("32", "1", "4"), ("32", "2", "8")),
    4096: (("4", "2", "4"), ("4", "2", "8"), ("8", "1", "8"), ("8", "1", "4")),
    16384: (("1", "2", "8"), ("1", "2", "16"), ("1", "2", "4"), ("2", "2", "8")),
}
NORM_TUNED_CONFIGS = tuple(
    {"BM": bm, "N": str(n), "OCC": occ, "WARPS": warps}
    for n in NORM_WIDTHS
    for bm, occ, warps in NORM_TUNED_ROWS[n]
)
SOFTMAX_FACTS = {"y": FACTS_2D, "x": FACTS_2D}
RMS_NORM_FACTS = {"out": FACTS_2D, "x": FACTS_2D, "w": FACTS_1D}
NORMS = (
    Group("softmax.rs", "softmax", NORM_CONFIGS, SOFTMAX_FACTS, general=False),
    Group("softmax.rs", "softmax_tuned", NORM_TUNED_CONFIGS, SOFTMAX_FACTS, general=False),
    Group("rms_norm.rs", "rms_norm_rows", NORM_CONFIGS, RMS_NORM_FACTS, general=False),
    Group("rms_norm.rs", "rms_norm_rows_tuned", NORM_TUNED_CONFIGS, RMS_NORM_FACTS, general=False),
)

GEMM_DTYPES = ("f16", "bf16")


def map_shape(config: Mapping[str, str]) -> tuple[int, ...]:
    """A persistent config's MAP generic ("[8, 1]") as the shape `partition.map` takes."""
    return tuple(int(part) for part in config["MAP"].strip("[]").split(","))


def map_label(config: Mapping[str, str]) -> str:
    """ " mapAxB" for a MAP other than the default [8, 1], else nothing."""
    shape = map_shape(config)
    return "" if shape == (8, 1) else " map" + "x".join(map(str, shape))


# (BM, BN, BK, load latency, occupancy, CTAs per tile block, worker warps per CTA); MAP [8, 1]
# throughout. Measured
# on the H200 (BENCHMARKS.md): latency 6 beats 3 by ~20% at 4096^3 and 8192^3 (5 is as fast
# at 8192^3 and 3-5% faster at 4096^3 for 256x128 tiles; 7 and 8 fall off), and 128x256 /
# 256x128 tiles without a 2-CTA cluster spill (under 100 TFLOP/s), so they are not swept.
GEMM_TILES = (
    ("128", "128", "64", "3", "1", "1", "4"),
    ("128", "128", "64", "4", "1", "1", "4"),
    ("128", "128", "64", "6", "1", "1", "4"),
    ("128", "128", "64", "8", "1", "1", "4"),
    ("128", "128", "64", "10", "1", "1", "4"),
    ("128", "128", "128", "6", "1", "1", "4"),
    ("128", "128", "64", "6", "1", "2", "4"),
    ("128", "256", "64", "6", "1", "2", "4"),
    ("256", "128", "64", "5", "1", "2", "4"),
    ("256", "128", "64", "6", "1", "2", "4"),
    # two consumer warpgroups (num_worker_warps_per_cta = 8): 128x256 and 256x128 tiles
    # without spills (168 registers), not yet measured
    ("128", "256", "64", "4", "1", "1", "8"),
    ("128", "256", "64", "6", "1", "2", "8"),
    ("256", "128", "64", "5", "1", "2", "8"),
    ("128", "128", "64", "6", "1", "1", "8"),
)
# the persistent tile order's groups (MAP) besides [8, 1], per tile: [4, 1], [16, 1] and
# [8, 2] on 128x128x64 lat4/lat6 measured within 1% of [8, 1] or slower at 4096^3 and 8192^3
# on the H200 (2026-12-04), so none is swept
GEMM_MAPS: dict[tuple[str, ...], tuple[str, ...]] = {}
GEMM_TUNED = tuple(
    {
        "E": e,
        "BM": bm,
        "BN": bn,
        "BK": bk,
        "MAP": group,
        "LAT": lat,
        "OCC": occ,
        "CTA": cta,
        "W": w,
    }
    for e in GEMM_DTYPES
    for bm, bn, bk, lat, occ, cta, w in GEMM_TILES
    for group in ("[8, 1]", *GEMM_MAPS.get((bm, bn, bk, lat, occ, cta, w), ()))
)
GEMM_ALIGNED = tuple({"E": e, "BM": "128", "BN": "128", "BK": "64"} for e in GEMM_DTYPES)
GEMM = (
    Group("persistent_gemm.rs", "gemm_tuned", GEMM_TUNED),
    Group("gemm.rs", "gemm_aligned", GEMM_ALIGNED),
)

# (BM, BN) per head dimension
ATTENTION_TILES = {
    64: (("128", "64"), ("128", "128"), ("64", "128")),
    128: (("128", "64"), ("64", "64"), ("128", "128")),
}
ATTENTION_CONFIGS = tuple(
    {"E": "bf16", "BM": bm, "BN": bn, "D": str(d), "CAUSAL": causal}
    for d, tiles in ATTENTION_TILES.items()
    for bm, bn in tiles
    for causal in ("0", "1")
)
ATTENTION = (
    Group(
        "flash_attention.rs",
        "flash_attention",
        ATTENTION_CONFIGS,
        dict.fromkeys(("out", "q", "k", "v"), FACTS_SEQ_MAJOR),
        general=False,
    ),
)

# flash_attention_tuned: (BM, BN, load latency, occupancy, worker warps) per head dimension.
# Measured on the H200 at L = 4096 (sequence-major layout): BM = 64, BN = 128 with two blocks of
# one math warpgroup per SM reaches 612 TFLOP/s at D = 128 (non-causal; 496 causal), against
# 559-568 for BM = 128 with 8 worker warps (two warpgroups of one block) and 530 for
# BM = BN = 64; at L = 16384 and at D = 64 causal, BM = 128 with latency 3 is ahead.
ATTENTION_TUNED_TILES = {
    64: (
        ("64", "128", "2", "2", "4"),
        ("64", "128", "3", "2", "4"),
        ("128", "128", "3", "1", "8"),
        ("128", "128", "2", "1", "8"),
    ),
    128: (
        ("64", "128", "2", "2", "4"),
        ("64", "128", "3", "2", "4"),
        ("128", "128", "3", "1", "8"),
        ("128", "128", "2", "1", "8"),
        ("64", "128", "1", "2", "4"),
        ("64", "64", "2", "3", "4"),
        ("128", "64", "2", "2", "8"),
    ),
}
ATTENTION_TUNED_CONFIGS = tuple(
    {
        "E": "bf16",
        "BM": bm,
        "BN": bn,
        "D": str(d),
        "CAUSAL": causal,
        "LAT": lat,
        "OCC": occ,
        "WARPS": warps,
    }
    for d, tiles in ATTENTION_TUNED_TILES.items()
    for bm, bn, lat, occ, warps in tiles
    for causal in ("0", "1")
)
ATTENTION_TUNED = (
    Group(
        "flash_attention.rs",
        "flash_attention_tuned",
        ATTENTION_TUNED_CONFIGS,
        dict.fromkeys(("out", "q", "k", "v"), FACTS_SEQ_MAJOR),
        general=False,
    ),
)

# gemm_fp8_tuned: (BM, BN, BK, load latency, occupancy, CTAs per tile block, worker warps per
# CTA); MAP [8, 1]. Hopper's fp8 wgmma reads K in steps of 32: BK = 128 keeps four of them per
# stage. With 4 worker warps the 128x128 tiles spill (255 registers: the exact accumulation
# keeps a second f32 set per k-tile); 8 do not (168), not yet measured.
GEMM_FP8_TILES = (
    ("128", "128", "128", "3", "1", "1", "4"),
    ("128", "128", "128", "4", "1", "1", "4"),
    ("128", "128", "128", "6", "1", "1", "4"),
    ("128", "128", "64", "6", "1", "1", "4"),
    ("128", "256", "128", "4", "1", "2", "4"),
    ("256", "128", "128", "4", "1", "2", "4"),
    ("128", "128", "128", "4", "1", "1", "8"),
    ("128", "128", "128", "6", "1", "1", "8"),
    ("128", "128", "64", "6", "1", "1", "8"),
    ("128", "128", "128", "4", "1", "2", "8"),
)
# as GEMM_MAPS: [4, 1] and [16, 1] on 128x128x128 lat6 w8 measured no faster (and 128x256x128
# on two warpgroups at 495 TFLOP/s against 1194 at 8192^3), so none is swept
GEMM_FP8_MAPS: dict[tuple[str, ...], tuple[str, ...]] = {}
GEMM_FP8_TUNED = tuple(
    {
        "FP": "f8e4m3fn",
        "E": "bf16",
        "BM": bm,
        "BN": bn,
        "BK": bk,
        "MAP": group,
        "LAT": lat,
        "OCC": occ,
        "CTA": cta,
        "W": w,
    }
    for bm, bn, bk, lat, occ, cta, w in GEMM_FP8_TILES
    for group in ("[8, 1]", *GEMM_FP8_MAPS.get((bm, bn, bk, lat, occ, cta, w), ()))
)
GEMM_FP8 = (Group("gemm_fp8.rs", "gemm_fp8_tuned", GEMM_FP8_TUNED),)

# decode attention (rust_examples/decoder.rs): Qwen3-4B's heads (8 KV heads of 4 query heads,
# D = 128), one query token per sequence; (BN, load latency, occupancy) of attention_partial.
# Built the default way (`--specialize auto`): its [.., 4] outputs and one-token queries meet
# only the 16-byte rows variant, whose loads are TMA (the general kernel's are scalar LDG.U16).
# R = 2 copies of the 4 query rows: 8 rows make its products wgmma (4 make them scalar FFMA).
DECODE_ATTENTION_SHAPE = {"E": "bf16", "G": "4", "PT": "1", "D": "128"}
DECODE_ATTENTION_TILES = (("64", "3", "2"), ("128", "2", "1"), ("128", "3", "2"))
DECODE_ATTENTION = (
    Group(
        "decoder.rs",
        "attention_partial",
        tuple(
            {**DECODE_ATTENTION_SHAPE, "BN": bn, "LAT": lat, "OCC": occ, "R": "2"}
            for bn, lat, occ in DECODE_ATTENTION_TILES
        ),
        specialize="auto",
    ),
    # the splits read 8 at a time (a [8, 4, 128] f32 chunk; tests.benchmarks.decode.kernels)
    Group(
        "decoder.rs",
        "attention_merge",
        ({**DECODE_ATTENTION_SHAPE, "SPC": "8"},),
        specialize="auto",
    ),
)

# cutile-rs's own GEMM examples, compiled unchanged by default (build_cutile_rs.py and
# bench_cutile_rs.py here): not in FAMILIES, their sources live in a cutile-rs checkout
CUTILE_RS_TILE = {"BM": "128", "BN": "128", "BK": "64"}
# gemm.rs on f32, the element its host code launches it with: a k-tile of 32 (as much smem as
# f16's 64); tiles an H100 liked for its three TF32 products (`lowering.split_f32_products`)
CUTILE_RS_F32_TILE = {"BM": "128", "BN": "128", "BK": "32"}
CUTILE_RS_SIZES = (4096, 8192)
# one tile block per SM of the H200, as cutile-rs's host code maps
CUTILE_RS_PERSISTENT_BLOCKS = 132


@dataclass(frozen=True)
class CutileRsKernel:
    source: str  # path inside a cutile-rs checkout
    entry: str
    generics: Mapping[str, str]


CUTILE_RS_KERNELS = (
    *(
        CutileRsKernel(
            "cutile-examples/examples/gemm.rs",
            "gemm",
            {"E": "f16", **CUTILE_RS_TILE, "K": str(size)},
        )
        for size in CUTILE_RS_SIZES
    ),
    *(
        CutileRsKernel(
            "cutile-examples/examples/gemm.rs",
            "gemm",
            {"E": "f32", **CUTILE_RS_F32_TILE, "K": str(size)},
        )
        for size in CUTILE_RS_SIZES
    ),
    CutileRsKernel(
        "cutile-examples/examples/persistent_gemm.rs",
        "gemm_persistent",
        {"T": "f16", **CUTILE_RS_TILE, "MAP_SHAPE": "[8, 1]"},
    ),
)


# the groups of each benchmark family (`build_bundle --family NAME` compiles one family only)
FAMILIES = {
    "add": ADD,
    "norms": NORMS,
    "gemm": GEMM,
    "gemm_fp8": GEMM_FP8,
    "attention": (*ATTENTION, *ATTENTION_TUNED),
    "decode_attention": DECODE_ATTENTION,
}
GROUPS = tuple(group for groups in FAMILIES.values() for group in groups)
