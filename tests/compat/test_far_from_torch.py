"""The far-from-torch section: which rows it explains, and what each piece of evidence says."""

from __future__ import annotations

import pytest

from tests.benchmarks.sass_stats import SassStats
from tests.client_stubs.conftest import add_contract
from tests.compat import far_from_torch
from tests.compat.discover import EntrySite
from tests.compat.far_from_torch import (
    Evidence,
    OutputTile,
    Run,
    causes,
    output_tile,
    resident_blocks,
    section,
)
from tests.compat.result import Result
from tests.compat.table import Case

SITE = EntrySite("examples", "cutile-examples/examples/add.rs", "adder", "add", 1)
KEY = "cutile-examples/examples/add.rs::add"


def machine(spills: int = 0, registers: int = 32) -> SassStats:
    return SassStats("k", 1000, registers, 0, spills, 0, 0, 0, 4)


def run(speed: float | None = 0.5, blocks: int | None = None, spills: int = 0) -> Run:
    return Run(speed, "pass", blocks, machine(spills))


def test_each_cause_is_named_with_its_numbers() -> None:
    evidence = Evidence(OutputTile((2,), "f32"), run(blocks=2_000_000, spills=12), None)
    assert causes(evidence) == [
        "register spills: 12 local-memory instructions at 32 registers a thread",
        "small tiles: each tile block writes 8 B",
        "2,000,000 tile blocks to schedule",
    ]


def test_a_grid_smaller_than_the_gpu_is_named() -> None:
    evidence = Evidence(OutputTile((1024,), "f32"), run(blocks=4), None)
    assert causes(evidence) == ["4 tile block(s): most of the GPU's 132 SMs idle"]


def test_the_control_tells_the_tile_choice_from_the_kernel() -> None:
    tile = OutputTile((64, 64), "f32")
    fast = Evidence(tile, run(), Run(1.1, "pass", 10, None), "BM=128")
    slow = Evidence(tile, run(), Run(0.4, "pass", 10, None), "BM=128")
    wrong = Evidence(tile, run(), Run(1.1, "FAIL (z: 1 > 0)", 10, None), "BM=128")
    assert causes(fast)[-1] == (
        "the same source at BM=128 runs at 1.10x torch: the host code's tile choice, "
        "not the compiler"
    )
    assert causes(slow)[-1] == (
        "still 0.40x torch at BM=128: not the tile choice "
        "(the code the compiler and tileiras make of it)"
    )
    assert causes(wrong) == ["not explained yet"]  # a failing control proves nothing


def test_output_tile_reads_the_first_output_of_the_contract() -> None:
    tile = output_tile(add_contract(block=256).SerializeToString())
    assert tile == OutputTile((256,), "f32")
    assert (tile.elements, tile.bytes, str(tile)) == (256, 1024, "[256] f32 (1,024 B)")


@pytest.fixture
def no_cuobjdump(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(far_from_torch, "find_cuobjdump", lambda: None)


def result(generics: str, control: bool = False) -> Result:
    case = Case(SITE, (("S", generics),), "sm_90", "compile", label="@tuned" if control else "")
    if control:
        case = Case(SITE, case.generics, "sm_90", "compile", label="@tuned", control=True)
    builds = ((b"cubin", add_contract(block=int(generics.strip("[]"))).SerializeToString()),)
    return Result(case, True, (), 5, builds)


def test_only_launched_rows_under_the_threshold_are_explained(no_cuobjdump: None) -> None:
    rows = [result("[128]"), result("[1024]", control=True)]
    fast = {KEY: {"verdict": "pass", "speed_vs_torch": 0.95}}
    unmeasured = {KEY: {"verdict": "pass"}}
    assert section(rows, fast) == []
    assert section(rows, unmeasured) == []
    slow = {
        KEY: {
            "verdict": "pass",
            "speed_vs_torch": 0.25,
            "grid": [32768, 1, 1],
            "tuned": {"verdict": "pass", "speed_vs_torch": 0.97},
        }
    }
    lines = section(rows, slow)
    assert lines[0] == "## Far from torch, and why"
    (row,) = (line for line in lines if line.startswith("| `add.rs`"))
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[:6] == ["`add.rs` `add`", "S=[128]", "0.25x", "[128] f32 (512 B)", "32,768", "-"]
    assert cells[8:10] == ["S=[1024]", "0.97x"]
    assert cells[10].startswith("small tiles: each tile block writes 512 B; the same source")


def test_resident_blocks_follow_the_tightest_sm_limit() -> None:
    def with_(registers: int, threads: int, shared: int = 0) -> SassStats:
        return SassStats("k", 1, registers, shared, 0, 0, 0, 0, 0, threads=threads)

    assert resident_blocks(with_(255, 256)) == 1  # 256 x 256 registers: the whole file
    assert resident_blocks(with_(10, 128)) == 16  # threads: 2048 / 128
    assert resident_blocks(with_(10, 32)) == 32  # the block limit
    assert resident_blocks(with_(32, 128, shared=100_000)) == 2  # shared memory
    assert resident_blocks(with_(32, 0)) is None  # no CTA size read
    few = Evidence(None, Run(0.3, "pass", None, with_(255, 256, 33160)), None)
    assert causes(few) == [
        "1 tile block(s) per SM at a time: 256 threads of 255 registers, 33,160 B shared"
    ]
