"""The `optimization_hints = (sm_NN = (key = value, ...), ...)` entry option."""

from __future__ import annotations

from parser import codes
from parser.optimization_hints import ArchHints
from tests.parser.test_entry_signature import signature

SIG = "z: &mut Tensor<f32, { [128] }>, x: &Tensor<f32, { [-1] }>"
MAPPED = "mut z: MappedPartitionMut<f32, { [128] }, { [1] }>, x: &Tensor<f32, { [-1] }>"


def _hints(text: str, generics: dict | None = None, sig: str = SIG) -> tuple:
    attr = f"#[cutile::entry(optimization_hints = {text})]"
    return signature(sig, attr=attr, generics=generics)


def test_hints_per_architecture_are_parsed() -> None:
    result, diagnostics, _ = _hints(
        "(sm_90 = (num_cta_in_cga = 2, occupancy = 1), sm_100 = (num_worker_warps_per_cta = 8,))",
        sig=MAPPED,
    )
    assert diagnostics == [] and result is not None
    assert result.options.optimization_hints == (
        ArchHints("sm_90", num_cta_in_cga=2, occupancy=1),
        ArchHints("sm_100", num_worker_warps_per_cta=8),
    )


def test_one_architecture_and_one_hint_need_no_tuples() -> None:
    result, diagnostics, _ = _hints("(sm_90 = (occupancy = 2))")
    assert diagnostics == [] and result is not None
    assert result.options.optimization_hints == (ArchHints("sm_90", occupancy=2),)


def test_a_const_generic_value_is_evaluated() -> None:
    result, diagnostics, _ = _hints("(sm_90 = (occupancy = B))", generics={"B": 4})
    assert diagnostics == [] and result is not None
    assert result.options.optimization_hints == (ArchHints("sm_90", occupancy=4),)


def test_without_the_option_there_are_none() -> None:
    result, diagnostics, _ = signature(SIG)
    assert diagnostics == [] and result is not None
    assert result.options.optimization_hints == ()


def test_bad_hints_are_reported_each_at_its_own_span() -> None:
    bad = {
        "sm_91 = (occupancy = 1)": "sm_91",  # not an architecture tileiras knows
        "sm_90 = (occupancy = 33)": "33",
        "sm_90 = (occupancy = 0)": "0",
        "sm_100 = (num_cta_in_cga = 3)": "3",  # not a power of two
        "sm_90 = (num_cta_in_cga = 32)": "32",
        "sm_80 = (num_cta_in_cga = 2)": "2",  # no clusters before sm_90
        "sm_89 = (num_worker_warps_per_cta = 64)": "64",
        "sm_103 = (latency = 3)": "latency = 3",  # per-op only
        "sm_110 = (fast = 1)": "fast = 1",
        "sm_120 = (occupancy = 1.5)": "1.5",
        "sm_121 = 2": "2",
        "occupancy": "occupancy",
    }
    _, diagnostics, _ = _hints("(" + ", ".join(bad) + ")")  # all invalid: no cluster error
    assert [d.code for d in diagnostics] == [codes.INVALID_ENTRY_OPTION] * len(bad)
    assert [d.primary_span.text for d in diagnostics] == list(bad.values())


def test_an_architecture_or_hint_given_twice_is_an_error() -> None:
    _, diagnostics, _ = _hints(
        "(sm_90 = (occupancy = 1, occupancy = 2), sm_100 = (occupancy = 1), "
        "sm_100 = (occupancy = 2))"
    )
    assert [d.message for d in diagnostics] == [
        "optimization hint `occupancy` is given twice",
        "optimization hints for `sm_100` are given twice",
    ]


def test_clusters_are_allowed_on_any_entry() -> None:
    """As in cuTile Rust: the host launches `num_cta_in_cga` CTAs per tile block (an
    output-derived grid grows by that factor; see client_stubs.plan)."""
    for sig in (SIG, MAPPED):
        result, diagnostics, _ = _hints("(sm_90 = (num_cta_in_cga = 2))", sig=sig)
        assert diagnostics == [] and result is not None


def test_max_divisibility_is_a_power_of_two() -> None:
    result, diagnostics, _ = _hints("(sm_100 = (max_divisibility = 8,), sm_90 = (occupancy = 1))")
    assert diagnostics == [] and result is not None
    assert result.options.optimization_hints[0] == ArchHints("sm_100", max_divisibility=8)
    _, diagnostics, _ = _hints("(sm_100 = (max_divisibility = 12))")
    assert [d.message for d in diagnostics] == [
        "`sm_100.max_divisibility` must be a power of two, found 12"
    ]
