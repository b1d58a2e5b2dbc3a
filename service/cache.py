"""Content-addressed artifact cache: the request key and the on-disk store.

The key is SHA-256 over a canonical, length-prefixed encoding of everything that decides
the cubin: a domain tag, the compiler version, every source (name and text), the entry,
the generics, target, opt level, host arch, lineinfo and the tileiras fingerprint. Bump
`KEY_DOMAIN` to invalidate every entry at once.

`DiskCache` stores one file per key, `<root>/<key[:2]>/<key>.artifact`, written atomically
(temp file in the same folder, fsync, `os.replace`). Each file starts with a header holding
a magic, the payload length and the payload's SHA-256, re-checked on every read; an entry
that fails the check is removed and reported as a miss. Cache I/O never fails a compile:
errors are logged and turn into misses or skipped writes.

A hit is executable device code, so the root is private (0700) and a root that other users
can write is refused (the cache then stays disabled). `ArtifactCache` is the interface a
shared store (Redis, S3) will implement.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from lowering.pipeline import COMPILER_VERSION, CompileRequest

log = logging.getLogger(__name__)

KEY_DOMAIN = "cutile-serve-request-v1"
APP_DIR = "cutile-serve"

_MAGIC = b"CTSVART1"
_HEADER = struct.Struct(">8s32sQ")  # magic, sha256(payload), len(payload)
_KEY = re.compile(r"[0-9a-f]{64}")


# --------------------------------------------------------------------------- keys


@dataclass(frozen=True)
class RequestKey:
    sha256: str  # lowercase hex
    size: int  # bytes of the canonical encoding that was hashed

    @property
    def short(self) -> str:
        """The first 8 hex digits, for file names and logs."""
        return self.sha256[:8]


def request_key(
    request: CompileRequest,
    *,
    tileiras_fingerprint: str,
    compiler_version: str = COMPILER_VERSION,
) -> RequestKey:
    """The cache key of `request` compiled by this compiler with this tileiras."""
    encoding = canonical_encoding(
        request, tileiras_fingerprint=tileiras_fingerprint, compiler_version=compiler_version
    )
    return RequestKey(hashlib.sha256(encoding).hexdigest(), len(encoding))


def canonical_encoding(
    request: CompileRequest, *, tileiras_fingerprint: str, compiler_version: str
) -> bytes:
    """Every key input as u64-length-prefixed UTF-8 fields; lists carry their count."""
    fields: list[str] = [KEY_DOMAIN, compiler_version, str(len(request.sources))]
    for source in request.sources:
        fields += [source.name, source.text]
    fields += [request.entry, str(len(request.generics))]
    for name, value in sorted(request.generics):
        fields += [name, value]
    fields += [str(len(request.generic_args)), *request.generic_args]
    fields += [
        request.target,
        str(request.opt_level),
        request.host_arch,
        "1" if request.lineinfo else "0",
        tileiras_fingerprint,
    ]
    return b"".join(_field(text.encode("utf-8")) for text in fields)


def _field(data: bytes) -> bytes:
    return struct.pack(">Q", len(data)) + data


# --------------------------------------------------------------------------- store


@dataclass(frozen=True)
class CacheEntry:
    """A successful compile: the cubin and the serialized `contract_pb2.LaunchContract`."""

    cubin: bytes
    contract: bytes


class ArtifactCache(Protocol):
    def get(self, key: str) -> CacheEntry | None: ...

    def put(self, key: str, entry: CacheEntry) -> bool: ...

    def delete(self, key: str) -> None: ...


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/cutile-serve`, else `~/.cache/cutile-serve`."""
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / APP_DIR


class DiskCache:
    """One checksummed file per key under a private root; see the module docstring."""

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self._usable: bool | None = None

    def get(self, key: str) -> CacheEntry | None:
        path = self._path(key)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("cache read failed for %s: %s", key[:8], exc)
            return None
        entry = _decode(data, key)
        if entry is None:
            log.warning("cache entry %s is corrupt; removing it", key[:8])
            self.delete(key)
        return entry

    def put(self, key: str, entry: CacheEntry) -> bool:
        """Store `entry`; False (and a log line) when it could not be written."""
        path = self._path(key)
        if path is None:
            return False
        try:
            path.parent.mkdir(mode=0o700, exist_ok=True)
            _write_atomically(path, _encode(key, entry))
        except OSError as exc:
            log.warning("cache write failed for %s: %s", key[:8], exc)
            return False
        return True

    def delete(self, key: str) -> None:
        path = self._path(key)
        if path is None:
            return
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("cache delete failed for %s: %s", key[:8], exc)

    def _path(self, key: str) -> Path | None:
        """The file of `key`; None for a malformed key or an unusable root."""
        if not _KEY.fullmatch(key):
            raise ValueError(f"not a sha256 hex key: {key!r}")
        if not self._root_usable():
            return None
        return self.root / key[:2] / f"{key}.artifact"

    def _root_usable(self) -> bool:
        if self._usable is None:
            self._usable = self._prepare_root()
        return self._usable

    def _prepare_root(self) -> bool:
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = self.root.stat()
        except OSError as exc:
            log.warning("cache disabled: cannot create %s: %s", self.root, exc)
            return False
        if info.st_mode & 0o022 or info.st_uid != os.getuid():
            log.warning(
                "cache disabled: %s is writable by other users or not owned by this user",
                self.root,
            )
            return False
        return True


def _encode(key: str, entry: CacheEntry) -> bytes:
    payload = b"".join(_field(part) for part in (key.encode("ascii"), entry.cubin, entry.contract))
    return _HEADER.pack(_MAGIC, hashlib.sha256(payload).digest(), len(payload)) + payload


def _decode(data: bytes, key: str) -> CacheEntry | None:
    """The entry in `data` if its header, checksum and key all check out."""
    if len(data) < _HEADER.size:
        return None
    magic, checksum, length = _HEADER.unpack_from(data)
    payload = data[_HEADER.size :]
    if magic != _MAGIC or length != len(payload):
        return None
    if hashlib.sha256(payload).digest() != checksum:
        return None
    parts = _split_fields(payload)
    if parts is None or len(parts) != 3 or parts[0] != key.encode("ascii"):
        return None
    return CacheEntry(cubin=parts[1], contract=parts[2])


def _split_fields(payload: bytes) -> list[bytes] | None:
    parts, offset = [], 0
    while offset < len(payload):
        if offset + 8 > len(payload):
            return None
        (length,) = struct.unpack_from(">Q", payload, offset)
        offset += 8
        if offset + length > len(payload):
            return None
        parts.append(payload[offset : offset + length])
        offset += length
    return parts


def _write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".artifact")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
