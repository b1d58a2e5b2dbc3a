"""The tileiras wrapper: locating it, flags, and how its failures and timeouts surface."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

import lowering.tileiras as tileiras_module
from lowering.bytecode.writer import write_bytecode
from lowering.cubin_info import function_symbols
from lowering.ir.core import Module
from lowering.tileiras import (
    FILE_SIZE_CAP,
    Tileiras,
    TileirasError,
    TileirasFault,
    TileirasNotFound,
    TileirasOverBudget,
    TileirasTimeout,
    tileiras_flags,
)
from tests.fake_cubin import fake_cubin


def test_flags() -> None:
    assert tileiras_flags(arch="sm_90") == ["--gpu-name=sm_90", "-O3", "--host-arch=x86_64"]
    assert tileiras_flags(arch="sm_120", opt_level=0, host_arch="aarch64", lineinfo=True) == [
        "--gpu-name=sm_120",
        "-O0",
        "--host-arch=aarch64",
        "--lineinfo",
    ]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"arch": "sm_75"}, "unsupported GPU 'sm_75'"),
        ({"arch": "sm_90a"}, "unsupported GPU"),
        ({"arch": "sm_90", "host_arch": "arm64"}, "unsupported host arch 'arm64'"),
        ({"arch": "sm_90", "opt_level": 4}, "opt_level must be 0..3"),
    ],
)
def test_flag_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        tileiras_flags(**kwargs)  # type: ignore[arg-type]


def test_locate_prefers_explicit_then_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "tileiras"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert Tileiras.locate(str(fake)).path == str(fake)
    monkeypatch.setenv("CUTILE_TILEIRAS", str(fake))
    assert Tileiras.locate().path == str(fake)
    with pytest.raises(TileirasNotFound, match="not an executable file"):
        Tileiras.locate(str(tmp_path / "missing"))


def test_locate_reports_absence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CUTILE_TILEIRAS", raising=False)
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(tileiras_module, "nvidia_binary", lambda _name: None)
    with pytest.raises(TileirasNotFound, match="tileiras not found") as caught:
        Tileiras.locate()
    assert isinstance(caught.value, TileirasError)  # callers may catch either


@pytest.mark.tileiras
def test_version_fingerprint_and_bytecode_versions(tileiras: Tileiras) -> None:
    assert tileiras.version.startswith("release 13.")
    assert ", V13." in tileiras.version
    assert len(tileiras.fingerprint) == 64
    assert tileiras.fingerprint == tileiras.fingerprint
    assert {(13, 1), (13, 2), (13, 3)} <= set(tileiras.bytecode_versions)


@pytest.mark.tileiras
def test_assemble_cleans_up(tileiras: Tileiras, vadd_module: Module, tmp_path: Path) -> None:
    private = Tileiras(tileiras.path, temp_root=str(tmp_path))
    cubin = private.assemble(write_bytecode(vadd_module), arch="sm_90", lineinfo=True)
    assert function_symbols(cubin) == ["vadd_ir"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.tileiras
def test_host_arch_is_passed(tileiras: Tileiras, vadd_module: Module) -> None:
    arm = tileiras.assemble(write_bytecode(vadd_module), arch="sm_90", host_arch="aarch64")
    x86 = tileiras.assemble(write_bytecode(vadd_module), arch="sm_90")
    assert arm != x86  # the embedded host code differs
    assert function_symbols(arm) == ["vadd_ir"]


@pytest.mark.tileiras
def test_garbage_bytecode_reports_tileiras_own_message(tileiras: Tileiras, tmp_path: Path) -> None:
    private = Tileiras(tileiras.path, temp_root=str(tmp_path))
    with pytest.raises(TileirasError) as caught:
        private.assemble(b"this is not bytecode", arch="sm_90")
    error = caught.value
    assert not isinstance(error, TileirasTimeout)
    assert error.returncode == 3
    assert "does not correspond to Tile IR bytecode" in error.stderr
    text = str(error)
    assert "does not correspond to Tile IR bytecode" in text
    assert "repro: " in text and "--gpu-name=sm_90 -O3 --host-arch=x86_64" in text
    assert "input.tileirbc -o output.cubin" in text
    assert list(tmp_path.iterdir()) == []


@pytest.mark.tileiras
def test_invalid_symbol_name_fails(tileiras: Tileiras, vadd_module: Module) -> None:
    bad = dataclasses.replace(vadd_module.functions[0], name="my-kernel")
    with pytest.raises(TileirasError) as caught:
        tileiras.assemble(write_bytecode(Module((bad,))), arch="sm_90")
    assert caught.value.returncode == 5
    assert "failed to compile Tile IR program" in str(caught.value)


@pytest.mark.tileiras
def test_timeout_kills_and_cleans_up(
    tileiras: Tileiras, vadd_module: Module, tmp_path: Path
) -> None:
    private = Tileiras(tileiras.path, temp_root=str(tmp_path))
    with pytest.raises(TileirasTimeout, match=r"did not finish within 0\.001s") as caught:
        private.assemble(write_bytecode(vadd_module), arch="sm_90", timeout_s=0.001)
    assert isinstance(caught.value, TileirasError)
    assert list(tmp_path.iterdir()) == []


def test_empty_bytecode_is_rejected_before_running(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="non-empty bytes"):
        Tileiras(os.devnull, temp_root=str(tmp_path)).assemble(b"", arch="sm_90")


def _fake_tileiras(tmp_path: Path, script: str) -> Tileiras:
    """A shell script standing in for tileiras; temp dirs go under tmp_path/tmp."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    fake = tmp_path / "fake-tileiras"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)
    (tmp_path / "tmp").mkdir()
    return Tileiras(str(fake), temp_root=str(tmp_path / "tmp"))


