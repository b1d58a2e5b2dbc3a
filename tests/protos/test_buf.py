"""buf lint and buf breaking over the protos (buf comes from the npm package
@bufbuild/buf, which .ci/run installs into .tools/buf)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from protos.buf_image import CONFIG, PACKAGE_DIR, build_image, checkout_protos
from protos.regenerate import PROTO_ROOT

REPO_ROOT = PROTO_ROOT.parent
LOCAL_BUF = REPO_ROOT / ".tools" / "buf" / "node_modules" / ".bin" / "buf"


@pytest.fixture(scope="module")
def buf() -> str:
    found = os.environ.get("BUF") or (str(LOCAL_BUF) if LOCAL_BUF.exists() else None)
    found = found or shutil.which("buf")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("buf is not installed; .ci/run installs it with npm")
        pytest.skip("buf not installed: npm install --prefix .tools/buf @bufbuild/buf")
    return found


def _run_buf(buf: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [buf, *args, "--config", str(CONFIG)], capture_output=True, text=True, timeout=120
    )


def test_buf_lint(buf: str, tmp_path: Path) -> None:
    image = build_image(PROTO_ROOT, tmp_path / "now.binpb")
    result = _run_buf(buf, "lint", str(image), "--path", PACKAGE_DIR.as_posix())
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("revision", ["HEAD", "HEAD~1"])
def test_no_breaking_change_since(buf: str, revision: str, tmp_path: Path) -> None:
    old_root = checkout_protos(revision, tmp_path / "old")
    if old_root is None:
        pytest.skip(f"{revision} has no protos (or no such revision)")
    now = build_image(PROTO_ROOT, tmp_path / "now.binpb")
    before = build_image(old_root, tmp_path / "before.binpb")
    result = _run_buf(
        buf, "breaking", str(now), "--against", str(before), "--path", PACKAGE_DIR.as_posix()
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_breaking_changes_are_caught(buf: str, tmp_path: Path) -> None:
    changed = tmp_path / "changed"
    shutil.copytree(PROTO_ROOT / "cutile", changed / "cutile")
    proto = changed / PACKAGE_DIR / "compile.proto"
    text = proto.read_text()
    assert "string entry = 2;" in text
    proto.write_text(text.replace("string entry = 2;", "string entry = 22;", 1))
    now = build_image(changed, tmp_path / "now.binpb")
    before = build_image(PROTO_ROOT, tmp_path / "before.binpb")
    result = _run_buf(
        buf, "breaking", str(now), "--against", str(before), "--path", PACKAGE_DIR.as_posix()
    )
    assert result.returncode != 0
    assert "entry" in result.stdout + result.stderr
