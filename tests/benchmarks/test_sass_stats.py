"""`tests.benchmarks.sass_stats`: the counts read from cuobjdump's text, and the machine-code
facts the compiler relies on for speed, checked on real cubins from tileiras: a persistent
f16 GEMM whose accumulator `lowering.widen_accumulators` carries in f32 keeps its wgmmas in
flight, while the exact f16 accumulator waits after every one."""

from __future__ import annotations

from pathlib import Path

import pytest

from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser.render import render
from parser.spans import SourceFile
from parser.specialization import TensorFacts
from tests.benchmarks.sass_stats import find_cuobjdump, main, stats, stats_of_text
from tests.lowering.test_widen_accumulators import ZERO, gemm

SASS = """
        /*0970*/                   WARPGROUP.ARRIVE ;                 /* 0x00000000000079c5 */
                                                                      /* 0x000fe20000000000 */
        /*0980*/                   HGMMA.64x128x16.F16 R24, gdesc[UR4].tnspB, RZ, !UPT, gsb0 ;
        /*0990*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;    /* 0x00008000000079c5 */
        /*09a0*/                   QGMMA.64x128x32.F32.E4M3.E4M3 R88, gdesc[UR8], R88 ;
        /*09b0*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;    /* 0x00008000000079c5 */
        /*09c0*/                   LDL.LU R246, [R1+0x1c] ;           /* 0x00001c0001f67983 */
        /*09d0*/                   STL [R1+0x4], R245 ;               /* 0x000004f501007387 */
        /*09e0*/                   UTMALDG.2D [UR16], [UR6], desc[URZ] ;
        /*09f0*/                   LDG.E.U16 R3, desc[UR4][R4.64] ;
        /*0a00*/                   LDGSTS.E.128 [R5], desc[UR4][R6.64] ;
"""
RESOURCES = "Function f_1234:\n REG:168 STACK:0 SHARED:230576 LOCAL:0 CONSTANT[0]:600 TEXTURE:0"


def test_counts_from_text() -> None:
    s = stats_of_text("k.cubin", 1000, SASS, RESOURCES)
    assert (s.registers, s.shared, s.spills) == (168, 230576, 2)
    assert (s.wgmma, s.wgmma_full_waits, s.tma_loads, s.global_loads) == (2, 1, 1, 1)
    assert s.wgmma_kinds == ("HGMMA.64x128x16.F16", "QGMMA.64x128x32.F32.E4M3.E4M3")


def test_an_empty_dump_counts_nothing() -> None:
    s = stats_of_text("k.cubin", 0, "", "")
    assert (s.registers, s.wgmma, s.spills, s.wgmma_kinds) == (0, 0, 0, ())


def _tma_gemm_cubin(exact: bool, early_launch: bool = False) -> bytes:
    """The persistent f16 GEMM with the facts that give it TMA loads (its fast variant)."""
    facts = tuple(TensorFacts(p, (16, 16), (16, 1)) for p in ("x", "y", "z"))
    request = CompileRequest(
        (SourceFile("k.rs", gemm("f16", ZERO)),),
        "f",
        (("BM", "128"), ("BN", "128"), ("BK", "64")),
        specialization=facts,
        exact_accumulators=exact,
        early_launch=early_launch,
    )
    result = compile_kernel(request, stop_after=Stage.CUBIN)
    assert result.ok and result.cubin, [render(d) for d in result.diagnostics]
    return result.cubin


@pytest.mark.tileiras
def test_a_widened_persistent_gemm_keeps_its_wgmmas_in_flight(tileiras, tmp_path: Path) -> None:
    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        pytest.skip("cuobjdump not installed")
    found = {}
    for exact in (False, True):
        path = tmp_path / f"exact_{exact}.cubin"
        path.write_bytes(_tma_gemm_cubin(exact))
        found[exact] = stats(path, cuobjdump)
    wide, exact = found[False], found[True]
    assert wide.tma_loads and exact.tma_loads
    assert all(kind.endswith(".F32") for kind in wide.wgmma_kinds)
    assert all(kind.endswith(".F16") for kind in exact.wgmma_kinds)
    # tileiras 13.5: a wait after every f16 wgmma, against a handful with f32
    assert exact.wgmma_full_waits >= exact.wgmma // 2
    assert wide.wgmma_full_waits * 4 <= exact.wgmma_full_waits
    assert wide.spills == 0


@pytest.mark.tileiras
def test_the_command_prints_a_row_per_cubin(tileiras, tmp_path: Path, capsys) -> None:
    if find_cuobjdump() is None:
        pytest.skip("cuobjdump not installed")
    (tmp_path / "gemm.cubin").write_bytes(_tma_gemm_cubin(False))
    assert main([str(tmp_path)]) == 0
    header, row = capsys.readouterr().out.splitlines()
    assert header.split()[:3] == ["cubin", "bytes", "regs"]
    assert row.startswith("gemm.cubin ") and "HGMMA" in row


@pytest.mark.tileiras
def test_an_early_launched_gemm_compiles_like_the_plain_one(tileiras, tmp_path: Path) -> None:
    """With the grid-dependency trigger after its tensor-core loop tileiras spilled the
    accumulators (lowering/grid_dependency.py keeps it first in such an entry)."""
    cuobjdump = find_cuobjdump()
    if cuobjdump is None:
        pytest.skip("cuobjdump not installed")
    found = []
    for early in (False, True):
        path = tmp_path / f"early_{early}.cubin"
        path.write_bytes(_tma_gemm_cubin(False, early_launch=early))
        found.append(stats(path, cuobjdump))
    plain, early = found
    assert early.spills == plain.spills == 0
    assert early.wgmma_full_waits == plain.wgmma_full_waits


def test_the_cta_size_comes_from_the_elf_dump() -> None:
    elf = "\tAttribute:\tEIATTR_REQNTID\n\tFormat:\tEIFMT_SVAL\n\tValue:\t0x100 0x1 0x1 \n"
    assert stats_of_text("k.cubin", 0, SASS, RESOURCES, elf).threads == 256
    assert stats_of_text("k.cubin", 0, SASS, RESOURCES).threads == 0
    assert stats_of_text("k.cubin", 0, SASS, RESOURCES).mma_sync == 0
