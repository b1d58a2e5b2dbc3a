"""tests/gpu/session.py without a GPU: the plan honours the budget and missing artifacts, a run
bounds, logs and summarizes every step, and the build commands name what the steps read."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.gpu import session


def _artifacts(root: Path, *paths: str) -> None:
    for path in paths:
        (root / path).mkdir(parents=True, exist_ok=True)


def test_the_plan_skips_missing_artifacts_and_what_the_budget_cannot_hold(tmp_path: Path) -> None:
    _artifacts(tmp_path, "gpu_artifacts/bundle/default", "gpu_artifacts/bundle/plain")
    rows = {step.name: why for step, why in session.plan(None, 570, tmp_path)}
    assert rows["gpu-tests"] == "" and rows["launch-overhead"] == ""
    assert rows["launch-overhead-plain"] == ""
    assert rows["decode-vs-plain"].startswith("missing gpu_artifacts/decode")
    small = {step.name: why for step, why in session.plan(None, 350, tmp_path)}
    assert small["gpu-tests"] == "" and small["launch-overhead-plain"].startswith("needs 120 s")
    only = [step.name for step, _ in session.plan({"launch-overhead"}, 570, tmp_path)]
    assert only == ["launch-overhead"]


def test_every_step_reads_what_build_writes() -> None:
    built = {part for command in session.build_commands(Path("/x"), 2) for part in command}
    for step in session.STEPS:
        for need in step.needs:
            assert any(need == b or need.startswith(b + "/") for b in built), (step.name, need)
    assert all(step.seconds <= 570 for step in session.STEPS)


def test_a_run_logs_bounds_and_summarizes_each_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    steps = (
        session.Step("ok", (sys.executable, "-c", "print('fine')"), 30, ()),
        session.Step("fails", (sys.executable, "-c", "raise SystemExit(3)"), 30, ()),
        session.Step("hangs", (sys.executable, "-c", "import time; time.sleep(30)"), 1, ()),
        session.Step("absent", (sys.executable, "-c", "pass"), 1, ("nowhere",)),
    )
    monkeypatch.setattr(session, "STEPS", steps)
    out = tmp_path / "out"
    assert session.run(out, 100, None) == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["ok"]["status"] == 0 and summary["fails"]["status"] == 3
    assert summary["hangs"]["status"] == 124 and summary["absent"]["status"] == "skipped"
    assert (out / "ok.log").read_text().splitlines()[-1] == "fine"


def test_a_run_starts_each_step_on_the_time_really_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    quick = (sys.executable, "-c", "pass")
    steps = tuple(session.Step(name, quick, 30, ()) for name in ("first", "second", "third"))
    monkeypatch.setattr(session, "STEPS", steps)
    assert [why for _, why in session.plan(None, 70, tmp_path)][2].startswith("needs 30 s")
    assert session.run(tmp_path / "out", 70, None) == 0  # the bounds add up to 90
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert all(summary[name]["status"] == 0 for name in ("first", "second", "third"))


def test_the_artifacts_travel_packed_and_run_unpacks_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here, device = tmp_path / "here", tmp_path / "device"
    (here / "gpu_artifacts/bench").mkdir(parents=True)
    (here / "gpu_artifacts/bench/manifest.json").write_text("{}")
    (here / "gpu_artifacts/unlisted").mkdir()  # only what the steps read travels
    packed = session.pack(here)
    assert packed == here / session.PACKED
    (device / "artifacts").mkdir(parents=True)
    packed.rename(device / session.PACKED)
    assert session.unpack(device)
    assert (device / "gpu_artifacts/bench/manifest.json").read_text() == "{}"
    assert not (device / "gpu_artifacts/unlisted").exists()
    assert not session.unpack(device)  # already there: left alone
    assert session.pack(tmp_path / "empty") is None
    monkeypatch.setattr(session, "REPO", device)
    monkeypatch.setattr(session, "STEPS", ())
    (device / "gpu_artifacts/bench/manifest.json").unlink()
    assert session.run(tmp_path / "out", 10, None) == 0  # present: no second unpack
    assert not (device / "gpu_artifacts/bench/manifest.json").exists()
