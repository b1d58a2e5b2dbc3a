"""A verified compile product as every cache layer and the server hold it: the cubin and
its launch contract, with their digests computed once."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from client_stubs.integrity import contract_bytes, digest_of
from protos.generated.cutile.compile.v1 import compile_pb2, contract_pb2
from service.convert import digest


@dataclass(frozen=True)
class Artifact:
    cubin: bytes
    contract: contract_pb2.LaunchContract

    @functools.cached_property
    def cubin_digest(self) -> compile_pb2.Digest:
        """The cubin's digest (computed once: hits from memory reuse it)."""
        return digest(self.cubin)

    @functools.cached_property
    def contract_digest(self) -> compile_pb2.Digest:
        """The digest of the contract's deterministic serialization (what hosts verify)."""
        return digest_of(contract_bytes(self.contract))
