"""Compile a batch through a running `cutile-serve` (`cutile-compile --server`).

`RemoteCompiler.compile_all` sends the requests as `CompileBatch` items (chunks of at most
`chunk` items; every distinct source file once per chunk) and yields `(index, Outcome)`
in completion order, the same outcomes the local engine gives: an artifact (a cubin the
server did not inline is fetched with `GetArtifact`), or the server's diagnostics
rebuilt over the local sources. An artifact whose digests disagree, or whose function,
target or request key would not make a plain bundle file name, is a `CTS-INTEGRITY` error.
Items the server answers RESOURCE_EXHAUSTED are sent again after its RetryInfo delay (a few
rounds); any other RPC failure becomes one error diagnostic, code `CTS-<STATUS>`, on the
kernels it hit.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from pathlib import PurePath

import grpc
from google.rpc import code_pb2, error_details_pb2, status_pb2

from client_stubs.errors import IntegrityError
from client_stubs.integrity import MAX_CUBIN_BYTES, verify
from lowering.pipeline import CompileRequest
from parser.front_end import Diagnostic, DiagnosticCode, Severity, SourceFile
from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc
from service.cache.artifact import Artifact
from service.cache.keys import NO_KEY, RequestKey
from service.cli.client_convert import batch_item, diagnostic_from_proto
from service.cli.manifest import file_name_problem
from service.compile.engine import Outcome

log = logging.getLogger(__name__)

DEFAULT_CHUNK = 256
DEFAULT_TIMEOUT_S = 3600.0
RETRY_ROUNDS = 5
MAX_MESSAGE_BYTES = 64 << 20


class RemoteCompiler:
    def __init__(
        self,
        address: str,
        *,
        token: str | None = None,
        root_certificates: bytes | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        chunk: int = DEFAULT_CHUNK,
    ) -> None:
        options = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)]
        if root_certificates is None:  # a token then travels in plaintext, as the server warns
            self._channel = grpc.insecure_channel(address, options=options)
        else:
            credentials = grpc.ssl_channel_credentials(root_certificates)
            self._channel = grpc.secure_channel(address, credentials, options=options)
        self._stub = compile_pb2_grpc.CompileServiceStub(self._channel)
        self._metadata = () if token is None else (("authorization", f"Bearer {token}"),)
        self.address = address
        self.timeout_s = timeout_s
        self.chunk = chunk

    def close(self) -> None:
        self._channel.close()

    def compile_all(self, requests: Sequence[CompileRequest]) -> Iterator[tuple[int, Outcome]]:
        pending = list(range(len(requests)))
        for round_ in range(RETRY_ROUNDS + 1):
            exhausted: list[int] = []
            delay = 0.0
            for start in range(0, len(pending), self.chunk):
                indices = pending[start : start + self.chunk]
                for index, outcome, retry_after in self._batch(requests, indices):
                    if retry_after is not None and round_ < RETRY_ROUNDS:
                        exhausted.append(index)
                        delay = max(delay, retry_after)
                    else:
                        yield index, outcome
            if not exhausted:
                return
            log.info("server busy: retrying %d kernel(s) in %.1f s", len(exhausted), delay)
            time.sleep(delay)
            pending = exhausted

    def _batch(
        self, requests: Sequence[CompileRequest], indices: list[int]
    ) -> Iterator[tuple[int, Outcome, float | None]]:
        """(request index, outcome, retry delay when the server was full) per item."""
        sources: list[SourceFile] = []
        position: dict[tuple[str, str], int] = {}
        items = []
        for index in indices:
            where = []
            for source in requests[index].sources:
                ident = (source.name, source.text)
                if ident not in position:
                    position[ident] = len(sources)
                    sources.append(source)
                where.append(position[ident])
            items.append(batch_item(requests[index], where))
        names = wire_names([s.name for s in sources])
        files = dict(zip(names, sources, strict=True))  # the server's names for our files
        message = compile_pb2.CompileBatchRequest(
            sources=[compile_pb2.SourceFile(name=n, text=s.text) for n, s in files.items()],
            items=items,
        )
        answered: set[int] = set()
        try:
            stream = self._stub.CompileBatch(
                message, timeout=self.timeout_s, metadata=self._metadata
            )
            for result in stream:
                if result.index >= len(indices) or result.index in answered:
                    continue
                answered.add(result.index)
                index = indices[result.index]
                yield index, *self._outcome(files, result)
        except grpc.RpcError as exc:
            failure = _rpc_failure(exc, self.address)
            for position_, index in enumerate(indices):
                if position_ not in answered:
                    yield index, Outcome(NO_KEY, (failure,)), None

    def _outcome(
        self, files: dict[str, SourceFile], result: compile_pb2.CompileBatchResult
    ) -> tuple[Outcome, float | None]:
        response = result.response
        diagnostics = tuple(diagnostic_from_proto(d, files) for d in response.diagnostics)
        status = result.status
        if status.code == code_pb2.OK and response.ok:
            artifact = response.artifact
            key = RequestKey(artifact.request_key.sha256, artifact.request_key.size)
            try:
                if not artifact.cubin:
                    artifact.cubin = self._fetch_cubin(artifact)
                verify(artifact, f"the server's artifact {key.short}")
                _check_file_names(artifact, key)
            except IntegrityError as exc:  # written into no bundle
                code = DiagnosticCode("CTS-INTEGRITY", "integrity", "an artifact failed its check")
                return Outcome(NO_KEY, (Diagnostic(Severity.ERROR, code, str(exc)),)), None
            outcome = Outcome(
                key,
                diagnostics,
                Artifact(artifact.cubin, artifact.contract),
                cache_hit=response.cache == compile_pb2.CACHE_OUTCOME_HIT,
            )
            return outcome, None
        if result.HasField("response") and diagnostics:  # the kernel does not compile
            return Outcome(NO_KEY, diagnostics), None
        failure = _status_diagnostic(status)
        return Outcome(NO_KEY, (failure,)), _retry_delay(status)

    def _fetch_cubin(self, artifact: compile_pb2.Artifact) -> bytes:
        """A cubin the server left out of the batch result, by its request key."""
        request = compile_pb2.GetArtifactRequest(key=artifact.request_key)
        announced = artifact.cubin_digest.size
        if not 0 < announced <= MAX_CUBIN_BYTES:
            raise IntegrityError(f"the server announced a {announced}-byte cubin")
        data = bytearray()
        for chunk in self._stub.GetArtifact(
            request, timeout=self.timeout_s, metadata=self._metadata
        ):
            if chunk.data:
                if chunk.offset != len(data) or len(data) + len(chunk.data) > announced:
                    raise IntegrityError("the server's cubin chunks do not fit its digest")
                data.extend(chunk.data)
        return bytes(data)


def _check_file_names(artifact: compile_pb2.Artifact, key: RequestKey) -> None:
    """The bundle's file names are built of the contract's function and target and the
    request key: a server's reply must not name a path (`../../x`) with them."""
    contract = artifact.contract
    problem = file_name_problem(contract.kernel.function, contract.target.sm, key.sha256)
    if problem is not None:
        raise IntegrityError(f"the server's artifact: {problem}")


