"""What a host checks before it trusts an artifact: the cubin's digest, the contract's digest
and, when it holds the daemon's signing key, the signature over both.

The contract decides what every launch checks (shapes, assumptions, hoisted bounds checks),
so a contract that changed on the way (a cache entry, a proxy, a server that strips its
checks) must not launch: both digests are required, never optional. The contract's digest
is over its deterministic serialization (fields in number order, no maps), which every
protobuf implementation writes alike. The signature is HMAC-SHA256 with a key the daemon
and its hosts share (`cutile-serve --signing-key-file`, `CompileClient(signing_key=...)`):
a host with the key accepts only artifacts a daemon with the key produced.

The service computes digests and signatures with these same functions.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from typing import TYPE_CHECKING

from client_stubs.errors import IntegrityError
from protos.generated.cutile.compile.v1 import contract_pb2

if TYPE_CHECKING:  # the service messages need googleapis' protos, which a host that only
    # opens bundles need not have: they are imported where an artifact message is handled
    from protos.generated.cutile.compile.v1 import compile_pb2

SIGNATURE_DOMAIN = b"cutile-serve-artifact-v1"
MAX_CUBIN_BYTES = 64 << 20  # what a host accepts (the service's tileiras output cap)


def contract_bytes(contract: contract_pb2.LaunchContract) -> bytes:
    return contract.SerializeToString(deterministic=True)


def sources_sha256(texts: Iterable[bytes]) -> str:
    """A contract's `source_sha256`: sha256 over each source's UTF-8 text, length-prefixed,
    in order (not the file names). The compiler writes it, a client checks a reply by it."""
    digest = hashlib.sha256()
    for data in texts:
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def digest_of(data: bytes) -> compile_pb2.Digest:
    from protos.generated.cutile.compile.v1 import compile_pb2

    return compile_pb2.Digest(sha256=hashlib.sha256(data).hexdigest(), size=len(data))


def signature(key: bytes, artifact: compile_pb2.Artifact) -> bytes:
    """HMAC-SHA256 over the domain, both digests and the request key."""
    message = b"\0".join(
        (
            SIGNATURE_DOMAIN,
            artifact.cubin_digest.sha256.encode(),
            artifact.contract_digest.sha256.encode(),
            artifact.request_key.sha256.encode(),
        )
    )
    return hmac.new(key, message, hashlib.sha256).digest()


def seal(artifact: compile_pb2.Artifact, key: bytes | None = None) -> compile_pb2.Artifact:
    """Fill in `artifact`'s digests (and signature, given the key); returns it."""
    artifact.cubin_digest.CopyFrom(digest_of(artifact.cubin))
    artifact.contract_digest.CopyFrom(digest_of(contract_bytes(artifact.contract)))
    if key is not None:
        artifact.signature = signature(key, artifact)
    return artifact


def verify(artifact: compile_pb2.Artifact, what: str, key: bytes | None = None) -> None:
    """IntegrityError unless both digests are present and match (and, given `key`, the
    signature is the one a daemon with that key makes)."""
    cubin, contract = artifact.cubin_digest, artifact.contract_digest
    if not cubin.sha256 or not contract.sha256:
        missing = "cubin" if not cubin.sha256 else "contract"
        raise IntegrityError(f"{what}: the artifact carries no {missing} digest; refusing it")
    if len(artifact.cubin) > MAX_CUBIN_BYTES:
        raise IntegrityError(f"{what}: a {len(artifact.cubin)}-byte cubin is over the cap")
    _check(what, "cubin", cubin, artifact.cubin)
    _check(what, "contract", contract, contract_bytes(artifact.contract))
    if key is not None and not hmac.compare_digest(artifact.signature, signature(key, artifact)):
        state = "an invalid" if artifact.signature else "no"
        raise IntegrityError(f"{what}: {state} signature for this host's signing key")


def _check(what: str, part: str, expected: compile_pb2.Digest, data: bytes) -> None:
    actual = hashlib.sha256(data).hexdigest()
    size_differs = expected.size and expected.size != len(data)
    if actual != expected.sha256.lower() or size_differs:
        raise IntegrityError(
            f"{what}: {part} sha256 {actual} ({len(data)} bytes) differs from the digest "
            f"{expected.sha256} ({expected.size} bytes) it came with"
        )
