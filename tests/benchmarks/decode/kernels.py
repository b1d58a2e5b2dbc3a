"""Which kernel specializations the decoder needs, and the candidates it tunes among.

One place for both sides: `tests.benchmarks.decode.build` compiles `specializations(...)` into the
bundle on the CPU machine, and `tests.benchmarks.decode.model` asks the same functions which
generics to load on the GPU host. Pure Python.

All kernels come from rust_examples/decoder.rs. The projections have several candidate
tilings (`projection_candidates`); the split-K factor is a launch choice (the partials'
leading extent), not a generic, so one cubin serves every split.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tests.benchmarks.decode.config import ModelConfig

SOURCE = "decoder.rs"
# RMSNorm tile width of the tile loops (hidden sizes are multiples of 512)
NORM_BK = 512
# add_rms_norm_row holds a row's [S, 1, HT] f32 partials in registers (16 warps): up to this
# many elements; past it add_rms_norm_hf's tile loop (the whole row at 4 warps spilled: 5.4 ->
# 5.8-9.2 µs a Qwen3-4B row, 9.2 -> 22 µs a Qwen3-32B row)
NORM_ROW_ELEMENTS = 16384
# attention_merge reads SPC splits per chunk: [SPC, rows, D] f32 partials, up to this many
# (each chunk is a dependent load; 16384 at 8 warps holds without spills: Qwen3-4B at 8k
# context, 32 splits in one chunk instead of 4, 6.49 -> 4.02 µs a layer on the H200)
MERGE_CHUNK_ELEMENTS = 16384
EMBED_BD = 512
ARGMAX_BV = 4096  # first-stage argmax block of the vocabulary
PREFILL_PT = 16  # prompt tokens per prefill chunk
DECODE_ATTENTION = ({"BN": "64", "LAT": "3", "OCC": "2"}, {"BN": "128", "LAT": "2", "OCC": "1"})
PREFILL_ATTENTION = {"BN": "64", "LAT": "2", "OCC": "1"}
H200_SMS = 132
PROJECTIONS = ("qkv", "o", "gate_up", "down", "lm_head")


def pow2_at_least(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


@dataclass(frozen=True)
class Spec:
    """One specialization: an entry of decoder.rs at its generics."""

    entry: str
    generics: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, entry: str, generics: Mapping[str, str]) -> Spec:
        return cls(entry, tuple((k, str(v)) for k, v in generics.items()))

    @property
    def generic_map(self) -> dict[str, str]:
        return dict(self.generics)

    def cli(self) -> str:
        """`--generics ENTRY:K=V,...` text for cutile-compile."""
        return f"{self.entry}:" + ",".join(f"{k}={v}" for k, v in self.generics)

    def label(self) -> str:
        return f"{self.entry}<{', '.join(f'{k}={v}' for k, v in self.generics)}>"


@dataclass(frozen=True)
class Projection:
    """A projection's kernel: a GEMV (`gemv`, `gemv_swiglu`: one token per
    block row) or a tensor-core linear (`linear`, `linear_swiglu`: BM tokens), and its split-K
    factor."""

    spec: Spec
    splits: int = 1

    @property
    def rows(self) -> int:
        """Tokens per block (BM; 1 for a GEMV)."""
        return int(self.spec.generic_map.get("BM", "1"))

    @property
    def block_n(self) -> int:
        return int(self.spec.generic_map["BN"])

    @property
    def block_k(self) -> int:
        return int(self.spec.generic_map["BK"])

    def label(self) -> str:
        g = self.spec.generic_map
        shape = f"BM={g['BM']} " if "BM" in g else ""
        return (
            f"{self.spec.entry} {shape}BN={g['BN']} BK={g['BK']} LAT={g['LAT']} OCC={g['OCC']}"
            f" S={self.splits}"
        )


# (BN, BK, LAT, OCC) of the one-token GEMVs and (BM, BN, BK, LAT, OCC) of the tensor-core forms
GEMV_TILES = (("8", "512", "3", "4"), ("16", "512", "3", "2"), ("16", "256", "4", "4"))
GEMV_TILES_WIDE = (("32", "256", "3", "2"),)
# Measured on the H200 (2026-12-04) and dropped: a GEMV that issues the next weight tile before
# using this one (0.3-0.9 TB/s against ~3), and load latencies 5 and 6 (or 3 blocks per SM) on
# the 32x256 and 16x512 tiles (each 1-10% slower than latency 3). Also measured and dropped:
# the input add + RMSNorm computed inside the qkv GEMV by every block (12.8 µs a layer against
# 10.5 + 3.1 for the two kernels; Qwen3-4B at batch 1: 335.8 against 334.0 tokens/s)
LINEAR_TILES = {
    8: (("8", "64", "128", "3", "2"), ("8", "128", "64", "3", "1"), ("8", "64", "256", "3", "1")),
    64: (
        ("64", "64", "64", "3", "2"),
        ("64", "128", "64", "3", "1"),
        ("64", "64", "128", "3", "1"),
    ),
}
SWIGLU_GEMV_TILES = (("8", "512", "3", "4"), ("16", "256", "3", "4"), ("16", "512", "3", "2"))
SWIGLU_LINEAR_TILES = {
    8: (("8", "64", "128", "3", "2"), ("8", "128", "64", "3", "1")),
    64: (("64", "64", "64", "3", "2"), ("64", "128", "64", "3", "1")),
}


def linear_rows(batch: int) -> int:
    """BM of the tensor-core kernels for `batch` tokens: 8 up to 8 tokens, else 64."""
    return 8 if batch <= 8 else 64


def _gemv(entry: str, tiles: tuple[str, str, str, str], dtype: str, out: str | None) -> Spec:
    bn, bk, lat, occ = tiles
    generics = {"E": dtype} | ({"O": out} if out else {})
    return Spec.of(entry, generics | {"BN": bn, "BK": bk, "LAT": lat, "OCC": occ})


def _linear(entry: str, tiles: tuple[str, ...], dtype: str, out: str | None) -> Spec:
    bm, bn, bk, lat, occ = tiles
    generics = {"E": dtype} | ({"O": out} if out else {})
    return Spec.of(entry, generics | {"BM": bm, "BN": bn, "BK": bk, "LAT": lat, "OCC": occ})


def projection_specs(batch: int, dtype: str = "bf16", swiglu: bool = False) -> list[Spec]:
    """The candidate tilings of a projection for `batch` tokens (f32 split-K partials; the
    SwiGLU forms write `dtype` activations): tensor-core tiles, and for one token the GEMVs
    first (the last tensor-core tile, padded to BM = 8 tokens, stays a candidate)."""
    out = None if swiglu else "f32"
    suffix = "_swiglu" if swiglu else ""
    linear_tiles = (SWIGLU_LINEAR_TILES if swiglu else LINEAR_TILES)[linear_rows(batch)]
    linear = [_linear("linear" + suffix, t, dtype, out) for t in linear_tiles]
    if batch > 1:
        return linear
    gemv_tiles = SWIGLU_GEMV_TILES if swiglu else GEMV_TILES + GEMV_TILES_WIDE
    gemvs = [_gemv("gemv" + suffix, t, dtype, out) for t in gemv_tiles]
    return gemvs + linear[:1]


def split_choices(n: int, k: int, rows: int, block_n: int, block_k: int, batch: int) -> list[int]:
    """Split-K factors worth trying for an [n, k] weight: from 1 up to the factor that gives
    about four blocks per SM, each part keeping at least two K tiles."""
    blocks = -(-batch // rows) * -(-n // block_n)
    k_tiles = -(-k // block_k)
    choices = [1]
    splits = 2
    while splits * 2 <= k_tiles and blocks * splits <= 4 * H200_SMS:
        choices.append(splits)
        splits *= 2
    return choices


def projection_shape(model: ModelConfig, name: str) -> tuple[int, int]:
    """(N, K) of a projection's weight."""
    return {
        "qkv": (model.qkv_dim, model.hidden),
        "o": (model.hidden, model.q_dim),
        "gate_up": (model.intermediate, model.hidden),
        "down": (model.hidden, model.intermediate),
        "lm_head": (model.vocab, model.hidden),
    }[name]


