"""Metrics, bearer-token auth, TLS and JSON logs of the server (real servers on port 0)."""

from __future__ import annotations

import io
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status
from prometheus_client.parser import text_string_to_metric_families

from lowering.pipeline import CompileRequest
from lowering.tileiras import TileirasError
from parser.spans import SourceFile
from protos.generated.cutile.compile.v1 import compile_pb2, compile_pb2_grpc
from service.cache.disk import DiskCache
from service.compile.engine import CompileEngine
from service.server.auth import AuthInterceptor, TokenError, read_token
from service.server.daemon import parse_args
from service.server.logs import JsonFormatter
from service.server.metrics import ServiceMetrics
from service.server.servicer import CompileServicer

REPO_ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 30
TOKEN = "s3cret-token"


def _request(**fields) -> compile_pb2.CompileRequest:
    return compile_pb2.CompileRequest(
        sources=[compile_pb2.SourceFile(name="add.rs", text="mod k {}")],
        entry=fields.pop("entry", "add"),
        generics={"B": "128"},
        target="sm_90",
        **fields,
    )


def _compile(channel, request=None, token: str | None = None) -> compile_pb2.CompileResponse:
    metadata = () if token is None else (("authorization", f"Bearer {token}"),)
    stub = compile_pb2_grpc.CompileServiceStub(channel)
    return stub.Compile(request or _request(), timeout=TIMEOUT_S, metadata=metadata)


def _reasons(error: grpc.RpcError) -> list[str]:
    status = rpc_status.from_call(error)
    assert status is not None, "no rich status"
    reasons = []
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            reasons.append(info.reason)
    return reasons


