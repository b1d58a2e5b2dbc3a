"""service.server.servicer over a real grpc.aio server and a real channel.

The first group injects a fake compile function; the end-to-end group compiles
rust_examples/add.rs with the real compiler and the real tileiras.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

from lowering.cubin_info import ELF_MAGIC, function_symbols
from lowering.pipeline import CompileResult
from lowering.tileiras import ADDRESS_SPACE_CAP, FILE_SIZE_CAP, TileirasError
from parser.codes import COMPILE_TOO_COSTLY, INTERNAL_ERROR
from parser.cst_to_ast import MAX_NESTING_DEPTH
from parser.diagnostics import Diagnostic, Severity
from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc, contract_pb2
from service.cache.disk import DiskCache
from service.cache.layered import LayeredCache
from service.cache.memory import MemoryCache
from service.cache.redis import RedisCache
from service.compile.engine import CompileEngine
from service.compile.worker_pool import WorkerPool
from service.convert import Limits
from service.server.metrics import ServiceMetrics
from service.server.servicer import DEFAULT_SERVICE_LIMITS, SERVICE_NAME, ServiceLimits
from tests.service import worker_targets

TIMEOUT_S = 60


def _request(text: str = "mod k {}", name: str = "add.rs", **fields) -> compile_pb2.CompileRequest:
    return compile_pb2.CompileRequest(
        sources=[compile_pb2.SourceFile(name=name, text=text)],
        entry=fields.pop("entry", "add"),
        generics=fields.pop("generics", {"B": "128"}),
        target=fields.pop("target", "sm_90"),
        **fields,
    )


def _call(server, request: compile_pb2.CompileRequest) -> compile_pb2.CompileResponse:
    with grpc.insecure_channel(server.target) as channel:
        return compile_pb2_grpc.CompileServiceStub(channel).Compile(request, timeout=TIMEOUT_S)


def _rpc_error(server, request: compile_pb2.CompileRequest) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        _call(server, request)
    return caught.value


def _health(server, service: str) -> int:
    with grpc.insecure_channel(server.target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        request = health_pb2.HealthCheckRequest(service=service)
        return stub.Check(request, timeout=TIMEOUT_S).status


def _details(error: grpc.RpcError) -> tuple[list, list]:
    """(BadRequest field violations, ErrorInfo reasons) from the rich status."""
    status = rpc_status.from_call(error)
    assert status is not None, "no grpc-status-details-bin trailer"
    violations, reasons = [], []
    for detail in status.details:
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad_request = error_details_pb2.BadRequest()
            detail.Unpack(bad_request)
            violations += [(v.field, v.description) for v in bad_request.field_violations]
        elif detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            assert info.domain == "cutile.compile.v1"
            reasons.append(info.reason)
    return violations, reasons


@pytest.fixture
def fake_server(start_server, fake_compiler, fake_assembler, tmp_path: Path):
    engine = CompileEngine(
        fake_assembler, cache=DiskCache(tmp_path / "cache"), compile_fn=fake_compiler
    )
    return start_server(engine)


# --------------------------------------------------------------------------- fake compiler


def test_miss_then_hit_with_identical_bytes(fake_server, fake_compiler) -> None:
    first = _call(fake_server, _request())
    second = _call(fake_server, _request())
    assert first.ok and first.cache == compile_pb2.CACHE_OUTCOME_MISS
    assert second.ok and second.cache == compile_pb2.CACHE_OUTCOME_HIT
    assert second.artifact == first.artifact
    assert len(fake_compiler.calls) == 1
    artifact = first.artifact
    assert artifact.cubin_digest.size == len(artifact.cubin)
    assert len(artifact.cubin_digest.sha256) == 64
    assert len(artifact.request_key.sha256) == 64 and artifact.request_key.size > 0
    assert artifact.contract.kernel.function == "add"
    assert first.timings.tileiras_ms == 2.0


def test_request_defaults_reach_the_compiler(fake_server, fake_compiler) -> None:
    _call(fake_server, _request(target="", generics={}, generic_args=["128"]))
    (request,) = fake_compiler.calls
    assert (request.arch, request.opt_level, request.host_arch) == ("sm_90", 3, "x86_64")
    assert request.generic_args == ("128",)


def test_skip_cache(fake_server, fake_compiler) -> None:
    _call(fake_server, _request())
    again = _call(fake_server, _request(options=compile_pb2.CompileOptions(skip_cache=True)))
    assert again.cache == compile_pb2.CACHE_OUTCOME_MISS
    assert len(fake_compiler.calls) == 2


def test_invalid_request_has_field_violations(fake_server, fake_compiler) -> None:
    error = _rpc_error(fake_server, _request(entry="", target="sm_42"))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "entry" in error.details()
    violations, reasons = _details(error)
    assert [field for field, _ in violations] == ["entry", "target"]
    assert "sm_90" in violations[1][1]  # the supported targets are listed
    assert reasons == ["INVALID_REQUEST"]
    assert fake_compiler.calls == []


def test_source_limit(start_server, fake_compiler, fake_assembler) -> None:
    engine = CompileEngine(fake_assembler, compile_fn=fake_compiler)
    server = start_server(engine, limits=Limits(max_source_bytes=100))
    error = _rpc_error(server, _request(text="x" * 101))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert _details(error)[0][0][0] == "sources"


def test_compile_error_is_ok_rpc_with_diagnostics(fake_server, fake_compiler, make_error) -> None:
    fake_compiler.result = CompileResult(diagnostics=(make_error("add.rs"),))
    response = _call(fake_server, _request())
    assert not response.ok
    assert not response.HasField("artifact")
    (diagnostic,) = response.diagnostics
    assert (diagnostic.spans[0].line_start, diagnostic.spans[0].col_start) == (2, 9)
    assert "--> add.rs:2:9" in diagnostic.rendered
    _call(fake_server, _request())
    assert len(fake_compiler.calls) == 2  # nothing was cached


def test_tileiras_failure_is_carried_and_not_cached(fake_server, fake_compiler) -> None:
    fake_compiler.raises = TileirasError("exit code 3", 3, "error: bad op", ("tileiras", "x"))
    response = _call(fake_server, _request())
    assert not response.ok
    (diagnostic,) = response.diagnostics
    assert diagnostic.code == "CT0901"
    assert "exit code 3" in diagnostic.message
    assert "error: bad op" in diagnostic.rendered
    fake_compiler.raises = None
    assert _call(fake_server, _request()).cache == compile_pb2.CACHE_OUTCOME_MISS


def test_unexpected_exception_is_internal_without_traceback(
    fake_server, fake_compiler, caplog
) -> None:
    fake_compiler.raises = ZeroDivisionError("secret internals")
    error = _rpc_error(fake_server, _request())
    assert error.code() == grpc.StatusCode.INTERNAL
    assert "secret" not in error.details() and "Traceback" not in error.details()
    assert _details(error)[1] == ["INTERNAL_ERROR"]
    assert "ZeroDivisionError" in caplog.text  # the server log has it


def test_internal_compiler_error_diagnostic_is_internal(fake_server, fake_compiler) -> None:
    ice = Diagnostic(Severity.ERROR, INTERNAL_ERROR, "internal compiler error: KeyError: 'x'")
    fake_compiler.result = CompileResult(diagnostics=(ice,))
    error = _rpc_error(fake_server, _request())
    assert error.code() == grpc.StatusCode.INTERNAL
    assert "KeyError" not in error.details()


def test_without_tileiras_the_service_is_unavailable(start_server) -> None:
    server = start_server(None)
    error = _rpc_error(server, _request())
    assert error.code() == grpc.StatusCode.UNAVAILABLE
    assert _details(error)[1] == ["TOOLCHAIN_UNAVAILABLE"]
    assert _health(server, SERVICE_NAME) == health_pb2.HealthCheckResponse.NOT_SERVING


def test_health_and_reflection(fake_server) -> None:
    assert _health(fake_server, "") == health_pb2.HealthCheckResponse.SERVING
    assert _health(fake_server, SERVICE_NAME) == health_pb2.HealthCheckResponse.SERVING
    with grpc.insecure_channel(fake_server.target) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        (response,) = list(stub.ServerReflectionInfo(iter([request]), timeout=TIMEOUT_S))
    names = {s.name for s in response.list_services_response.service}
    assert {SERVICE_NAME, "grpc.health.v1.Health"} <= names


def test_one_log_line_per_request(fake_server, caplog) -> None:
    with caplog.at_level("INFO", logger="service.server.servicer"):
        _call(fake_server, _request())
        _rpc_error(fake_server, _request(entry=""))
    lines = [r.getMessage() for r in caplog.records if r.name == "service.server.servicer"]
    assert len(lines) == 2
    assert "entry='add'" in lines[0] and "target='sm_90'" in lines[0]
    assert "outcome=miss" in lines[0] and "ms=" in lines[0]
    assert "outcome=invalid" in lines[1]


# --------------------------------------------------------------------------- end to end


@pytest.fixture
def real_server(start_server, tileiras, tmp_path: Path):
    return start_server(CompileEngine(tileiras, cache=DiskCache(tmp_path / "cache")))


def test_add_compiles_for_sm_90(real_server, add_rs: Path) -> None:
    request = _request(add_rs.read_text(), name="add.rs")
    first = _call(real_server, request)
    assert first.ok, [d.rendered for d in first.diagnostics]
    assert first.cache == compile_pb2.CACHE_OUTCOME_MISS
    cubin, contract = first.artifact.cubin, first.artifact.contract
    assert cubin.startswith(ELF_MAGIC)
    assert contract.kernel.entry_symbol in function_symbols(cubin)
    assert (contract.kernel.module, contract.kernel.function) == ("kernel", "add")
    assert contract.schema_version == 1
    assert contract.target.sm == "sm_90" and contract.target.host_arch == "x86_64"
    assert [(p.name, p.kind) for p in contract.params] == [
        ("z", contract_pb2.PARAM_KIND_TENSOR_OUT),
        ("x", contract_pb2.PARAM_KIND_TENSOR_IN),
        ("y", contract_pb2.PARAM_KIND_TENSOR_IN),
    ]
    assert list(contract.params[0].tile_shape) == [128]
    assert list(contract.grid.output_params) == [0]
    assert list(contract.launch.block) == [1, 1, 1]
    last = contract.abi[-1]
    assert contract.launch.param_buffer_bytes >= last.offset + last.size
    assert [(g.name, g.value) for g in contract.specialization.generics] == [("B", "128")]
    assert first.timings.tileiras_ms > 0

    second = _call(real_server, request)
    assert second.cache == compile_pb2.CACHE_OUTCOME_HIT
    assert second.artifact.cubin == cubin
    assert second.artifact == first.artifact


def test_kernels_wait_by_default_and_plain_launch_asks_for_a_plain_one(
    real_server, add_rs: Path
) -> None:
    """By default the contract says the kernel waits for prior grids (launched early);
    `CompileOptions.plain_launch` gets a plain kernel, another artifact (another key); the
    deprecated `early_launch` opt-in asks for the default."""
    early = _call(real_server, _request(add_rs.read_text(), name="add.rs"))
    options = compile_pb2.CompileOptions(plain_launch=True)
    plain = _call(real_server, _request(add_rs.read_text(), name="add.rs", options=options))
    opted = compile_pb2.CompileOptions(early_launch=True)
    also = _call(real_server, _request(add_rs.read_text(), name="add.rs", options=opted))
    assert early.ok and plain.ok and also.ok
    assert also.artifact.request_key == early.artifact.request_key
    assert early.artifact.contract.launch.waits_for_prior_grids
    assert not plain.artifact.contract.launch.waits_for_prior_grids
    assert early.artifact.contract.target.bytecode_version == "13.4"
    assert early.artifact.request_key != plain.artifact.request_key


def test_compile_error_has_a_location(real_server, bad_kernel_source: str) -> None:
    response = _call(real_server, _request(bad_kernel_source, name="bad.rs", entry="bad"))
    assert not response.ok
    (diagnostic,) = [d for d in response.diagnostics if d.severity == compile_pb2.SEVERITY_ERROR]
    assert diagnostic.code == "E0596"
    primary = next(s for s in diagnostic.spans if s.primary)
    assert (primary.source_name, primary.line_start, primary.col_start) == ("bad.rs", 8, 9)
    assert "--> bad.rs:8:9" in diagnostic.rendered


def test_unknown_generic_is_a_diagnostic(real_server, add_rs: Path) -> None:
    response = _call(real_server, _request(add_rs.read_text(), generics={"C": "1"}))
    assert not response.ok
    assert response.diagnostics[0].code == "CT0102"


def test_a_client_gets_a_relaxed_kernel_for_a_misaligned_view(
    real_server, add_rs: Path, tmp_path: Path
) -> None:
    from client_stubs import ArtifactCache, CompileClient, DeviceTensor

    client = CompileClient(real_server.target, cache=ArtifactCache(tmp_path / "client"))
    n = 4096
    z = DeviceTensor(0x7F00_0000_0000, (n,)).partition((128,))
    y = DeviceTensor(0x7F20_0000_0000, (n,))
    shifted = DeviceTensor(0x7F10_0000_0004, (n - 1,))  # x[1:] of an f32 tensor

    def x_assumptions(kernel) -> set[tuple[str, int]]:  # type: ignore[no-untyped-def]
        return {
            (contract_pb2.AssumptionKind.Name(a.kind), a.value)
            for a in kernel.contract.assumptions
            if a.param == 1
        }

    def kernel_for(x: DeviceTensor):  # type: ignore[no-untyped-def]
        return client.kernel_for_args(
            add_rs.read_text(), "add", (z, x, y), {"B": "128"}, "sm_90", "add.rs"
        )

    general = kernel_for(DeviceTensor(0x7F10_0000_0000, (n,)))
    assert ("ASSUMPTION_KIND_BASE_ALIGN", 16) in x_assumptions(general)
    relaxed = kernel_for(shifted)
    assert ("ASSUMPTION_KIND_BASE_ALIGN", 4) in x_assumptions(relaxed)
    assert ("ASSUMPTION_KIND_BASE_ALIGN", 16) not in x_assumptions(relaxed)
    relaxed.plan(z, shifted, y)  # the host accepts the view it was compiled for
    strided = kernel_for(DeviceTensor(0x7F10_0000_0000, (n,), strides=(2,)))
    assert not any(kind == "ASSUMPTION_KIND_STRIDE_ONE" for kind, _ in x_assumptions(strided))


@dataclasses.dataclass(frozen=True)
class FailingTileiras:
    """Real version and fingerprint, but every assembly fails the way tileiras does."""

    real: object

    @property
    def version(self) -> str:
        return self.real.version

    @property
    def fingerprint(self) -> str:
        return self.real.fingerprint

    def assemble(self, bytecode: bytes, **options: object) -> bytes:
        raise TileirasError("tileiras failed with exit code 1", 1, "error: unsupported op", ())


def test_real_compiler_with_failing_tileiras(start_server, tileiras, add_rs, tmp_path) -> None:
    cache = DiskCache(tmp_path / "cache")
    server = start_server(CompileEngine(FailingTileiras(tileiras), cache=cache))
    response = _call(server, _request(add_rs.read_text()))
    assert not response.ok
    (diagnostic,) = response.diagnostics
    assert diagnostic.code == "CT0901"
    assert "exit code 1" in diagnostic.message
    assert "unsupported op" in diagnostic.rendered
    assert not any(cache.root.rglob("*.artifact"))  # nothing cached


# --------------------------------------------------------------------------- limits


def test_capabilities_advertise_every_limit(fake_server) -> None:
    with grpc.insecure_channel(fake_server.target) as channel:
        stub = compile_pb2_grpc.CompileServiceStub(channel)
        caps = stub.GetCapabilities(compile_pb2.GetCapabilitiesRequest(), timeout=TIMEOUT_S)
    limits = caps.limits
    assert limits.max_nesting_depth == MAX_NESTING_DEPTH
    assert limits.max_parse_ms == DEFAULT_SERVICE_LIMITS.max_parse_ms
    assert limits.tileiras_timeout_ms == 120_000
    assert limits.tileiras_memory_bytes == ADDRESS_SPACE_CAP
    assert limits.tileiras_output_bytes == FILE_SIZE_CAP


def test_parse_time_limit(start_server, fake_assembler) -> None:
    """The front end's CT0007 (tree-sitter past the limit) is an invalid request."""
    server = start_server(
        CompileEngine(fake_assembler), service_limits=ServiceLimits(max_parse_ms=1)
    )
    slow = "fn f() { let x = (1 + 2) * 3; }\n" * 30_000  # ~1 MB: far more than 1 ms
    error = _rpc_error(server, _request(text=slow))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    violations, reasons = _details(error)
    assert [field for field, _ in violations] == ["sources[0].text"]
    assert "1 ms" in violations[0][1]
    assert reasons == ["PARSE_TIME_LIMIT"]
    small = _call(server, _request())  # small sources still compile (to their own verdict)
    assert [d.code for d in small.diagnostics] == ["CT0003"]


