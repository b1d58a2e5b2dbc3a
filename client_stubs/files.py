"""Reading a file that someone else may have put in place: a bundle's cubin, a cache entry.

`read_regular_file(path, limit)` reads a regular file of at most `limit` bytes and nothing
else: a FIFO would block the read (it is opened without waiting and refused), a device such
as /dev/zero would never end it, and a file larger than any artifact would only fill memory.
With `follow_links=False` a symlink is refused too (a cache's entries are never links).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 20


class NotAFile(ValueError):
    """What is at the path is no file to read: its kind, or its size, says why."""


def read_regular_file(path: Path | str, limit: int, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them; `NotAFile` for a FIFO,
    device, folder or socket, a file past `limit` (also one growing past it while read) or,
    with `follow_links=False`, a symlink; `OSError` as `open` raises it otherwise."""
    flags = _FLAGS if follow_links else _FLAGS | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_links:
            raise NotAFile("a symbolic link") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotAFile("not a regular file")
        if info.st_size > limit:
            raise NotAFile(f"larger than {limit} bytes")
        chunks = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, _CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            raise NotAFile(f"larger than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)