def test_runs_are_confined(tmp_path: Path) -> None:
    fake = _fake_tileiras(
        tmp_path,
        'echo "as=$(ulimit -v) core=$(ulimit -c) tmp=$TMPDIR cwd=$(pwd)" >&2\n'
        'echo "pgrp=$(cut -d" " -f5 /proc/$$/stat) pid=$$" >&2\n'
        "exit 7\n",
    )
    with pytest.raises(TileirasError) as caught:
        fake.assemble(b"bytes", arch="sm_90")
    said = caught.value.stderr
    workdir = said.split("tmp=")[1].split()[0]
    assert caught.value.returncode == 7
    assert f"as={8 << 20} core=0 " in said
    assert workdir.startswith(str(tmp_path / "tmp")) and f"cwd={workdir}" in said
    pgrp, pid = (said.split(f"{key}=")[1].split()[0] for key in ("pgrp", "pid"))
    assert pgrp == pid  # tileiras leads its own process group
    assert list((tmp_path / "tmp").iterdir()) == []


@pytest.mark.parametrize(
    ("then", "error", "timeout_s"),
    [("sleep 30", TileirasTimeout, 0.5), ("exit 1", TileirasError, 10.0)],
)
def test_nothing_tileiras_started_outlives_its_run(
    tmp_path: Path, then: str, error: type, timeout_s: float
) -> None:
    """A child (ptxas) it left running is killed with the run: on a timeout (the whole
    group), and when tileiras itself exited."""
    marker = tmp_path / "child.pid"
    fake = _fake_tileiras(tmp_path, f"sleep 30 &\necho $! > {marker}\n{then}\n")
    with pytest.raises(error):
        fake.assemble(b"bytes", arch="sm_90", timeout_s=timeout_s)
    assert _dies_soon(int(marker.read_text()))


def _dies_soon(pid: int) -> bool:
    """Whether `pid` is gone within a second (a killed child is reparented and reaped
    asynchronously)."""
    for _ in range(50):
        if not _alive(pid):
            return True
        time.sleep(0.02)
    return not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_output_is_capped(tmp_path: Path) -> None:
    fake = _fake_tileiras(tmp_path, "head -c 200000 /dev/zero | tr '\\0' x >&2\nexit 1\n")
    with pytest.raises(TileirasError) as caught:
        fake.assemble(b"bytes", arch="sm_90")
    assert caught.value.stderr.endswith("[... output truncated]")
    assert len(caught.value.stderr) < 70_000