# --------------------------------------------------------------------------- redis


def _replica(start_server, assembler, compile_fn, redis_url: str, folder: Path, metrics=None):
    cache = LayeredCache(DiskCache(folder), RedisCache(redis_url))
    engine = CompileEngine(assembler, cache=cache, compile_fn=compile_fn)
    return start_server(engine, metrics=metrics)


def _sample(metrics: ServiceMetrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(f"cutile_serve_{name}", labels) or 0.0


def test_replicas_sharing_redis_compile_once(
    start_server, fake_compiler, fake_assembler, redis_server, tmp_path: Path
) -> None:
    metrics_a, metrics_b = ServiceMetrics(), ServiceMetrics()
    a = _replica(
        start_server, fake_assembler, fake_compiler, redis_server.url, tmp_path / "a", metrics_a
    )
    b = _replica(
        start_server, fake_assembler, fake_compiler, redis_server.url, tmp_path / "b", metrics_b
    )
    first = _call(a, _request())
    second = _call(b, _request())
    third = _call(b, _request())
    assert first.cache == compile_pb2.CACHE_OUTCOME_MISS
    assert second.cache == third.cache == compile_pb2.CACHE_OUTCOME_HIT
    assert second.artifact.cubin == first.artifact.cubin
    assert len(fake_compiler.calls) == 1
    assert _sample(metrics_b, "cache_results_total", layer="disk", result="miss") == 1
    assert _sample(metrics_b, "cache_results_total", layer="redis", result="hit") == 1
    assert _sample(metrics_b, "cache_results_total", layer="disk", result="hit") == 1


def test_concurrent_cold_requests_on_two_replicas_compile_once(
    start_server, fake_compiler, fake_assembler, redis_server, tmp_path: Path
) -> None:
    gate = threading.Event()
    calls = []

    def slow_compile(request, **kwargs):
        calls.append(request)
        gate.wait(10)
        return fake_compiler(request, **kwargs)

    servers = [
        _replica(
            start_server,
            fake_assembler,
            slow_compile,
            redis_server.url,
            tmp_path / n,
            ServiceMetrics(),
        )
        for n in "ab"
    ]
    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(_call, servers[i % 2], _request()) for i in range(8)]
        deadline = time.monotonic() + 10
        while not calls and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)  # every request has reached its replica; only one compiles
        gate.set()
        responses = [f.result(timeout=30) for f in futures]
    assert all(r.ok for r in responses)
    assert len(calls) == 1


