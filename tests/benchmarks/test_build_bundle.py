"""tests/benchmarks/build_bundle.py: one cutile-compile job per (entry, facts) group, and every
declared configuration names a real entry whose generics bind."""

from __future__ import annotations

from pathlib import Path

import pytest

from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser.spans import SourceFile
from service.cli.facts_arg import parse_facts
from tests.benchmarks import configs
from tests.benchmarks.build_bundle import EXAMPLES, compile_jobs, main


def test_each_group_compiles_its_general_and_facts_variants(tmp_path: Path) -> None:
    jobs = list(compile_jobs(tmp_path))
    expected = sum(int(g.general) + int(g.facts is not None) for g in configs.GROUPS)
    assert len(jobs) == expected
    auto = {g.entry for g in configs.GROUPS if g.specialize == "auto"}
    assert auto == {"attention_partial", "attention_merge"}
    for job in jobs:
        # exactly the declared variants: automatic ones only where a group asks for them
        entry = job[job.index("--entry") + 1]
        facts = [job[i + 1] for i, arg in enumerate(job) if arg == "--facts"]
        specialize = "auto" if entry in auto and not facts else "none"
        assert job[-6:] == ["--arch", "sm_90", "-o", str(tmp_path), "--specialize", specialize]
        assert all(parse_facts(f)[0] == entry for f in facts)
    softmax = [j for j in jobs if "softmax" in j]
    assert len(softmax) == 1 and "--facts" in softmax[0]  # facts variant only


def test_families_partition_the_groups() -> None:
    grouped = [group for groups in configs.FAMILIES.values() for group in groups]
    assert grouped == list(configs.GROUPS)


def test_a_family_compiles_only_its_own_entries(tmp_path: Path) -> None:
    jobs = list(compile_jobs(tmp_path, configs.FAMILIES["attention"]))
    entries = {job[job.index("--entry") + 1] for job in jobs}
    assert entries == {"flash_attention", "flash_attention_tuned"}
    assert all(any(arg.endswith("flash_attention.rs") for arg in job) for job in jobs)


def test_no_early_launch_passes_to_every_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.benchmarks import build_bundle

    seen: list[list[str]] = []
    monkeypatch.setattr(build_bundle, "cutile_compile", lambda job: seen.append(job) or 0)
    assert main([str(tmp_path), "--family", "add", "--no-early-launch"]) == 0
    assert seen and all(job[-1] == "--no-early-launch" for job in seen)
    seen.clear()
    assert main([str(tmp_path), "--family", "add"]) == 0  # early, cutile-compile's default
    assert seen and not any("early-launch" in arg for job in seen for arg in job)


def test_an_unknown_family_is_a_usage_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as raised:
        main([str(tmp_path), "--family", "convolution"])
    assert raised.value.code == 2
    assert "invalid choice: 'convolution'" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # nothing compiled


@pytest.mark.parametrize("group", configs.GROUPS, ids=lambda g: g.entry)
def test_the_first_and_last_configs_of_each_group_lower(group: configs.Group) -> None:
    source = SourceFile(group.file, (EXAMPLES / group.file).read_text())
    for config in {0: group.configs[0], 1: group.configs[-1]}.values():
        request = CompileRequest((source,), group.entry, tuple(config.items()))
        result = compile_kernel(request, stop_after=Stage.IR)
        assert result.ok, [d.message for d in result.diagnostics]
