"""lowering.build_id: the compiler version names the build, so caches tell builds apart."""

from __future__ import annotations

import re

from lowering import build_id
from lowering.pipeline import COMPILER_VERSION


def test_the_version_is_the_release_and_a_digest_of_the_source() -> None:
    assert re.fullmatch(r"0\.1\.0\+[0-9a-f]{12}", COMPILER_VERSION)
    assert build_id.compiler_version() == COMPILER_VERSION


def test_a_change_to_the_compilers_source_changes_the_build(tmp_path, monkeypatch) -> None:
    (tmp_path / "parser").mkdir()
    (tmp_path / "lowering").mkdir()
    (tmp_path / "client_stubs").mkdir()
    (tmp_path / "client_stubs" / "element_table.py").write_text("ROWS = ()\n")
    source = tmp_path / "lowering" / "pass.py"
    source.write_text("x = 1\n")
    monkeypatch.setattr(build_id, "_ROOT", tmp_path)
    build_id.build_id.cache_clear()
    first = build_id.build_id()
    source.write_text("x = 2\n")
    build_id.build_id.cache_clear()
    assert build_id.build_id() != first
    build_id.build_id.cache_clear()


def test_one_version_string_for_the_package_the_tools_and_the_service() -> None:
    from pathlib import Path

    import tomllib

    from service.server.servicer import SERVICE_VERSION

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    assert tomllib.loads(pyproject.read_text())["project"]["version"] == build_id.RELEASE
    assert build_id.RELEASE == SERVICE_VERSION
    expected = f"cutile-serve 0.1.0 (compiler {COMPILER_VERSION})"
    assert build_id.version_text("cutile-serve") == expected
