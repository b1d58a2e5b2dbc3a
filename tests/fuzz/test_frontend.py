"""The front-end fuzzer (tests/fuzz/frontend.py): a brief run under hypothesis, and the
long run's worker protocol, with a crash and a hang planted in a worker."""

from __future__ import annotations

import json
from pathlib import Path
from random import Random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from client_stubs.errors import ContractError
from tests.fuzz import frontend
from tests.fuzz.mutations import MUTATIONS, FuzzInput, make_input, seeds

BRIEF_EXAMPLES = 1500  # about 20 s here: the long run is `python -m tests.fuzz.frontend`


@settings(
    max_examples=BRIEF_EXAMPLES,
    deadline=None,  # the harness has its own time bound, which counts as a failure
    database=None,  # nothing written into the work tree
    derandomize=True,  # CI sees the same inputs every run; the long run explores
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.randoms(use_true_random=False))
def test_mutated_kernels_get_diagnostics_never_faults(rng: Random) -> None:
    fuzz_input = make_input(rng)
    assert frontend.problems_of(fuzz_input) == [], fuzz_input.mutations


def test_every_mutation_changes_or_keeps_a_kernel_without_raising() -> None:
    rng = Random(7)
    for mutation in MUTATIONS:
        for seed in seeds():
            assert isinstance(mutation(seed.text, rng), str)


def test_inputs_are_a_function_of_seed_and_index() -> None:
    assert frontend.input_for("s", 12) == frontend.input_for("s", 12)
    assert frontend.input_for("s", 12) != frontend.input_for("s", 13)


def test_a_planted_internal_error_is_reported_with_its_input(monkeypatch) -> None:
    broken = FuzzInput("k.rs", seeds()[0].text, seeds()[0].entries[0][0], (("B", "64"),), ())
    monkeypatch.setattr(frontend, "compile_kernel", _raising_compiler)
    assert frontend.problems_of(broken) == ["exception: RuntimeError: planted"]


def _raising_compiler(*_args: object, **_kwargs: object) -> object:
    raise RuntimeError("planted")


def test_a_contract_the_hosts_refuse_is_reported(monkeypatch) -> None:
    seed = seeds()[0]
    entry, generics = seed.entries[0]
    clean = FuzzInput("k.rs", seed.text, entry, generics, ())
    assert frontend.problems_of(clean) == []

    def refusing(_contract: object) -> None:
        raise ContractError("planted")

    monkeypatch.setattr(frontend, "validate_contract", refusing)
    assert frontend.problems_of(clean) == ["bad contract: planted"]


def test_the_long_run_counts_a_worker_crash_and_a_hang_and_saves_both(tmp_path: Path) -> None:
    """A worker that dies on input 3 (SIGSEGV) and one stuck on input 6 with signals
    blocked: both are counted, saved and replaced; every other input still runs."""
    tally = frontend.run(
        10, "t", jobs=1, out=tmp_path, time_bound=5.0, hang_kill=3.0, plant={3: "crash", 6: "hang"}
    )
    assert tally.inputs == 10
    assert tally.kinds == {"crash": 1, "hang": 1}
    saved = sorted(p.name for p in tmp_path.iterdir())
    assert saved == ["crash-t-3.json", "crash-t-3.rs", "hang-t-6.json", "hang-t-6.rs"]
    details = json.loads((tmp_path / "crash-t-3.json").read_text())
    assert details["index"] == 3 and details["problems"] == ["crash: worker exit -11"]
    assert (tmp_path / "crash-t-3.rs").read_text() == frontend.input_for("t", 3).text
