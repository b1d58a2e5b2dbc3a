"""The kernel configurations the benchmarks time, in one place: benchmarks/build_bundle.py
compiles them, and each family's script autotunes among its own (client_stubs/autotune.py).

Pure data, so the GPU host needs nothing but the client to read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

FACTS_1D = "dims=16:strides=1"
FACTS_2D = "dims=16,16:strides=16,1"
FACTS_3D = "dims=1,16,16:strides=16,16,1"


@dataclass(frozen=True)
class Group:
    """Configurations of one entry; `facts` (param -> --facts text) adds a specialized
    variant next to the general one (`general=False`: only the specialized one)."""

    file: str
    entry: str
    configs: tuple[Mapping[str, str], ...]
    facts: Mapping[str, str] | None = None
    general: bool = True


ADD_TILES = ("1024", "4096")
ADD = (
    Group("add.rs", "add", tuple({"B": b} for b in ADD_TILES), dict.fromkeys("zxy", FACTS_1D)),
    Group(
        "add.rs",
        "add_generic",
        tuple({"E": "bf16", "B": b} for b in ADD_TILES),
        dict.fromkeys("zxy", FACTS_1D),
    ),
)

NORM_WIDTHS = (1024, 4096, 16384)
# rows per tile block for each width (a whole [BM, N] f32 tile stays in registers)
NORM_ROWS = {1024: ("4", "8", "16"), 4096: ("1", "2", "4"), 16384: ("1", "2")}
NORM_CONFIGS = tuple({"BM": bm, "N": str(n)} for n in NORM_WIDTHS for bm in NORM_ROWS[n])
NORMS = (
    Group("softmax.rs", "softmax", NORM_CONFIGS, {"y": FACTS_2D, "x": FACTS_2D}, general=False),
    Group(
        "rms_norm.rs",
        "rms_norm_rows",
        NORM_CONFIGS,
        {"out": FACTS_2D, "x": FACTS_2D, "w": FACTS_1D},
        general=False,
    ),
)

GEMM_DTYPES = ("f16", "bf16")
# (BM, BN, BK, load latency, occupancy, CTAs per tile block); MAP [8, 1] throughout
GEMM_TILES = (
    ("128", "128", "64", "3", "1", "1"),
    ("128", "128", "64", "6", "1", "1"),
    ("128", "128", "128", "3", "1", "1"),
    ("128", "128", "64", "3", "2", "1"),
    ("128", "256", "64", "3", "1", "1"),
    ("128", "256", "64", "6", "1", "1"),
    ("256", "128", "64", "3", "1", "1"),
    ("128", "256", "64", "3", "1", "2"),
    ("256", "128", "64", "3", "1", "2"),
)
GEMM_TUNED = tuple(
    {
        "E": e,
        "BM": bm,
        "BN": bn,
        "BK": bk,
        "MAP": "[8, 1]",
        "LAT": lat,
        "OCC": occ,
        "CTA": cta,
    }
    for e in GEMM_DTYPES
    for bm, bn, bk, lat, occ, cta in GEMM_TILES
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
        dict.fromkeys(("out", "q", "k", "v"), FACTS_3D),
        general=False,
    ),
)

GROUPS = (*ADD, *NORMS, *GEMM, *ATTENTION)