def test_unreachable_redis_still_compiles_and_counts_errors(
    start_server, fake_compiler, fake_assembler, unused_redis_url, tmp_path: Path
) -> None:
    metrics = ServiceMetrics()
    server = _replica(
        start_server, fake_assembler, fake_compiler, unused_redis_url, tmp_path / "a", metrics
    )
    assert _call(server, _request()).cache == compile_pb2.CACHE_OUTCOME_MISS
    assert _call(server, _request()).cache == compile_pb2.CACHE_OUTCOME_HIT  # the disk layer
    assert len(fake_compiler.calls) == 1
    assert _sample(metrics, "cache_errors_total", layer="redis") >= 1


def test_repeated_hits_come_from_memory(
    start_server, fake_compiler, fake_assembler, tmp_path: Path
) -> None:
    engine = CompileEngine(
        fake_assembler,
        cache=DiskCache(tmp_path / "cache"),
        compile_fn=fake_compiler,
        memory=MemoryCache(),
    )
    metrics = ServiceMetrics()
    server = start_server(engine, metrics=metrics)
    first = _call(server, _request())
    second = _call(server, _request())
    assert second.cache == compile_pb2.CACHE_OUTCOME_HIT
    assert second.artifact == first.artifact
    assert _sample(metrics, "cache_results_total", layer="memory", result="hit") == 1
    assert _sample(metrics, "cache_results_total", layer="memory", result="miss") == 1
    assert _sample(metrics, "cache_results_total", layer="disk", result="miss") == 1
    third = _call(server, _request())  # the same bytes again: answered from `hot`
    assert third.artifact == first.artifact and third.cache == compile_pb2.CACHE_OUTCOME_HIT
    assert _sample(metrics, "cache_results_total", layer="memory", result="hit") == 2
    engine.memory.discard(first.artifact.request_key.sha256)  # e.g. evicted: disk still has it
    assert _call(server, _request()).cache == compile_pb2.CACHE_OUTCOME_HIT
    assert _sample(metrics, "cache_results_total", layer="disk", result="hit") == 1
    assert len(fake_compiler.calls) == 1


