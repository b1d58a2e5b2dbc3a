"""The pending-work fuzzer (tests/fuzz/pending_work.py): a brief campaign, the model GPU's own
rules, and planted faults the fuzzer must catch."""

from __future__ import annotations

import pytest

from client_stubs import device_op, launcher, pending
from tests.fuzz import pending_work
from tests.fuzz.pending_work import FifoGpu, Item

BRIEF_INPUTS = 150  # a few seconds: the long run is `python -m tests.fuzz.pending_work`


def test_a_brief_campaign_finds_nothing() -> None:
    assert pending_work.campaign(BRIEF_INPUTS, seed=2026, steps=80) == 0


def test_the_model_gpu_runs_a_stream_in_order_and_waits_for_events() -> None:
    gpu = FifoGpu()
    gpu.accesses = (((0, 8),), ())
    gpu.launch(1)
    gpu.record("E", 1)
    gpu.queue(2, Item("wait", event="E", waits_for=gpu.events["E"]))
    gpu.accesses = (((0, 8),), ())
    gpu.launch(2)
    assert not gpu.step(2)  # its wait blocks stream 2 until E fired
    assert not gpu.event_done("E") and not gpu.stream_done(1)
    gpu.drain_stream(2)  # runs stream 1 as far as the wait needs
    assert gpu.event_done("E") and gpu.stream_done(1) and gpu.stream_done(2)
    assert gpu.findings == []  # the second launch started after the first finished


def test_the_model_gpu_reports_a_launch_that_overtakes_a_conflicting_one() -> None:
    gpu = FifoGpu()
    gpu.accesses = (((0, 8),), ())
    gpu.launch(1)
    gpu.accesses = ((), ((4, 12),))
    gpu.launch(2)
    gpu.step(2)
    assert gpu.findings and "earlier conflicting launch" in gpu.findings[0]


@pytest.mark.parametrize(
    "fault",
    [
        "no cross-stream wait",
        "uncovered work reported done",
        "an await that spins not",
        "one event pool for every device",
    ],
)
def test_planted_faults_are_found(monkeypatch: pytest.MonkeyPatch, fault: str) -> None:
    if fault == "no cross-stream wait":
        monkeypatch.setattr(launcher, "_order_after_other_streams", lambda *a: None)
    elif fault == "uncovered work reported done":
        monkeypatch.setattr(pending.Batch, "finished", lambda self: True)
    elif fault == "an await that spins not":
        monkeypatch.setattr(device_op, "spin_until_idle", lambda stream, spin_ns: True)
    else:
        original = pending.PendingWork._event
        monkeypatch.setattr(pending.PendingWork, "_event", lambda self, device: original(self, 0))
    assert pending_work.campaign(60, seed=2026, steps=80) > 0