def _writing(tmp_path: Path, cubin: bytes) -> Tileiras:
    """A fake tileiras that exits 0 after writing `cubin` as its output."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    made = tmp_path / "made.cubin"
    made.write_bytes(cubin)
    return _fake_tileiras(tmp_path, f"cp {made} output.cubin\n")


@pytest.mark.parametrize(
    ("cubin", "problem"),
    [
        (b"not an elf at all", "not an ELF file"),
        (fake_cubin("sm_80", "add_B1024"), "a cubin for sm_80, not sm_90"),
        (fake_cubin("sm_90", "other_kernel"), "lacks the entry symbol `add_B1024`"),
    ],
)
def test_an_output_that_is_not_the_kernel_is_a_fault(
    tmp_path: Path, cubin: bytes, problem: str
) -> None:
    fake = _writing(tmp_path, cubin)
    with pytest.raises(TileirasFault, match=problem):
        fake.assemble(b"bytes", arch="sm_90", symbol="add_B1024")
    good = fake_cubin("sm_90", "add_B1024")
    assert (
        _writing(tmp_path / "good", good).assemble(b"b", arch="sm_90", symbol="add_B1024") == good
    )


def test_an_output_past_the_cap_is_refused_unread(tmp_path: Path) -> None:
    fake = _fake_tileiras(tmp_path, f"head -c {FILE_SIZE_CAP + 1} /dev/zero > output.cubin\n")
    with pytest.raises(TileirasFault, match="reached the cap"):
        fake.assemble(b"bytes", arch="sm_90")


def test_a_crash_is_a_fault_but_an_error_exit_is_the_bytecodes(tmp_path: Path) -> None:
    crashing = _fake_tileiras(tmp_path, "kill -SEGV $$\n")
    with pytest.raises(TileirasFault, match="killed by SIGSEGV"):
        crashing.assemble(b"bytes", arch="sm_90")
    rejecting = _fake_tileiras(tmp_path / "b", "echo 'error: bad op' >&2\nexit 1\n")
    assert not isinstance(_failure(rejecting), TileirasFault)


def _failure(tileiras: Tileiras) -> TileirasError:
    """What assembling raises with `tileiras`."""
    with pytest.raises(TileirasError) as caught:
        tileiras.assemble(b"bytes", arch="sm_90")
    return caught.value


def test_a_binary_that_cannot_start_is_a_fault_not_the_kernels(tmp_path: Path) -> None:
    fake = _fake_tileiras(tmp_path, "exit 0\n")
    Path(fake.path).write_bytes(b"\x7fELF not really")  # executable, but no valid image
    with pytest.raises(TileirasFault, match="could not be started") as caught:
        fake.assemble(b"bytes", arch="sm_90")
    assert "Exec format error" in caught.value.stderr


def test_a_run_capped_lower_maps_no_more_and_running_out_is_over_budget(tmp_path: Path) -> None:
    fake = _fake_tileiras(tmp_path, 'echo "as=$(ulimit -v)" >&2\nexit 7\n')
    capped = Tileiras(fake.path, temp_root=str(tmp_path / "tmp"), memory_cap=3 << 30)
    assert f"as={3 << 20}" in _failure(capped).stderr
    # what tileiras does at its cap: C++'s allocation failure, then abort
    out = _fake_tileiras(
        tmp_path / "b",
        "echo \"terminate called after throwing an instance of 'std::bad_alloc'\" >&2\n"
        "kill -ABRT $$\n",
    )
    with pytest.raises(TileirasOverBudget, match="ran out of its 8192 MiB of address space"):
        out.assemble(b"bytes", arch="sm_90")
    other_abort = _fake_tileiras(tmp_path / "c", "echo 'assertion failed' >&2\nkill -ABRT $$\n")
    crashed = _failure(other_abort)
    assert isinstance(crashed, TileirasFault) and not isinstance(crashed, TileirasOverBudget)


def test_cpu_time_is_over_budget_and_the_callers_budget_is_not_inherited(
    tmp_path: Path,
) -> None:
    import resource

    over = _fake_tileiras(tmp_path, "kill -XCPU $$\n")
    with pytest.raises(TileirasOverBudget, match="SIGXCPU"):
        over.assemble(b"bytes", arch="sm_90")
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    used = resource.getrusage(resource.RUSAGE_SELF)
    budget = int(used.ru_utime + used.ru_stime) + 3600  # a compile worker's budget
    resource.setrlimit(resource.RLIMIT_CPU, (budget, hard))
    try:
        limits = _fake_tileiras(tmp_path / "b", 'echo "cpu=$(ulimit -t)" >&2\nexit 7\n')
        with pytest.raises(TileirasError) as caught:
            limits.assemble(b"bytes", arch="sm_90")
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    expected = "unlimited" if hard == resource.RLIM_INFINITY else str(hard)
    assert f"cpu={expected}" in caught.value.stderr


def test_a_relative_path_is_made_absolute(tmp_path: Path, monkeypatch) -> None:
    _fake_tileiras(tmp_path, "exit 0\n")
    monkeypatch.chdir(tmp_path)
    assert Tileiras.locate("./fake-tileiras").path == str(tmp_path / "fake-tileiras")


def test_a_removed_temp_root_is_made_again(tmp_path: Path) -> None:
    fake = _writing(tmp_path, fake_cubin("sm_90", "add_B1024"))
    (tmp_path / "tmp").rmdir()  # as a cleaner of old temp folders does
    assert fake.assemble(b"b", arch="sm_90", symbol="add_B1024")
    assert (tmp_path / "tmp").is_dir()
