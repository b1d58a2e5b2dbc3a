"""tests/benchmarks/decode/kernels.py, build.py and the checks bench.py makes before touching the
GPU: every specialization the decoder asks for binds an entry of rust_examples/decoder.rs
(or of a cutile-rs checkout's cutile-kernels) through the front end, the build splits them
into cutile-compile jobs, and a bundle that lacks any is refused by name."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser.render import render_all
from parser.spans import SourceFile
from rust_examples.catalog import EXAMPLES
from tests.benchmarks.decode import bench, build
from tests.benchmarks.decode import kernels as K
from tests.benchmarks.decode.config import QWEN3_4B, QWEN3_32B

CUTILE_RS = Path(os.environ.get("CUTILE_RS", "/work/cutile-rs"))
DECODER = SourceFile("rust_examples/decoder.rs", (EXAMPLES / K.SOURCE).read_text())


def _checks(source: SourceFile, entry: str, generics: tuple[tuple[str, str], ...]) -> None:
    request = CompileRequest((source,), entry, generics)
    result = compile_kernel(request, stop_after=Stage.CHECK)
    assert result.ok, render_all(result.diagnostics)


def test_every_bundled_specialization_binds_its_entry() -> None:
    specs = build.bundle_specs() + build.f16_specs()[0]
    assert len(specs) == len(set(specs))
    for spec in specs:
        _checks(DECODER, spec.entry, spec.generics)


@pytest.mark.skipif(not (CUTILE_RS / K.CUTILE_SRC).is_dir(), reason="no cutile-rs checkout")
def test_cutile_kernels_specializations_bind_their_unchanged_entries() -> None:
    for spec in build.f16_specs()[1]:
        source = SourceFile(spec.path, (CUTILE_RS / spec.path).read_text())
        _checks(source, spec.entry, spec.generics)


def test_the_decode_specializations_follow_the_model_and_the_cache() -> None:
    specs = {s.label() for s in K.specializations(QWEN3_32B, 1, 1024, prefill=False)}
    assert "qkv_rope<E=bf16, S=1, G=8, HKV=8, PT=1, SC=1024, D=128>" in specs
    assert "qkv_rope<E=bf16, S=2, G=8, HKV=8, PT=1, SC=1024, D=128>" in specs  # qkv's splits
    assert "rms_norm_hf<E=bf16, HT=8192, BK=512>" in specs
    # 8 query rows for wgmma: Qwen3-32B's 8 heads a group need no copies, Qwen3-4B's 4 two
    assert "attention_partial<E=bf16, G=8, PT=1, D=128, BN=64, LAT=3, OCC=2, R=1>" in specs
    assert (K.query_copies(4, 1), K.query_copies(8, 1), K.query_copies(4, 16)) == (2, 1, 1)
    assert not any("PT=16" in s for s in specs)  # no prefill specializations
    with pytest.raises(ValueError, match="power of two"):
        K.specializations(QWEN3_4B, 1, 1000)
    # one token: GEMVs first; a batch: tensor-core tiles of BM = 8 or 64
    assert K.projection_specs(1)[0].entry == "gemv"
    assert {s.entry for s in K.projection_specs(1, swiglu=True)} >= {"gemv_swiglu"}
    assert {s.generic_map["BM"] for s in K.projection_specs(8)} == {"8"}
    assert {s.generic_map["BM"] for s in K.projection_specs(64, swiglu=True)} == {"64"}


def test_split_k_and_attention_splits_fill_the_gpu_without_starving_a_part() -> None:
    # o_proj of Qwen3-4B at one token: 2560 rows in blocks of 8, K 4096 in tiles of 512
    assert K.split_choices(2560, 4096, 1, 8, 512, 1) == [1]  # 320 blocks x 2 > 4 per SM
    # batch 8 in BM = 8 rows, 64-row tiles: 40 blocks; 16 parts would pass four per SM
    assert K.split_choices(2560, 4096, 8, 64, 128, 8) == [1, 2, 4, 8]
    assert K.decode_splits(1, 8, 1024, 64) == 16  # wants 33, capped by the 16 key tiles
    assert K.decode_splits(1, 8, 8192, 64) == 64
    assert K.decode_splits(64, 8, 8192, 64) == 1


def test_build_jobs_cover_every_specialization(tmp_path: Path) -> None:
    work = build.jobs_for(None, 2)
    assert [source for source, _ in work] == [build.SOURCE, build.SOURCE]
    assert sorted(s.label() for _, specs in work for s in specs) == sorted(
        s.label() for s in build.bundle_specs()
    )
    argv = build.job_argv(work[0][1], tmp_path)
    assert argv[0] == str(build.SOURCE) and argv[-4:] == ["--arch", "sm_90", "-o", str(tmp_path)]
    assert f"{work[0][1][0].entry}:" in argv[argv.index("--generics") + 1]
    if (CUTILE_RS / K.CUTILE_SRC).is_dir():
        files = {source.name for source, _ in build.jobs_for(CUTILE_RS, 2)[2:]}
        assert {"attention.rs", "argmax.rs", "norms.rs", "positional.rs"} <= files


def test_merge_writes_one_manifest_for_all_parts(tmp_path: Path) -> None:
    parts = []
    for i in range(2):
        part = tmp_path / f".part{i}"
        part.mkdir()
        (part / f"k{i}.cubin").write_bytes(b"x")
        (part / "manifest.json").write_text(json.dumps({"schema": 1, "kernels": [{"n": i}]}))
        parts.append(part)
    assert build.merge(parts, tmp_path) == 2
    assert json.loads((tmp_path / "manifest.json").read_text())["kernels"] == [{"n": 0}, {"n": 1}]
    assert (tmp_path / "k1.cubin").exists() and not parts[0].exists()


def test_a_bundle_without_the_decoders_kernels_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text(json.dumps({"schema": 1, "kernels": []}))
    runs = [bench.Run.parse("4b:1:1024")]
    needed = len(bench.required_specs("speed", runs))
    with pytest.raises(SystemExit, match=rf"lacks {needed} kernels, e\.g\. \['embedding<E=bf16"):
        bench.check_bundle(tmp_path, bench.required_specs("speed", runs))
    with pytest.raises(SystemExit, match=r"lacks 14 kernels, e\.g\. \[.rms_norm_hf<E=f16"):
        bench.check_bundle(tmp_path, bench.required_specs("correctness", runs, f16=True))


def test_runs_parse_and_refuse_what_cannot_run() -> None:
    assert bench.Run.parse("32b:1:1024") == bench.Run("32b", 1, 1024)
    for bad, why in (
        ("4b:1", "MODEL:BATCH:CONTEXT"),
        ("7b:1:1024", "unknown model"),
        ("4b:1:1000", "power of two"),
    ):
        with pytest.raises(SystemExit, match=why):
            bench.Run.parse(bad)


def test_the_add_norm_holds_a_whole_row_where_its_partials_fit() -> None:
    """add_rms_norm_row keeps [S, 1, HT] f32 partials in registers: up to
    NORM_ROW_ELEMENTS; past it the tile loop of add_rms_norm_hf."""
    assert K.add_norm_spec("bf16", 4, 4096) == K.Spec.of(
        "add_rms_norm_row", {"E": "bf16", "S": "4", "HT": "4096"}
    )
    assert K.add_norm_spec("bf16", 8, 4096).entry == "add_rms_norm_hf"
    assert K.add_norm_spec("bf16", 2, 8192).entry == "add_rms_norm_row"
    assert K.add_norm_spec("bf16", 4, 8192).generic_map == {
        "E": "bf16",
        "S": "4",
        "HT": "8192",
        "BK": str(K.NORM_BK),
    }


@pytest.mark.parametrize(
    ("group", "tokens", "chunk"),
    [(4, 1, 32), (8, 1, 16), (4, 16, 2), (8, 16, 1)],
    ids=["4b-decode", "32b-decode", "4b-prefill", "32b-prefill"],
)
def test_the_merge_reads_as_many_splits_as_fit_its_chunk(
    group: int, tokens: int, chunk: int
) -> None:
    spec = K.merge_spec("bf16", group, tokens, 128)
    assert spec.entry == "attention_merge" and spec.generic_map["SPC"] == str(chunk)
    assert chunk * group * tokens * 128 <= max(K.MERGE_CHUNK_ELEMENTS, group * tokens * 128)
