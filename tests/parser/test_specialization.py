"""Request facts (`TensorFacts`) become entry preconditions: assume ops and contract
assumptions; view facts (base alignment, last stride) relax the default views; facts that do
not fit the entry are CT0104."""

from __future__ import annotations

from lowering.contract import Assumption, AssumptionKind
from lowering.ir.attributes import DivBy
from lowering.ir.core import walk
from lowering.ir.ops_core import Assume
from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser import codes
from parser.preconditions import ExtentDivisible, StrideDivisible
from parser.spans import SourceFile
from parser.specialization import TensorFacts, ViewLayout, view_layouts
from tests.lowering.kernels import compile_example

GEMM = {"E": "f16", "BM": "128", "BN": "128", "BK": "64"}


def _gemm(*facts: TensorFacts, stop_after: Stage = Stage.IR):  # type: ignore[no-untyped-def]
    return compile_example("gemm.rs", "gemm", GEMM, stop_after, specialization=facts)


def _divisors(result) -> list[int]:  # type: ignore[no-untyped-def]
    body = result.ir.functions[0].body
    return [
        op.predicate.divisor
        for op in walk(body)
        if isinstance(op, Assume) and isinstance(op.predicate, DivBy)
    ]


def test_facts_become_preconditions_and_assumes() -> None:
    plain = _gemm()
    facts = TensorFacts("x", (16, 8), (8, 1))
    special = _gemm(facts)
    assert plain.ok and special.ok, special.diagnostics
    assert plain.kernel.signature.options.preconditions == ()
    x = 1
    assert special.kernel.signature.options.preconditions == (
        ExtentDivisible(x, 0, 16, "request facts for `x`"),
        ExtentDivisible(x, 1, 8, "request facts for `x`"),
        StrideDivisible(x, 0, 8, "request facts for `x`"),
    )  # a divisor of 1 says nothing
    assert sorted(_divisors(special)) == sorted([*_divisors(plain), 16, 8, 8])


def test_facts_reach_the_contract(tileiras) -> None:
    result = _gemm(TensorFacts("y", (), (16, 1)), stop_after=Stage.CUBIN)
    assert result.ok, result.diagnostics
    assert Assumption(2, AssumptionKind.STRIDE_DIV, 0, 16) in result.contract.assumptions


def test_facts_that_can_never_hold_are_rejected() -> None:
    result = _gemm(TensorFacts("x", (), (8, 8)))  # the last stride is always 1
    assert [d.code for d in result.diagnostics] == [codes.INVALID_SPECIALIZATION]
    assert "last axis's stride is always 1" in result.diagnostics[0].message


def test_facts_that_do_not_fit_are_rejected() -> None:
    result = _gemm(TensorFacts("w", (16,)), TensorFacts("x", (16,), ()))
    assert not result.ok
    assert [d.code for d in result.diagnostics] == [codes.INVALID_SPECIALIZATION] * 2
    messages = [d.message for d in result.diagnostics]
    assert "no tensor parameter `w` in `gemm`" in messages[0]
    assert "facts for `x` must give 0 or 2 axes" in messages[1]


def test_view_facts_relax_the_default_layout_of_their_tensor_only() -> None:
    facts = (
        TensorFacts("x", base_align=4, unit_last_stride=False),
        TensorFacts("y", (16, 8)),
    )
    result = _gemm(*facts, stop_after=Stage.CHECK)
    assert result.ok, result.diagnostics
    assert view_layouts(result.kernel, facts) == {
        1: ViewLayout(base_align=4, unit_last_stride=False),
        2: ViewLayout(),  # the default: 16-byte aligned, unit last stride
    }
    assert ViewLayout() == ViewLayout(16, True)


def test_a_strided_last_axis_may_carry_a_stride_divisor() -> None:
    result = _gemm(TensorFacts("x", (), (8, 2), unit_last_stride=False), stop_after=Stage.CHECK)
    assert result.ok, result.diagnostics
    assert StrideDivisible(1, 1, 2, "request facts for `x`") in (
        result.kernel.signature.options.preconditions
    )


def test_bad_alignments_are_rejected() -> None:
    for align, reason in (
        (3, "base alignment 3 is not a power of two up to 16"),
        (32, "base alignment 32 is not a power of two up to 16"),
        (0, "base alignment 0 is not a power of two up to 16"),
        (1, "base alignment 1 is below the element size (2 bytes)"),  # gemm's E is f16
    ):
        result = _gemm(TensorFacts("x", base_align=align))
        assert [d.code for d in result.diagnostics] == [codes.INVALID_SPECIALIZATION]
        assert f"facts for `x`: {reason}" in result.diagnostics[0].message
    assert _gemm(TensorFacts("x", base_align=2)).ok


_CAPPED = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry(optimization_hints = (
        sm_90 = (max_divisibility = 4,), sm_100 = (occupancy = 1,)
    ))]
    fn f<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        z.store(load_tile_like(x, z));
    }
}
"""


def _capped(arch: str, *facts: TensorFacts):  # type: ignore[no-untyped-def]
    request = CompileRequest(
        (SourceFile("k.rs", _CAPPED),), "f", (("B", "128"),), arch=arch, specialization=facts
    )
    return compile_kernel(request, stop_after=Stage.IR)


def test_max_divisibility_caps_facts_and_the_default_alignment_on_its_target() -> None:
    facts = TensorFacts("x", (16,), (1,))
    capped = _capped("sm_90", facts)
    assert capped.ok, capped.diagnostics
    assert capped.kernel.signature.options.preconditions == (
        ExtentDivisible(1, 0, 4, "request facts for `x`"),
    )
    assert sorted(_divisors(capped)) == [4, 4, 4]  # x's extent, both base addresses
    elsewhere = _capped("sm_100", facts)  # the hint is for sm_90 only
    assert elsewhere.ok, elsewhere.diagnostics
    assert sorted(_divisors(elsewhere)) == [16, 16, 16]
