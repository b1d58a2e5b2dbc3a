"""What runs on the GPU host imports no compiler: that host has torch and the client's four
packages but neither tree-sitter nor tileiras (README, "GPU verification"). A static walk of
the first-party imports (module level and inside functions) from every module run there."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMPILER = ("parser", "lowering", "service", "tree_sitter", "tree_sitter_rust")
FIRST_PARTY = ("client_stubs", "tests", "rust_examples", "protos", *COMPILER)
# run on the CPU machine (they compile), so not part of the GPU host's code
CPU_SIDE = {
    "tests.gpu.build_artifacts",
    "tests.benchmarks.build_bundle",
    "tests.benchmarks.build_cutile_rs",
    "tests.benchmarks.decode.build",
    "tests.benchmarks.sass_stats",
}


def gpu_host_entries() -> list[str]:
    """The modules the README's GPU commands run, and the GPU tests."""
    modules = [f"tests.gpu.{p.stem}" for p in (REPO / "tests" / "gpu").glob("*.py")]
    benches = (REPO / "tests" / "benchmarks").glob("bench_*.py")
    modules += [f"tests.benchmarks.{p.stem}" for p in benches]
    modules += [
        "tests.benchmarks.run_all",
        "tests.benchmarks.launch_overhead",
        "tests.benchmarks.decode.bench",
        "tests.compat.gpu_check",
    ]
    return [m for m in modules if m not in CPU_SIDE and not m.endswith("__init__")]


def module_path(name: str) -> Path | None:
    base = REPO.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def imported(name: str) -> Iterator[str]:
    """Every module `name` imports (absolute imports; `from a import b` yields a.b when b is
    a module, else a)."""
    path = module_path(name)
    if path is None:
        return
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                yield child if module_path(child) is not None else node.module


def reached_from(entry: str) -> dict[str, str]:
    """Each first-party module reachable from `entry`, with the module that imports it."""
    seen = {entry: ""}
    todo = [entry]
    while todo:
        current = todo.pop()
        for name in imported(current):
            top = name.split(".")[0]
            if top not in FIRST_PARTY or name in seen or name in CPU_SIDE:
                continue
            seen[name] = current
            if top not in COMPILER:
                todo.append(name)
    return seen


def test_the_walk_sees_compiler_imports() -> None:
    """The check can fail: the CPU-side bundle builder does reach the compiler."""
    assert any(m.split(".")[0] in COMPILER for m in reached_from("tests.gpu.build_artifacts"))


def test_no_gpu_host_module_reaches_the_compiler() -> None:
    found = []
    for entry in gpu_host_entries():
        reached = reached_from(entry)
        for name, by in reached.items():
            if name.split(".")[0] in COMPILER:
                found.append(f"{entry}: {by} imports {name}")
    assert not found, "\n".join(found)