def _scrape(port: int) -> dict[tuple[str, tuple], float]:
    """{(sample name, sorted labels): value} from the /metrics endpoint."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


@pytest.fixture
def engine(fake_compiler, fake_assembler, tmp_path: Path) -> CompileEngine:
    return CompileEngine(
        fake_assembler, cache=DiskCache(tmp_path / "cache"), compile_fn=fake_compiler
    )


# --------------------------------------------------------------------------- metrics


def test_metrics_endpoint_after_compiles(start_server, engine, fake_compiler) -> None:
    metrics = ServiceMetrics()
    server = start_server(engine, metrics=metrics, workers=2, max_queued=3)
    port = metrics.serve("127.0.0.1", 0)
    try:
        with grpc.insecure_channel(server.target) as channel:
            assert _compile(channel).ok  # miss
            assert _compile(channel).ok  # hit
            with pytest.raises(grpc.RpcError) as caught:
                _compile(channel, _request(entry=""))
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            fake_compiler.raises = TileirasError("exit code 3", 3, "error: bad op", ("t",))
            assert not _compile(channel, _request(entry="other")).ok
            stub = compile_pb2_grpc.CompileServiceStub(channel)
            stub.GetCapabilities(compile_pb2.GetCapabilitiesRequest(), timeout=TIMEOUT_S)
            batch = compile_pb2.CompileBatchRequest(
                sources=[compile_pb2.SourceFile(name="add.rs", text="mod k {}")],
                items=[compile_pb2.BatchItem(entry="add", generics={"B": "128"})],
            )
            (item,) = stub.CompileBatch(batch, timeout=TIMEOUT_S)
            assert item.response.cache == compile_pb2.CACHE_OUTCOME_HIT
        samples = _scrape(port)
    finally:
        metrics.close()

    def value(name: str, **labels: str) -> float:
        return samples.get((f"cutile_serve_{name}", tuple(sorted(labels.items()))), 0.0)

    assert value("requests_total", rpc="Compile", outcome="ok") == 2
    assert value("requests_total", rpc="Compile", outcome="invalid") == 1
    assert value("requests_total", rpc="Compile", outcome="compile_error") == 1
    assert value("requests_total", rpc="GetCapabilities", outcome="ok") == 1
    assert value("requests_total", rpc="CompileBatch", outcome="ok") == 1
    assert value("cache_results_total", layer="disk", result="hit") == 2
    assert value("cache_results_total", layer="disk", result="miss") == 2
    assert value("cache_results_total", layer="flight", result="miss") == 2
    assert value("tileiras_failures_total") == 1
    for stage in ("frontend", "tileiras", "total"):
        assert value("compile_stage_seconds_count", stage=stage) == 2
    assert value("compile_stage_seconds_sum", stage="tileiras") == pytest.approx(
        0.002
    )  # one 2 ms run, one failure
    assert value("compile_queue_depth") == 0
    assert value("compiles_in_flight") == 0
    assert value("compile_workers") == 2
    assert value("compile_max_queued") == 3
    assert value("requests_in_flight", rpc="Compile") == 0


# --------------------------------------------------------------------------- auth


def test_auth_rejects_missing_and_wrong_tokens(start_server, engine) -> None:
    server = start_server(engine, auth_token=TOKEN)
    with grpc.insecure_channel(server.target) as channel:
        for token in (None, "wrong", TOKEN + "x", ""):
            with pytest.raises(grpc.RpcError) as caught:
                _compile(channel, token=token)
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert _reasons(caught.value) == ["UNAUTHENTICATED"]
        # streaming RPCs and reflection are guarded too
        stub = compile_pb2_grpc.CompileServiceStub(channel)
        request = compile_pb2.GetArtifactRequest(key=compile_pb2.Digest(sha256="0" * 64))
        with pytest.raises(grpc.RpcError) as caught:
            list(stub.GetArtifact(request, timeout=TIMEOUT_S))
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        listing = reflection_pb2.ServerReflectionRequest(list_services="")
        with pytest.raises(grpc.RpcError) as caught:
            list(reflection.ServerReflectionInfo(iter([listing]), timeout=TIMEOUT_S))
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


def test_auth_admits_the_token_and_health_checks(start_server, engine) -> None:
    server = start_server(engine, auth_token=TOKEN)
    with grpc.insecure_channel(server.target) as channel:
        assert _compile(channel, token=TOKEN).ok
        health = health_pb2_grpc.HealthStub(channel)
        reply = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT_S)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_auth_interceptor_matching() -> None:
    auth = AuthInterceptor(TOKEN)
    assert auth.authorized((("authorization", f"Bearer {TOKEN}"),))
    assert auth.authorized((("Authorization", f"Bearer {TOKEN}"),))
    assert not auth.authorized((("authorization", f"bearer-ish {TOKEN}"),))
    assert not auth.authorized((("authorization", TOKEN),))
    assert not auth.authorized(())
    assert not auth.authorized(None)
    two = (("authorization", f"Bearer {TOKEN}"), ("authorization", "Bearer x"))
    assert not auth.authorized(two)
    with pytest.raises(ValueError):
        AuthInterceptor("")


def test_read_token(tmp_path: Path) -> None:
    path = tmp_path / "token"
    path.write_text(f"  {TOKEN}\n")
    assert read_token(path) == TOKEN
    path.write_text("\n")
    with pytest.raises(TokenError, match="empty"):
        read_token(path)
    path.write_text("two words")
    with pytest.raises(TokenError, match="whitespace"):
        read_token(path)
    with pytest.raises(TokenError, match="cannot read"):
        read_token(tmp_path / "missing")
    for endless in (Path("/dev/zero"), tmp_path):  # a device read for ever once; a folder
        with pytest.raises(TokenError, match="cannot read"):
            read_token(endless)
    path.write_bytes(b"x" * (1 << 20))
    with pytest.raises(TokenError, match="cannot read"):
        read_token(path)


# --------------------------------------------------------------------------- TLS


@pytest.fixture
def self_signed(tmp_path: Path) -> tuple[bytes, bytes]:
    """(certificate, key) PEM for CN=localhost with 127.0.0.1 as a subject alt name:
    made with `cryptography` when installed, else `openssl req`, else the test skips."""
    try:
        return _self_signed_cryptography()
    except ImportError:
        pass
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no self-signed certificate: neither `cryptography` nor `openssl` exists")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    command = [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
    command += ["-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)]
    command += ["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        pytest.skip(f"openssl could not make a self-signed certificate: {result.stderr}")
    return cert.read_bytes(), key.read_bytes()


def _self_signed_cryptography() -> tuple[bytes, bytes]:
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    alt = x509.SubjectAlternativeName(
        [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    )
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(alt, critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def test_tls(start_server, engine, self_signed) -> None:
    cert, key = self_signed
    server = start_server(engine, tls=(cert, key))
    credentials = grpc.ssl_channel_credentials(root_certificates=cert)
    with grpc.secure_channel(server.target, credentials) as channel:
        assert _compile(channel).ok
    with grpc.insecure_channel(server.target) as channel, pytest.raises(grpc.RpcError) as caught:
        _compile(channel)
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    other = grpc.ssl_channel_credentials()  # the system roots do not trust our certificate
    with grpc.secure_channel(server.target, other) as channel, pytest.raises(grpc.RpcError):
        _compile(channel)


def test_tls_with_auth(start_server, engine, self_signed) -> None:
    cert, key = self_signed
    server = start_server(engine, tls=(cert, key), auth_token=TOKEN)
    calls = grpc.access_token_call_credentials(TOKEN)  # sends `authorization: Bearer ...`
    credentials = grpc.composite_channel_credentials(
        grpc.ssl_channel_credentials(root_certificates=cert), calls
    )
    with grpc.secure_channel(server.target, credentials) as channel:
        assert _compile(channel).ok


# --------------------------------------------------------------------------- JSON logs


def test_json_request_log_lines(start_server, engine) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("service.server.servicer")
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.INFO)
    try:
        server = start_server(engine)
        with grpc.insecure_channel(server.target) as channel:
            assert _compile(channel).ok
            with pytest.raises(grpc.RpcError):
                _compile(channel, _request(entry=""))
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    requests = [line for line in lines if line.get("rpc") == "Compile"]
    assert [r["outcome"] for r in requests] == ["miss", "invalid"]
    first = requests[0]
    assert {"time", "level", "logger", "message", "entry", "target", "ms", "key"} <= set(first)
    assert (first["level"], first["logger"], first["entry"]) == (
        "INFO",
        "service.server.servicer",
        "add",
    )
    assert first["target"] == "sm_90" and isinstance(first["ms"], float)
    assert len(first["key"]) == 8 and requests[1]["key"] == "-"
    assert first["time"].endswith("Z")


def test_json_formatter_includes_exceptions() -> None:
    try:
        raise ValueError("boom")
    except ValueError:
        record = logging.getLogger("x").makeRecord(
            "x", logging.ERROR, __file__, 1, "failed %s", ("here",), sys.exc_info()
        )
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "failed here" and line["level"] == "ERROR"
    assert "ValueError: boom" in line["exc"]


# --------------------------------------------------------------------------- the daemon


def test_new_arguments() -> None:
    args = parse_args([])
    assert (args.metrics_port, args.auth_token_file, args.tls_cert, args.log_format) == (
        None,
        None,
        None,
        "text",
    )
    args = parse_args(["--metrics-port", "0", "--log-format", "json"])
    assert (args.metrics_port, args.log_format) == (0, "json")
    for bad in (["--metrics-port", "70000"], ["--tls-cert", "c.pem"], ["--log-format", "xml"]):
        with pytest.raises(SystemExit) as caught:
            parse_args(bad)
        assert caught.value.code == 2


def test_tls_files_are_checked_as_a_pem_pair_at_start(tmp_path: Path, self_signed) -> None:
    from service.server.daemon import load_secrets

    cert, key = tmp_path / "c.pem", tmp_path / "k.pem"
    cert.write_bytes(self_signed[0])
    key.write_bytes(self_signed[1])
    args = parse_args(["--tls-cert", str(cert), "--tls-key", str(key)])
    load_secrets(args)
    assert args.tls == self_signed
    key.write_bytes(b"garbage\n")
    with pytest.raises(OSError, match="not a usable PEM pair"):
        load_secrets(parse_args(["--tls-cert", str(cert), "--tls-key", str(key)]))


def _read_lines(proc: subprocess.Popen[str], count: int, timeout_s: float) -> list[str]:
    lines: list[str] = []

    def read() -> None:
        for _ in range(count):
            lines.append(proc.stdout.readline().strip())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout_s)
    return lines


def test_daemon_metrics_auth_and_json_logs(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "service.server.daemon",
            "--port",
            "0",
            "--no-cache",
            "--metrics-port",
            "0",
            "--log-format",
            "json",
            "--auth-token-file",
            str(token_file),
        ],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = _read_lines(proc, 2, TIMEOUT_S)
        assert len(lines) == 2, lines
        listening, metrics = lines
        assert listening.startswith("cutile-serve listening on 127.0.0.1:"), lines
        assert metrics.startswith("cutile-serve metrics on 127.0.0.1:"), lines
        port, metrics_port = (int(line.rsplit(":", 1)[1]) for line in lines)
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            with pytest.raises(grpc.RpcError) as caught:
                _compile(channel, _request(entry=""))
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
            with pytest.raises(grpc.RpcError) as caught:
                _compile(channel, _request(entry=""), token=TOKEN)
            assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            health = health_pb2_grpc.HealthStub(channel)
            health.Check(health_pb2.HealthCheckRequest(service=""), timeout=TIMEOUT_S)
        samples = _scrape(metrics_port)
        for outcome in ("unauthenticated", "invalid"):
            labels = (("outcome", outcome), ("rpc", "Compile"))
            assert samples[("cutile_serve_requests_total", labels)] == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            _, stderr = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert proc.returncode == 0, stderr
    records = [json.loads(line) for line in stderr.splitlines() if line.strip()]
    (request,) = [r for r in records if r.get("rpc") == "Compile"]
    assert request["outcome"] == "invalid" and request["level"] == "INFO"
    assert any(r["message"] == "stopped" for r in records)


def test_unreadable_token_file_exits_1(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            *(sys.executable, "-m", "service.server.daemon", "--port", "0", "--no-cache"),
            *("--auth-token-file", str(tmp_path / "missing")),
        ],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert result.returncode == 1
    assert "cannot read the auth token file" in result.stderr
    assert "Traceback" not in result.stderr


def test_tileiras_runs_and_content_hits_are_counted(tileiras, add_rs, tmp_path: Path) -> None:
    metrics = ServiceMetrics()
    engine = CompileEngine(tileiras, cache=DiskCache(tmp_path / "cache"))
    CompileServicer(engine, metrics=metrics)  # wires the engine's observers
    text = add_rs.read_text()
    for variant in (text, text + "\n// a comment\n"):  # one bytecode under two request keys
        request = CompileRequest((SourceFile("a.rs", variant),), "add", (("B", "128"),))
        assert engine.compile(request).ok
    sample = metrics.registry.get_sample_value
    assert sample("cutile_serve_tileiras_runs_total") == 1
    assert sample("cutile_serve_cache_results_total", {"layer": "content", "result": "miss"}) == 1
    assert sample("cutile_serve_cache_results_total", {"layer": "content", "result": "hit"}) == 1
