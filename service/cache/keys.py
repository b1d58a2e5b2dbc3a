"""The request key: what the artifact cache is addressed by.

The key is SHA-256 over a canonical, length-prefixed encoding of everything that decides
the cubin: a domain tag, the compiler version, every source's text (in order: the entry's
file first), the entry, the generics, target, opt level, host arch, lineinfo and the
tileiras fingerprint. File names are not part of it: they decide no byte of the cubin or the
contract (whose `source_sha256` covers the texts only), so `add.rs`, `/abs/path/add.rs` and
the base name `cutile-compile --server` sends give one key, one cache entry and one bundle
file name; only diagnostics, which are never cached, name the file as the user gave it.
Bump `KEY_DOMAIN` to invalidate every entry at once.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from lowering.pipeline import COMPILER_VERSION, CompileRequest

KEY_DOMAIN = "cutile-serve-request-v4"  # v4: file names left out


@dataclass(frozen=True)
class RequestKey:
    sha256: str  # lowercase hex
    size: int  # bytes of the canonical encoding that was hashed

    @property
    def short(self) -> str:
        """The first 8 hex digits, for file names and logs."""
        return self.sha256[:8]


NO_KEY = RequestKey("0" * 64, 0)  # what an outcome with no compiled request carries


def request_key(
    request: CompileRequest,
    *,
    tileiras_fingerprint: str,
    compiler_version: str = COMPILER_VERSION,
) -> RequestKey:
    """The cache key of `request` compiled by this compiler with this tileiras (the
    encoding is hashed field by field: a source's bytes are never copied)."""
    digest = hashlib.sha256()
    size = 0
    for field in _key_fields(
        request, tileiras_fingerprint=tileiras_fingerprint, compiler_version=compiler_version
    ):
        digest.update(struct.pack(">Q", len(field)))
        digest.update(field)
        size += 8 + len(field)
    return RequestKey(digest.hexdigest(), size)


def _key_fields(
    request: CompileRequest, *, tileiras_fingerprint: str, compiler_version: str
) -> list[bytes]:
    sources = [source.data for source in request.sources]  # content, not the path
    fields: list[str] = [request.entry, str(len(request.generics))]
    for name, value in sorted(request.generics):
        fields += [name, value]
    fields += [str(len(request.generic_args)), *request.generic_args]
    fields += [
        request.arch,
        str(request.opt_level),
        request.host_arch,
        "1" if request.lineinfo else "0",
        "exact" if request.exact_accumulators else "wide",
        *(("exact f32 products",) if request.exact_f32_products else ()),
        *(("early launch",) if request.early_launch else ()),
        *((f"occupancy {request.occupancy}",) if request.occupancy else ()),
        tileiras_fingerprint,
        str(len(request.specialization)),
    ]
    for facts in sorted(request.specialization, key=lambda f: f.param):
        fields += [facts.param, _axes(facts.dim_divisors), _axes(facts.stride_divisors)]
        fields += [str(facts.base_align), "1" if facts.unit_last_stride else "*"]
    head = [KEY_DOMAIN, compiler_version, str(len(request.sources))]
    return [
        *(text.encode("utf-8") for text in head),
        *sources,
        *(text.encode("utf-8") for text in fields),
    ]


def _axes(divisors: tuple[int, ...]) -> str:
    return ",".join(str(d) for d in divisors)
