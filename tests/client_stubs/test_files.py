"""client_stubs.files: only a regular file of bounded size is read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from client_stubs.files import NotAFile, read_regular_file


def test_a_regular_file_within_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_regular_file(path, 100) == b"x" * 100
    (tmp_path / "link").symlink_to(path)
    assert read_regular_file(tmp_path / "link", 100) == b"x" * 100  # links followed by default
    with pytest.raises(NotAFile, match="a symbolic link"):
        read_regular_file(tmp_path / "link", 100, follow_links=False)


def _sparse_tebibyte(path: Path) -> None:
    with path.open("wb") as file:
        file.truncate(1 << 40)  # takes no disk


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (os.mkfifo, "not a regular file"),  # opening it to read would wait for a writer
        (Path.mkdir, "not a regular file"),
        (lambda p: p.symlink_to("/dev/zero"), "not a regular file"),  # reading would not end
        (lambda p: p.write_bytes(b"x" * 101), "larger than 100 bytes"),
        (_sparse_tebibyte, "larger than 100 bytes"),
    ],
)
def test_anything_else_is_not_a_file_to_read(tmp_path: Path, make, reason: str) -> None:
    path = tmp_path / "f"
    make(path)
    with pytest.raises(NotAFile, match=reason):
        read_regular_file(path, 100)


def test_a_missing_file_is_the_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_regular_file(tmp_path / "missing", 100)
