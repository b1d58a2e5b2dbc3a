"""The launch-contract fuzzer (tests/fuzz/launch_contracts.py): a brief run under hypothesis,
the Rust planner on a fresh sample, and planted faults the checks must catch."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from random import Random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from client_stubs import plan as plan_module
from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from tests.client_stubs.fake_driver import FakeDriver
from tests.fuzz import launch_contracts
from tests.fuzz.contract_inputs import (
    LaunchInput,
    fitting_args,
    input_from,
    make_input,
    seed_contracts,
)

BRIEF_EXAMPLES = 1500  # a few seconds: the long run is `python -m tests.fuzz.launch_contracts`
RUST_SAMPLE = 1500


@pytest.fixture(scope="module")
def patch() -> Iterator[pytest.MonkeyPatch]:
    with pytest.MonkeyPatch.context() as patch:
        FakeDriver(patch)
        yield patch


@settings(
    max_examples=BRIEF_EXAMPLES,
    deadline=None,  # the harness has its own time bound, which counts as a finding
    database=None,
    derandomize=True,  # CI sees the same inputs every run; the long run explores
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.randoms(use_true_random=False))
def test_hostile_contracts_are_planned_or_refused_alike_everywhere(
    patch: pytest.MonkeyPatch, rng: Random
) -> None:
    case = input_from(rng)
    _, findings = launch_contracts.check(case, patch)
    assert findings == [], launch_contracts.vector_case("input", case, {})["about"]


def test_most_seeds_accept_their_fitting_arguments() -> None:
    """The seeds are real contracts and the fitting arguments fit most of them (the others
    relate extents in ways one shared size cannot meet): the mutations mostly start from
    launches that work, so accepted plans stay reachable."""
    rng = Random(3)
    accepted = []
    for name, blob in seed_contracts():
        contract = pb.LaunchContract.FromString(blob)
        args, grid = fitting_args(contract, rng)
        case = LaunchInput(name, contract, args, grid, (), (), args, grid)
        if "accepted" in launch_contracts.planner_verdict(case):
            accepted.append(name)
    assert len(seed_contracts()) >= 60
    assert len(accepted) >= 0.85 * len(seed_contracts())
    assert {"add (built)", "scale_ptr (built)", "copy_persistent (built)"} <= set(accepted)


def test_inputs_are_a_function_of_seed_and_index() -> None:
    assert make_input("s", 5) == make_input("s", 5)
    assert make_input("s", 5) != make_input("s", 6)


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo (the Rust host)")
def test_the_rust_planner_gives_every_fresh_input_the_python_verdict(
    patch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    cases = []
    for index in range(RUST_SAMPLE):
        case = make_input("pytest-rust", index)
        expect, _ = launch_contracts.check(case, patch)
        if "unbuildable" not in expect:
            cases.append(launch_contracts.vector_case(f"input_{index}", case, expect))
    assert launch_contracts.run_rust(cases, tmp_path) is None


# ---- planted faults ---------------------------------------------------------------------------


def _accepted_input() -> LaunchInput:
    for index in range(200):
        case = make_input("planted", index)
        if not case.contract_edits and "accepted" in launch_contracts.planner_verdict(case):
            return case
    raise AssertionError("no accepted input among the first 200")


def test_a_planner_exception_is_a_finding(
    patch: pytest.MonkeyPatch, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object, **_kwargs: object) -> object:
        raise IndexError("planted")

    case = _accepted_input()
    monkeypatch.setattr("tests.vectors.args.plan_launch", broken)
    _, findings = launch_contracts.check(case, patch)
    assert findings[0] == "[planner] the planner raised IndexError: planted"


def test_a_launch_that_packs_other_bytes_than_the_plan_is_a_finding(
    patch: pytest.MonkeyPatch, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = plan_module.plan_launch

    def off_by_one(*args: object, **kwargs: object) -> object:
        plan = real(*args, **kwargs)  # type: ignore[arg-type]
        buffer = bytearray(plan.param_buffer)
        buffer[0] ^= 1
        return plan.__class__(**{**plan.__dict__, "param_buffer": bytes(buffer)})

    case = _accepted_input()
    monkeypatch.setattr("tests.vectors.args.plan_launch", off_by_one)
    _, findings = launch_contracts.check(case, patch)
    assert len(findings) == 1 and findings[0].startswith("[launch] planner")


def test_a_buffer_shorter_than_its_slots_is_a_finding() -> None:
    case = _accepted_input()
    expect = launch_contracts.planner_verdict(case)
    buffer = expect["accepted"]["param_buffer"]
    short = {"accepted": {**expect["accepted"], "param_buffer": buffer[:-2]}}
    problems = launch_contracts.plan_problems(case, short)
    assert any("past the" in p for p in problems), problems


def test_a_grid_past_the_drivers_limits_is_a_finding() -> None:
    case = _accepted_input()
    expect = launch_contracts.planner_verdict(case)
    wide = {"accepted": {**expect["accepted"], "grid": [1, 65536, 1]}}
    assert launch_contracts.plan_problems(case, wide) == [
        "grid [1, 65536, 1] outside the driver's limits"
    ]
