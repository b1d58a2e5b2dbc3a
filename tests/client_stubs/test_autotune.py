"""The autotuning hook: times declared candidates with a (fake) timer, remembers winners."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from client_stubs.autotune import (
    Autotuner,
    NoCandidateError,
    TuneKey,
    bundle_candidates,
    config_name,
    shape_class,
)

KEY = TuneKey("gemm_tuned", "4096x4096x4096", "sm_90")


class FakeTimer:
    """Each launch returns its candidate's name; the timer looks its time up."""

    def __init__(self, seconds: Mapping[str, float]) -> None:
        self.seconds = seconds
        self.timed: list[str] = []

    def __call__(self, launch) -> float:  # type: ignore[no-untyped-def]
        name = launch()
        self.timed.append(name)
        return self.seconds[name]


def candidates(*names: str) -> dict:
    return {name: (lambda name=name: lambda: name) for name in names}


def test_the_fastest_candidate_wins_and_is_remembered(tmp_path: Path) -> None:
    timer = FakeTimer({"a": 3.0, "b": 1.0, "c": 2.0})
    choice = Autotuner(tmp_path, timer).pick(KEY, candidates("a", "b", "c"))
    assert (choice.name, choice.remembered) == ("b", False)
    assert choice.seconds == {"a": 3.0, "b": 1.0, "c": 2.0}
    assert choice.launch() == "b"
    record = json.loads((tmp_path / "autotune.json").read_text())
    assert record["gemm_tuned|4096x4096x4096|sm_90"]["winner"] == "b"


def test_a_remembered_winner_launches_without_timing(tmp_path: Path) -> None:
    Autotuner(tmp_path, FakeTimer({"a": 3.0, "b": 1.0})).pick(KEY, candidates("a", "b"))
    timer = FakeTimer({"a": 3.0, "b": 1.0})
    choice = Autotuner(tmp_path, timer).pick(KEY, candidates("a", "b"))
    assert (choice.name, choice.remembered, timer.timed) == ("b", True, [])


def test_keys_are_separate_and_a_vanished_winner_is_retuned(tmp_path: Path) -> None:
    tuner = Autotuner(tmp_path, FakeTimer({"a": 3.0, "b": 1.0, "c": 0.5}))
    tuner.pick(KEY, candidates("a", "b"))
    other = TuneKey("gemm_tuned", "1024x1024x1024", "sm_90")
    assert tuner.remembered(other) is None
    assert tuner.pick(other, candidates("a")).name == "a"
    choice = tuner.pick(KEY, candidates("a", "c"))  # "b" is no longer declared
    assert (choice.name, choice.remembered) == ("c", False)
    tuner.forget(KEY)
    assert tuner.remembered(KEY) is None and tuner.remembered(other) == "a"


def test_a_failing_candidate_loses_and_all_failing_is_an_error(tmp_path: Path) -> None:
    def broken():  # type: ignore[no-untyped-def]
        raise RuntimeError("no such variant")

    tuner = Autotuner(tmp_path, FakeTimer({"a": 1.0}))
    choice = tuner.pick(KEY, {**candidates("a"), "bad": broken})
    assert choice.name == "a" and choice.failed == {"bad": "RuntimeError: no such variant"}
    with pytest.raises(NoCandidateError, match="every candidate failed"):
        Autotuner(tmp_path / "other", FakeTimer({})).pick(KEY, {"bad": broken})
    with pytest.raises(NoCandidateError, match="no candidates"):
        tuner.pick(KEY, {})


def test_a_corrupt_record_file_reads_as_empty(tmp_path: Path) -> None:
    (tmp_path / "autotune.json").write_text("{not json")
    tuner = Autotuner(tmp_path, FakeTimer({"a": 1.0}))
    assert tuner.remembered(KEY) is None
    assert tuner.pick(KEY, candidates("a")).name == "a"
    assert tuner.remembered(KEY) == "a"


def test_shape_classes_round_up_to_powers_of_two() -> None:
    assert shape_class((1000, 4096, 1)) == "1024x4096x1"
    assert shape_class((4097,)) == "8192"


def test_bundle_candidates_load_each_config_with_its_arguments() -> None:
    loaded: list[tuple] = []

    class FakeBundle:
        def kernel(self, function, generics, for_args):  # type: ignore[no-untyped-def]
            loaded.append((function, dict(generics), for_args))
            return lambda *args: ("launched", generics["BM"], args)

    configs = [{"BM": "128", "BN": "256"}, {"BM": "256", "BN": "128"}]
    found = bundle_candidates(FakeBundle(), "gemm", configs, lambda c: (c["BM"], "x"))
    assert list(found) == ["BM=128,BN=256", "BM=256,BN=128"]
    assert loaded == []  # nothing loads until a candidate is prepared
    launch = found["BM=256,BN=128"]()
    assert loaded == [("gemm", {"BM": "256", "BN": "128"}, ("256", "x"))]
    assert launch() == ("launched", "256", ("256", "x"))
    assert config_name({"b": 1, "a": 2}) == "a=2,b=1"