# --------------------------------------------------------------------------- bad input


@pytest.fixture
def frontend_server(start_server, fake_assembler):
    """The real front end (tileiras is never reached by these requests)."""
    return start_server(CompileEngine(fake_assembler))


def test_ten_thousand_deep_nesting_is_a_diagnostic(frontend_server) -> None:
    nested = "(" * 10_000 + "1" + ")" * 10_000
    text = (
        "#[cutile::module]\nmod kernel {\n    use cutile::core::*;\n"
        "    #[cutile::entry()]\n"
        f"    fn add(z: &mut Tensor<f32, {{ [128] }}>) {{ let a = {nested}; }}\n}}\n"
    )
    response = _call(frontend_server, _request(text=text))
    assert not response.ok
    assert response.diagnostics[0].code == "CT0005"
    assert "nests deeper" in response.diagnostics[0].message
    # still serving
    assert not _call(frontend_server, _request(text="")).ok


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"entry": "not an identifier!"}, "entry"),
        ({"entry": "add; rm -rf /"}, "entry"),
        ({"target": "sm_42"}, "target"),
        ({"name": "../etc/passwd"}, "sources[0].name"),
        ({"generics": {"B-1": "128"}}, "generics"),
    ],
)
def test_bad_fields_name_the_field(frontend_server, fields: dict, field: str) -> None:
    error = _rpc_error(frontend_server, _request(**fields))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    violations, reasons = _details(error)
    assert any(f.startswith(field) for f, _ in violations), violations
    assert reasons == ["INVALID_REQUEST"]


