"""The host-only install: the wheel without extras (and with its compiled launcher) opens
bundles, plans launches and compiles through a server, with neither the compiler nor the
daemon's packages installed.

Slow (a wheel build and a fresh venv from the package index, about a minute with a warm pip
cache): marked `install`, skipped with the reason when the index cannot be reached.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from service.cli.batch import main as cutile_compile
from service.compile.engine import CompileEngine

pytestmark = [pytest.mark.install, pytest.mark.tileiras]

REPO_ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("client_stubs", "lowering", "parser", "protos", "service")
PROJECT_FILES = ("pyproject.toml", "README.md", "LICENSE")
SERVER_ONLY = (
    "tree_sitter",
    "tree_sitter_rust",
    "redis",
    "prometheus_client",
    "uvloop",
    "grpc_health",
    "grpc_reflection",
    "grpc_status",
    "tqdm",
    "pygls",
)

HOST_SCRIPT = """
import importlib.metadata, importlib.util, sys
from pathlib import Path
import client_stubs
from client_stubs import native
from client_stubs import AsyncCompileClient, Bundle, CompileClient, DeviceTensor
from client_stubs.plan import plan_launch

bundle_dir, target, venv = sys.argv[1:4]
assert Path(client_stubs.__file__).is_relative_to(venv), client_stubs.__file__
assert native.available(), "the wheel lacks the compiled launcher"
present = [m for m in {server_only!r} if importlib.util.find_spec(m) is not None]
assert not present, f"server packages in a host install: {{present}}"
for dist in ("nvidia-cuda-tileiras", "tree-sitter", "nvidia-cuda-nvcc"):
    try:
        importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        continue
    raise AssertionError(f"{{dist}} is installed")

n = 4096
x = DeviceTensor(0x7F00_0000_0000, (n,), dtype="f32")
y = DeviceTensor(0x7F00_0001_0000, (n,), dtype="f32")
z = DeviceTensor(0x7F00_0002_0000, (n,), dtype="f32")
zp = z.partition((1024,))
kernel = Bundle.open(bundle_dir).kernel("add", {{"B": "1024"}}, sm="sm_90")
plan = plan_launch(kernel.spec, (zp, x, y))
print("bundle grid", tuple(plan.grid))

source = (Path(bundle_dir) / "add.rs").read_text()
with CompileClient(target, cache=False) as client:
    served = client.compile(source, "add", {{"B": "1024"}}, arch="sm_90")
plan = plan_launch(served.spec, (zp, x, y))
print("served grid", tuple(plan.grid))
assert AsyncCompileClient(target).address == target  # grpc.aio comes with grpcio
"""


def _run(argv: list[str], timeout: float, **kwargs: object) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    return subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, env=env, check=False, **kwargs
    )


def _build_wheel(tmp: Path) -> Path:
    """The project's wheel, built from a copy of its sources (the checkout stays clean)."""
    src = tmp / "src"
    for package in PACKAGES:
        shutil.copytree(
            REPO_ROOT / package,
            src / package,
            ignore=shutil.ignore_patterns("__pycache__", "*.so"),  # the wheel builds its own
        )
    for name in PROJECT_FILES:
        shutil.copy(REPO_ROOT / name, src / name)
    dist = tmp / "dist"
    argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    built = _run([*argv, "-q", "-w", str(dist), str(src)], timeout=120)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = dist.glob("cutile_serve-*.whl")
    # the compiled launcher is on Python's stable ABI: one wheel serves CPython 3.10 and later
    assert "-cp310-abi3-" in wheel.name, wheel.name
    return wheel


def _host_venv(tmp: Path, wheel: Path) -> Path:
    venv = tmp / "host-venv"
    made = _run([sys.executable, "-m", "venv", str(venv)], timeout=60)
    assert made.returncode == 0, made.stderr
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    probe = _run([*pip, "index", "versions", "grpcio"], timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"the package index is unreachable: {probe.stderr.strip()[-300:]}")
    installed = _run([*pip, "install", "-q", str(wheel)], timeout=300)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return venv


def test_the_wheel_without_extras_is_a_working_host_client(
    tileiras, start_server, tmp_path: Path, capsys
) -> None:
    bundle = tmp_path / "bundle"
    add_rs = REPO_ROOT / "rust_examples" / "add.rs"
    argv = [str(add_rs), "--entry", "add", "--generics", "B=1024", "--specialize", "none"]
    assert cutile_compile([*argv, "-o", str(bundle), "--no-cache"]) == 0
    shutil.copy(add_rs, bundle / "add.rs")
    server = start_server(CompileEngine(tileiras))

    venv = _host_venv(tmp_path, _build_wheel(tmp_path))
    script = textwrap.dedent(HOST_SCRIPT).format(server_only=SERVER_ONLY)
    python = str(venv / "bin" / "python")
    run = _run([python, "-c", script, str(bundle), server.target, str(venv)], 120, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.split("\n")[:2] == ["bundle grid (4, 1, 1)", "served grid (4, 1, 1)"]

    for tool in ("cutile-compile", "cutile-serve", "cutile-lsp"):
        result = _run([str(venv / "bin" / tool), "--help"], timeout=60, cwd=tmp_path)
        assert result.returncode == 1, (tool, result.stdout, result.stderr)
        assert "Traceback" not in result.stderr
        assert "pip install 'cutile-serve[server]'" in result.stderr, result.stderr
        assert result.stderr.startswith(f"error: {tool} needs the compiler"), result.stderr
