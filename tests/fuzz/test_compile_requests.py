"""The compile-request fuzzer (tests/fuzz/compile_requests.py): a brief run under hypothesis,
the Rust host's request keys on a fresh sample, and planted faults the checks must catch."""

from __future__ import annotations

import shutil
from pathlib import Path
from random import Random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from client_stubs.errors import ContractError
from protos.generated.cutile.compile.v1 import compile_pb2
from tests.fuzz import compile_requests
from tests.fuzz.request_inputs import RequestInput, input_from, make_input, seed_requests

BRIEF_EXAMPLES = 300  # about 5 s: the long run is `python -m tests.fuzz.compile_requests`
RUST_SAMPLE = 1000


@settings(
    max_examples=BRIEF_EXAMPLES,
    deadline=None,  # the harness has its own time bound, which counts as a finding
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.randoms(use_true_random=False))
def test_hostile_requests_are_refused_by_field_or_compiled(rng: Random) -> None:
    case = input_from(rng)
    assert compile_requests.problems_of(case) == [], case.edits


def test_every_seed_request_compiles() -> None:
    for label, blob in seed_requests()[::7]:
        case = RequestInput(label, compile_pb2.CompileRequest.FromString(blob), ())
        assert compile_requests.problems_of(case) == [], label


@pytest.mark.skipif(shutil.which("cargo") is None, reason="needs cargo (the Rust host)")
def test_the_rust_host_keys_every_fresh_request_as_python_does(tmp_path: Path) -> None:
    inputs = (make_input("pytest-rust", i) for i in range(RUST_SAMPLE))
    cases = [compile_requests.key_case(f"input_{i}", x) for i, x in enumerate(inputs)]
    assert compile_requests.run_rust(cases, tmp_path) is None


def test_a_planted_key_mismatch_is_caught_by_the_rust_run(tmp_path: Path) -> None:
    if shutil.which("cargo") is None:
        pytest.skip("needs cargo (the Rust host)")
    case = compile_requests.key_case("planted", make_input("planted", 1))
    case["key"] = "0" * 64
    report = compile_requests.run_rust([case], tmp_path)
    assert report is not None and "1 of 1 keys differ" in report


def test_a_contract_the_hosts_refuse_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    label, blob = seed_requests()[0]
    clean = RequestInput(label, compile_pb2.CompileRequest.FromString(blob), ())

    def refusing(_contract: object) -> None:
        raise ContractError("planted")

    monkeypatch.setattr(compile_requests, "validate_contract", refusing)
    assert compile_requests.problems_of(clean) == ["bad contract: planted"]


def test_a_conversion_that_raises_is_a_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(_request: object) -> None:
        raise KeyError("planted")

    monkeypatch.setattr(compile_requests, "request_from_proto", broken)
    assert compile_requests.problems_of(make_input("x", 3)) == ["conversion: KeyError: 'planted'"]