# --------------------------------------------------------------------------- isolated workers


@pytest.mark.parametrize(
    ("target", "code", "reason"),
    [
        (worker_targets.crashing, grpc.StatusCode.INTERNAL, "WORKER_CRASHED"),
        (worker_targets.tileiras_faulting, grpc.StatusCode.UNAVAILABLE, "TILEIRAS_FAULT"),
    ],
)
def test_a_fault_that_is_not_the_kernels_is_a_status_clients_can_act_on(
    start_server, fake_assembler, target, code, reason
) -> None:
    pool = WorkerPool(1, "/nonexistent/tileiras", target=target)
    try:
        server = start_server(CompileEngine(fake_assembler, pool=pool))
        error = _rpc_error(server, _request())
        assert error.code() == code
        status = rpc_status.from_call(error)
        info = error_details_pb2.ErrorInfo()
        assert any(d.Unpack(info) for d in status.details) and info.reason == reason
        assert pool.wait_ready()  # the worker was replaced; the server serves on
        assert _rpc_error(server, _request()).code() == code
    finally:
        pool.close()


def test_an_input_past_the_cpu_budget_gets_its_own_diagnostic(start_server, fake_assembler) -> None:
    pool = WorkerPool(1, "/nonexistent/tileiras", target=worker_targets.spinning)
    try:
        response = _call(start_server(CompileEngine(fake_assembler, pool=pool)), _request())
    finally:
        pool.close()
    assert not response.ok
    (diagnostic,) = response.diagnostics
    assert diagnostic.code == COMPILE_TOO_COSTLY.id
    assert "CPU time" in diagnostic.message
