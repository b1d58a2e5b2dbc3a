"""`lowering.branch_loads`: a view load under an `if` inside a loop that may repeat is
hinted off TMA (tileiras hangs on such TMA loads when the branch is skipped on some
iteration); loads in a loop without a branch, in a branch without a loop, and in a loop of
at most one iteration keep the assembler's choice, and a latency hint stays."""

from __future__ import annotations

import pytest

from lowering.ir.attributes import LoadStoreHints
from lowering.ir.core import walk
from lowering.ir.ops_memory import LoadViewTko
from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser.render import render
from parser.spans import SourceFile

OFF = LoadStoreHints("default", allow_tma=False)


def kernel(body: str) -> str:
    return f"""
#[cutile::module]
mod k {{
    use cutile::core::*;
    #[cutile::entry()]
    fn f<const PT: i32>(
        out: &mut Tensor<f32, {{ [1, 64] }}>,
        x: &Tensor<f32, {{ [-1, 64] }}>,
        n: i32,
    ) {{
        let xp = x.partition(const_shape![1, 64]);
        let mut acc: Tile<f32, {{ [1, 64] }}> = constant(0.0f32, const_shape![1, 64]);
        {body}
        out.store(acc);
    }}
}}
"""


def load_hints(body: str, pt: int = 16) -> list[tuple[LoadStoreHints, ...]]:
    request = CompileRequest((SourceFile("k.rs", kernel(body)),), "f", (("PT", str(pt)),))
    result = compile_kernel(request, stop_after=Stage.IR)
    assert result.ok, [render(d) for d in result.diagnostics]
    assert result.ir is not None
    return [op.hints for op in walk(result.ir.functions[0].body) if isinstance(op, LoadViewTko)]


BRANCH_IN_LOOP = "for p in 0i32..PT { if p < n { acc = acc + xp.load([p, 0i32]); } }"


@pytest.mark.parametrize(
    "body",
    [
        BRANCH_IN_LOOP,
        "for p in 0i32..n { if p % 2i32 == 0i32 { acc = acc + xp.load([p, 0i32]); } }",
        # the branch two levels down, under an inner loop
        "for q in 0i32..n { if q < 2i32 { for p in 0i32..q { acc = acc + xp.load([p, 0i32]); } } }",
    ],
    ids=["constant-trip", "runtime-trip", "inner-loop-under-branch"],
)
def test_a_load_under_a_branch_in_a_loop_is_kept_off_tma(body: str) -> None:
    assert load_hints(body) == [(OFF,)]


@pytest.mark.parametrize(
    "body",
    [
        "for p in 0i32..n { acc = acc + xp.load([p, 0i32]); }",
        "if n > 0i32 { acc = acc + xp.load([0i32, 0i32]); }",
        "if n > 0i32 { for p in 0i32..n { acc = acc + xp.load([p, 0i32]); } }",
    ],
    ids=["loop-only", "branch-only", "loop-under-branch"],
)
def test_other_loads_keep_the_assemblers_choice(body: str) -> None:
    assert load_hints(body) == [()]


def test_a_loop_of_one_iteration_is_no_loop() -> None:
    """decode's `for p in 0..PT` at PT = 1: no other iteration to skip the branch in."""
    assert load_hints(BRANCH_IN_LOOP, pt=1) == [()]
    assert load_hints(BRANCH_IN_LOOP, pt=2) == [(OFF,)]


def test_a_latency_hint_stays_with_tma_ruled_out() -> None:
    body = "for p in 0i32..n { if p < PT { acc = acc + xp.load_pipelined::<3>([p, 0i32]); } }"
    assert load_hints(body) == [(LoadStoreHints("default", latency=3, allow_tma=False),)]