def candidates(model: ModelConfig, name: str, batch: int, dtype: str) -> list[Projection]:
    """Every (tiling, split-K) candidate of projection `name` at `batch` tokens."""
    n, k = projection_shape(model, name)
    swiglu = name == "gate_up"
    found = []
    for spec in projection_specs(batch, dtype, swiglu=swiglu):
        probe = Projection(spec)
        splits = [1] if swiglu or name == "lm_head" else None
        for s in splits or split_choices(n, k, probe.rows, probe.block_n, probe.block_k, batch):
            found.append(Projection(spec, s))
    return found


def decode_splits(batch: int, kv_heads: int, cache_len: int, block_n: int) -> int:
    """Attention splits of a decode step: about two blocks per SM, at most one per key tile
    of the longest context the cache holds."""
    wanted = max(1, -(-2 * H200_SMS // (batch * kv_heads)))
    return max(1, min(pow2_at_least(wanted), cache_len // block_n))


def query_copies(group: int, tokens: int) -> int:
    """attention_partial's R: copies of its group * tokens query rows that make at least 8
    (fewer rows compile to scalar FFMA instead of wgmma)."""
    return max(1, 8 // (group * tokens))


def argmax_blocks(vocab: int) -> int:
    return -(-vocab // ARGMAX_BV)


def specializations(
    model: ModelConfig, batch: int, cache_len: int, dtype: str = "bf16", prefill: bool = True
) -> list[Spec]:
    """Every specialization a decoder of `model` at `batch` sequences and a KV cache of
    `cache_len` positions (a power of two) launches: decode always, prefill on request."""
    if cache_len != pow2_at_least(cache_len):
        raise ValueError(f"the KV cache length {cache_len} must be a power of two")
    hidden_tile = str(pow2_at_least(model.hidden))
    d, g = str(model.head_dim), str(model.group)
    shapes = {"G": g, "HKV": str(model.kv_heads)}
    specs = [
        Spec.of("embedding", {"E": dtype, "BD": str(EMBED_BD)}),
        Spec.of("rms_norm_hf", {"E": dtype, "HT": hidden_tile, "BK": str(NORM_BK)}),
        Spec.of("argmax_partial", {"BV": str(ARGMAX_BV)}),
        Spec.of(
            "greedy_step", {"B": str(batch), "NBP": str(pow2_at_least(argmax_blocks(model.vocab)))}
        ),
    ]
    # qkv_rope and the add + RMSNorm sum a projection's split-K partials in one load: one
    # specialization per split factor the tuner may choose (prefill chunks use one split)
    qkv_splits = _split_factors(model, ("qkv",), batch, dtype)
    for s in _split_factors(model, ("o", "down"), batch, dtype):
        specs.append(add_norm_spec(dtype, s, int(hidden_tile)))
    steps: list[tuple[int, Mapping[str, str], list[int]]] = [
        (1, t, qkv_splits) for t in DECODE_ATTENTION
    ]
    if prefill:
        steps.append((PREFILL_PT, PREFILL_ATTENTION, [1]))
    for pt, tiles, splits in steps:
        for s in splits:
            rope = {"E": dtype, "S": str(s), **shapes, "PT": str(pt), "SC": str(cache_len), "D": d}
            specs.append(Spec.of("qkv_rope", rope))
        copies = str(query_copies(model.group, pt))
        attention = {"E": dtype, "G": g, "PT": str(pt), "D": d, **tiles, "R": copies}
        specs.append(Spec.of("attention_partial", attention))
        specs.append(merge_spec(dtype, model.group, pt, model.head_dim))
    specs += projection_specs(batch, dtype) + projection_specs(batch, dtype, swiglu=True)
    return unique(specs)


def add_norm_spec(dtype: str, splits: int, hidden_tile: int) -> Spec:
    """The residual add + RMSNorm of `splits` partials: one tile per row where it fits."""
    if splits * hidden_tile <= NORM_ROW_ELEMENTS:
        row = {"E": dtype, "S": str(splits), "HT": str(hidden_tile)}
        return Spec.of("add_rms_norm_row", row)
    loop = {"E": dtype, "S": str(splits), "HT": str(hidden_tile), "BK": str(NORM_BK)}
    return Spec.of("add_rms_norm_hf", loop)


def merge_spec(dtype: str, group: int, tokens: int, head_dim: int) -> Spec:
    """attention_merge for `tokens` query tokens of `group` heads: the largest power-of-two
    chunk of splits whose partials stay within MERGE_CHUNK_ELEMENTS (at least one split)."""
    chunk = 1
    while 2 * chunk * tokens * group * head_dim <= MERGE_CHUNK_ELEMENTS:
        chunk *= 2
    shape = {"E": dtype, "G": str(group), "PT": str(tokens), "D": str(head_dim)}
    return Spec.of("attention_merge", {**shape, "SPC": str(chunk)})


def _split_factors(model: ModelConfig, names: Iterable[str], batch: int, dtype: str) -> list[int]:
    """Every split-K factor the tuner may choose for these projections, and 1 (prefill)."""
    return sorted({1} | {c.splits for n in names for c in candidates(model, n, batch, dtype)})


def unique(specs: Iterable[Spec]) -> list[Spec]:
    return list(dict.fromkeys(specs))


# ---- the f16 decoder: cutile-kernels' Qwen3 kernels, unchanged, where they fit -------------

# split-K decode attention of cutile-kernels: key tile, splits, merge chunk of D, load latency
CUTILE_ATTENTION = {"BN": "64", "NUM_KV_SPLITS": "16", "CHUNK_D": "32", "LATENCY": "2"}
CUTILE_ARGMAX_BLOCK = 4096  # argmax_reduce_blocks_to_u32 reduces up to this many blocks
LM_HEAD_ROWS = 64  # lm_head_argmax_blocks_f16 handles 64 vocabulary rows per block
F16_GEMV = ("8", "512", "3", "4")  # (BN, BK, LAT, OCC) of our f16 projections


@dataclass(frozen=True)
class CutileSpec:
    """A kernel of cutile-rs's cutile-kernels crate: its file (relative to the checkout),
    module, function and generics."""

    path: str
    module: str
    function: str
    generics: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, path: str, module: str, function: str, generics: Mapping[str, str]) -> CutileSpec:
        return cls(path, module, function, tuple((k, str(v)) for k, v in generics.items()))

    @property
    def generic_map(self) -> dict[str, str]:
        return dict(self.generics)

    @property
    def entry(self) -> str:
        return f"{self.module}::{self.function}"

    def cli(self) -> str:
        return f"{self.entry}:" + ",".join(f"{k}={v}" for k, v in self.generics)

    def label(self) -> str:
        return f"{self.function}<{', '.join(f'{k}={v}' for k, v in self.generics)}>"


CUTILE_SRC = "cutile-kernels/src/"


def cutile_specializations(model: ModelConfig, cache_len: int) -> list[CutileSpec]:
    """The cutile-kernels specializations of the f16 decoder (batch 1)."""
    d, g = model.head_dim, model.group
    a = CUTILE_ATTENTION
    splits = int(a["NUM_KV_SPLITS"])
    return [
        CutileSpec.of(
            CUTILE_SRC + "embeddings.rs",
            "embedding_batch_f16_module",
            "embedding_batch_f16",
            {"D": model.hidden, "BLOCK_SIZE": EMBED_BD},
        ),
        CutileSpec.of(
            CUTILE_SRC + "norms.rs", "qk_norm_f16_module", "qk_norm_f16", {"N": d, "BLOCK_SIZE": d}
        ),
        CutileSpec.of(
            CUTILE_SRC + "positional.rs",
            "qk_rope_dynpos_f16_module",
            "qk_rope_dynpos_f16",
            {"D": d, "HALF_D": d // 2, "LATENCY": a["LATENCY"]},
        ),
        CutileSpec.of(
            CUTILE_SRC + "kv_cache.rs",
            "kv_cache_update_seq_dynpos_f16_module",
            "kv_cache_update_seq_dynpos_f16",
            {"D": d, "BLOCK_SIZE": d, "MAX_SEQ": cache_len},
        ),
        CutileSpec.of(
            CUTILE_SRC + "attention.rs",
            "fmha_decode_gqa_split_module",
            "fmha_decode_gqa_split",
            {"GROUP": g, "BN": a["BN"], "D": d, "NUM_KV_SPLITS": splits, "LATENCY": a["LATENCY"]},
        ),
        CutileSpec.of(
            CUTILE_SRC + "attention.rs",
            "splitk_reduce_merge_module",
            "splitk_reduce_merge",
            {
                "GROUP": g,
                "D": d,
                "CHUNK_D": a["CHUNK_D"],
                "NUM_KV_SPLITS": splits,
                "NS_GROUP": splits * g,
                "LATENCY": a["LATENCY"],
            },
        ),
        CutileSpec.of(
            CUTILE_SRC + "pointwise.rs",
            "silu_mul_2d_f16_module",
            "silu_mul_2d_f16",
            {"BLOCK_SIZE": 1024},
        ),
        CutileSpec.of(
            CUTILE_SRC + "argmax.rs",
            "lm_head_argmax_blocks_f16_module",
            "lm_head_argmax_blocks_f16",
            {"K": model.hidden},
        ),
        CutileSpec.of(
            CUTILE_SRC + "argmax.rs",
            "argmax_reduce_blocks_to_u32_module",
            "argmax_reduce_blocks_to_u32",
            {"BLOCK_SIZE": CUTILE_ARGMAX_BLOCK},
        ),
    ]


def f16_specializations(model: ModelConfig) -> list[Spec]:
    """Our kernels in the f16 decoder: the RMSNorms (cutile-kernels' take the hidden size as
    their output tile, which is no power of two for Qwen3), the projections (cutile-kernels
    has none: Grout calls cuBLAS) and the position step."""
    hidden_tile = str(pow2_at_least(model.hidden))
    norm = {"E": "f16", "HT": hidden_tile, "BK": str(NORM_BK)}
    return [
        Spec.of("rms_norm_hf", norm),
        Spec.of("add_rms_norm_hf", {"E": "f16", "S": "1", "HT": hidden_tile, "BK": str(NORM_BK)}),
        _gemv("gemv", F16_GEMV, "f16", "f16"),
        _gemv("gemv", F16_GEMV, "f16", "f32"),
        Spec.of("advance_position", {}),
    ]