def wire_names(paths: Sequence[str]) -> list[str]:
    """Plain, distinct file names for `paths` (the server accepts no paths): the base
    name, numbered when two files share one (`k.rs`, `k-2.rs`)."""
    names: list[str] = []
    for path in paths:
        base = PurePath(path).name or "source.rs"
        stem, dot, suffix = base.rpartition(".")
        name, number = base, 1
        while name in names:
            number += 1
            name = f"{stem}-{number}.{suffix}" if dot else f"{base}-{number}"
        names.append(name)
    return names


def _status_diagnostic(status: status_pb2.Status) -> Diagnostic:
    name = code_pb2.Code.Name(status.code) if status.code in code_pb2.Code.values() else "UNKNOWN"
    notes = []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad_request = error_details_pb2.BadRequest()
            detail.Unpack(bad_request)
            notes += [f"{v.field}: {v.description}" for v in bad_request.field_violations]
    code = DiagnosticCode(f"CTS-{name}", name.lower(), "the server did not compile the kernel")
    return Diagnostic(Severity.ERROR, code, f"server: {status.message}", notes=tuple(notes))


def _retry_delay(status: status_pb2.Status) -> float | None:
    if status.code != code_pb2.RESOURCE_EXHAUSTED:
        return None
    for detail in status.details:
        if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            info = error_details_pb2.RetryInfo()
            detail.Unpack(info)
            return info.retry_delay.ToNanoseconds() / 1e9
    return 1.0


def _rpc_failure(exc: grpc.RpcError, address: str) -> Diagnostic:
    code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
    details = exc.details() if hasattr(exc, "details") else str(exc)
    name = code.name if code is not None else "UNKNOWN"
    diagnostic_code = DiagnosticCode(f"CTS-{name}", name.lower(), "the compile RPC failed")
    return Diagnostic(Severity.ERROR, diagnostic_code, f"server {address}: {details}")
