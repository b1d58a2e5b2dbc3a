"""lowering.build_id: the compiler version names the build, so caches tell builds apart."""

from __future__ import annotations

import re

from lowering import build_id
from lowering.pipeline import COMPILER_VERSION


def test_the_version_is_the_release_and_a_digest_of_the_source() -> None:
    assert re.fullmatch(r"0\.1\.0\+[0-9a-f]{12}", COMPILER_VERSION)
    assert build_id.compiler_version() == COMPILER_VERSION


def test_a_change_to_the_compilers_source_changes_the_build(tmp_path, monkeypatch) -> None:
    for name in build_id._SOURCES:
        path = tmp_path / name
        if path.suffix:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("# v1\n")
        else:
            path.mkdir()
    source = tmp_path / "lowering" / "pass.py"
    source.write_text("x = 1\n")
    monkeypatch.setattr(build_id, "_ROOT", tmp_path)
    builds = []
    # the compiler's code, the contract's schema, and the mapping onto it that caches store
    for changed in (source, tmp_path / "protos/generated/cutile/compile/v1/contract_pb2.py"):
        build_id.build_id.cache_clear()
        builds.append(build_id.build_id())
        changed.write_text(changed.read_text() + "# changed\n")
    build_id.build_id.cache_clear()
    builds.append(build_id.build_id())
    (tmp_path / "service" / "convert.py").write_text("x = 3\n")
    build_id.build_id.cache_clear()
    builds.append(build_id.build_id())
    # the occupancy variant's numbers: its contract carries min_tile_blocks
    (tmp_path / "client_stubs" / "occupancy.py").write_text("MIN_TILE_BLOCKS = 2048\n")
    build_id.build_id.cache_clear()
    builds.append(build_id.build_id())
    assert len(set(builds)) == 5
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
