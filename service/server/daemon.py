"""`cutile-serve`: the gRPC compile daemon.

    cutile-serve [--host 127.0.0.1] [--port 50051] [--cache-dir DIR | --no-cache]
                 [--cache redis://[USER:PASSWORD@]HOST:PORT/DB] [--cache-ttl SECONDS]
                 [--cache-max-bytes N[K|M|G]] [--memory-cache-bytes N[K|M|G]]
                 [--workers N] [--max-queued N] [--isolation process|thread]
                 [--worker-memory N[K|M|G]] [--tileiras-memory-total N[K|M|G]]
                 [--compile-cpu-seconds N]
                 [--grace SECONDS] [--tileiras PATH] [--log-level LEVEL]
                 [--log-format text|json] [--metrics-port PORT]
                 [--auth-token-file PATH] [--tls-cert PEM --tls-key PEM]
                 [--signing-key-file PATH]

Serves `cutile.compile.v1.CompileService`, the standard health service (SERVING for ""
and the compile service; NOT_SERVING when tileiras is missing) and server reflection.
Prints `cutile-serve listening on HOST:PORT` once bound (`--port 0` picks a free port).
SIGTERM or SIGINT: health goes NOT_SERVING, new RPCs are refused, in-flight ones get
`--grace` seconds, then the compile workers are killed and the process exits 0.

Compiles run in `--workers` isolated worker processes (`service.compile.worker_pool`): a crash, a
stack overflow, a runaway or a memory blow-up in the front end or tileiras costs one
worker, which is replaced. Each compile's front end may use `--compile-cpu-seconds` of CPU
and each worker `--worker-memory` of address space; past either the request gets a
CT0902 diagnostic. The tileiras runs of all workers together may map
`--tileiras-memory-total` (default: half of the machine's memory), split evenly among them
(`service.compile.memory_share`; a run past its share gets CT0902 too). At start, tileiras
runs and temp folders left by servers that died are removed. `--isolation thread`
compiles on threads of the server instead (tests, debugging).

`--cache redis://…` shares artifacts between replicas through Redis (see
`service.cache.redis`: TTL, the compile lease, why the database must be writable only by
the service); the disk cache stays in front of it as a local layer. Redis being down
never fails a compile: it is counted in `cutile_serve_cache_errors_total{layer="redis"}`.

`--metrics-port` serves Prometheus metrics (see `service.server.metrics`) over HTTP on the same
host and prints `cutile-serve metrics on HOST:PORT` after the listening line (0 = any free
port; default: off). `--auth-token-file` requires `authorization: Bearer <token>` on every
RPC but the health service (see `service.server.auth`). `--tls-cert` and `--tls-key` (PEM files,
both or neither) serve over TLS instead of plaintext. `--log-format json` writes one JSON
object per log line (see `service.server.logs`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import signal
import ssl
import sys
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from lowering.build_id import version_text
from lowering.tileiras import ADDRESS_SPACE_CAP
from service.cache.disk import DEFAULT_MAX_BYTES, DiskCache, default_cache_dir
from service.cache.layered import LayeredCache
from service.cache.memory import DEFAULT_MEMORY_BYTES, MemoryCache
from service.cache.redis import DEFAULT_TTL_S, RedisCache
from service.compile.engine import CompileEngine
from service.compile.flight import default_workers
from service.compile.memory_share import default_total_bytes, tileiras_memory_share
from service.compile.toolchain import locate_assembler
from service.compile.worker import WorkerLimits
from service.compile.worker_pool import WorkerPool, clean_orphans
from service.convert import DEFAULT_LIMITS, Limits
from service.server import logs
from service.server.auth import AuthInterceptor, TokenError, read_token
from service.server.metrics import MetricsInterceptor, ServiceMetrics
from service.server.registration import add_compile_service
from service.server.servicer import (
    DEFAULT_SERVICE_LIMITS,
    SERVICE_NAME,
    CompileServicer,
    ServiceLimits,
)

log = logging.getLogger("cutile-serve")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 50051
DEFAULT_GRACE_S = 10.0
MAX_RECEIVE_BYTES = 8 << 20  # sources are limited to 1 MiB; headroom for the envelope
MAX_SEND_BYTES = 64 << 20  # cubins

SERVER_OPTIONS = (
    ("grpc.max_receive_message_length", MAX_RECEIVE_BYTES),
    ("grpc.max_send_message_length", MAX_SEND_BYTES),
    ("grpc.so_reuseport", 0),  # a busy port must fail the bind, not be shared
    # keepalive: ping idle connections every 60 s and drop them after 20 s without an
    # answer; clients may ping every 10 s at most (more often earns a GOAWAY)
    ("grpc.keepalive_time_ms", 60_000),
    ("grpc.keepalive_timeout_ms", 20_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
    ("grpc.http2.max_ping_strikes", 2),
)


async def create_server(
    address: str,
    engine: CompileEngine | None,
    *,
    workers: int | None = None,
    max_queued: int | None = None,
    limits: Limits = DEFAULT_LIMITS,
    service_limits: ServiceLimits = DEFAULT_SERVICE_LIMITS,
    retry_delay_s: float = 1.0,
    health_servicer: health.aio.HealthServicer | None = None,
    metrics: ServiceMetrics | None = None,
    auth_token: str | None = None,
    tls: tuple[bytes, bytes] | None = None,
    signing_key: bytes | None = None,
) -> tuple[grpc.aio.Server, int]:
    """A bound, not yet started server and its port. `engine=None`: no tileiras.

    `metrics`: where the server records (always recorded; serving them over HTTP is the
    caller's: `metrics.serve`). `auth_token`: require it as a bearer token. `tls`: the
    (certificate chain, private key) PEM bytes to serve TLS with.
    """
    metrics = metrics if metrics is not None else ServiceMetrics()
    interceptors: list[grpc.aio.ServerInterceptor] = [MetricsInterceptor(metrics)]
    if auth_token is not None:
        interceptors.append(AuthInterceptor(auth_token))
    server = grpc.aio.server(interceptors=interceptors, options=SERVER_OPTIONS)
    servicer = CompileServicer(
        engine,
        limits=limits,
        workers=workers,
        max_queued=max_queued,
        service_limits=service_limits,
        retry_delay_s=retry_delay_s,
        metrics=metrics,
        signing_key=signing_key,
    )
    add_compile_service(servicer, server)

    health_servicer = health_servicer or health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    serving = health_pb2.HealthCheckResponse.SERVING
    status = serving if engine is not None else health_pb2.HealthCheckResponse.NOT_SERVING
    for service in ("", SERVICE_NAME):
        await health_servicer.set(service, status)

    names = (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)

    try:
        if tls is None:
            port = server.add_insecure_port(address)
        else:
            cert_chain, private_key = tls
            credentials = grpc.ssl_server_credentials([(private_key, cert_chain)])
            port = server.add_secure_port(address, credentials)
    except RuntimeError as exc:  # grpcio raises on a failed bind
        raise OSError(f"cannot listen on {address}: {exc}") from exc
    if port == 0:
        raise OSError(f"cannot listen on {address}")
    return server, port


def build_engine(
    cache_dir: Path | None,
    *,
    use_cache: bool = True,
    tileiras: str | None = None,
    cache_max_bytes: int | None = DEFAULT_MAX_BYTES,
    redis_url: str | None = None,
    redis_ttl_s: int = DEFAULT_TTL_S,
    memory_bytes: int = DEFAULT_MEMORY_BYTES,
    tileiras_memory: int = ADDRESS_SPACE_CAP,
) -> CompileEngine | None:
    """The engine over the located tileiras (each run capped at `tileiras_memory` bytes of
    address space) and the disk cache (in front of Redis when `redis_url` is given); None
    without tileiras."""
    assembler = locate_assembler(tileiras, tileiras_memory)
    if assembler is None:
        return None
    if not use_cache:
        return CompileEngine(assembler)
    disk = DiskCache(cache_dir or default_cache_dir(), max_bytes=cache_max_bytes)
    memory = MemoryCache(memory_bytes) if memory_bytes > 0 else None
    if redis_url is None:
        return CompileEngine(assembler, cache=disk, memory=memory)
    shared = RedisCache(redis_url, ttl_s=redis_ttl_s)
    if not shared.ping():
        log.warning("%s does not answer; compiling without it until it does", shared.where)
    return CompileEngine(assembler, cache=LayeredCache(disk, shared), memory=memory)


async def serve(args: argparse.Namespace) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):  # before anyone can know our port
        loop.add_signal_handler(signum, stop.set)

    workers = args.workers or default_workers()
    tileiras_memory = tileiras_memory_share(workers, args.tileiras_memory_total)
    engine = build_engine(
        args.cache_dir,
        use_cache=not args.no_cache,
        tileiras=args.tileiras,
        cache_max_bytes=args.cache_max_bytes or None,
        redis_url=args.cache,
        redis_ttl_s=args.cache_ttl,
        memory_bytes=args.memory_cache_bytes,
        tileiras_memory=tileiras_memory,
    )
    health_servicer = health.aio.HealthServicer()
    host = _host_for_address(args.host)
    metrics = ServiceMetrics()
    server, port = await create_server(
        f"{host}:{args.port}",
        engine,
        workers=workers,
        max_queued=args.max_queued,
        health_servicer=health_servicer,
        metrics=metrics,
        auth_token=args.auth_token,
        tls=args.tls,
        signing_key=args.signing_key,
    )
    pool = None
    if engine is not None and args.isolation == "process":  # once bound: a failed bind
        clean_orphans()  # starts no workers
        limits = WorkerLimits(
            args.worker_memory, args.compile_cpu_seconds, tileiras_memory_bytes=tileiras_memory
        )
        pool = WorkerPool(workers, engine.assembler.path, limits)
        engine.pool = pool
    try:
        metrics_port = None
        if args.metrics_port is not None:
            metrics_port = metrics.serve(args.host, args.metrics_port)
        await server.start()
        scheme = "" if args.tls is None else " (TLS)"
        print(f"cutile-serve listening on {host}:{port}{scheme}", flush=True)
        if metrics_port is not None:
            print(f"cutile-serve metrics on {host}:{metrics_port}", flush=True)
        if args.auth_token is None and args.host not in _LOOPBACK:
            log.warning("serving on %s without --auth-token-file: anyone may compile", host)
        if args.auth_token is not None and args.tls is None and args.host not in _LOOPBACK:
            log.warning("bearer tokens travel in plaintext without --tls-cert/--tls-key")
        await stop.wait()

        log.info("shutting down (grace %.1f s)", args.grace)
        await health_servicer.enter_graceful_shutdown()
        await server.stop(args.grace)
        log.info("stopped")
        return 0
    finally:
        metrics.close()
        if pool is not None:
            pool.close()


_LOOPBACK = ("127.0.0.1", "::1", "[::1]", "localhost")


def _host_for_address(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="cutile-serve", description="Serve cuTile Rust kernel compilation over gRPC."
    )
    parser.add_argument("--version", action="version", version=version_text("cutile-serve"))
    parser.add_argument("--host", default=DEFAULT_HOST, help="bind address (default %(default)s)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="port (default %(default)s; 0 = any free)"
    )
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument(
        "--cache-dir", type=Path, help=f"artifact cache folder (default {default_cache_dir()})"
    )
    cache.add_argument("--no-cache", action="store_true", help="do not cache artifacts")
    parser.add_argument(
        "--cache",
        metavar="URL",
        type=_redis_url,
        help="share artifacts with other replicas through Redis: redis://[USER:PASSWORD@]"
        "HOST:PORT/DB (rediss:// for TLS); the disk cache stays in front of it",
    )
    parser.add_argument(
        "--cache-ttl",
        type=_int_between(1, MAX_TTL_S),
        default=DEFAULT_TTL_S,
        metavar="SECONDS",
        help="Redis entries unused this long expire (default %(default)s)",
    )
    parser.add_argument(
        "--cache-max-bytes",
        type=_byte_size,
        default=DEFAULT_MAX_BYTES,
        help="evict least-recently-used artifacts past this size, e.g. 512M (default 2G; 0 = "
        "unbounded)",
    )
    parser.add_argument(
        "--memory-cache-bytes",
        type=_byte_size,
        default=DEFAULT_MEMORY_BYTES,
        help="keep recently used artifacts in memory up to this size (default 64M; 0 = off)",
    )
    parser.add_argument(
        "--tileiras",
        metavar="PATH",
        help="the tileiras binary (default: $CUTILE_TILEIRAS, the nvidia wheel, then PATH)",
    )
    parser.add_argument(
        "--workers",
        type=_int_between(1, MAX_WORKERS),
        help="concurrent compiles (default: CPU count)",
    )
    parser.add_argument(
        "--isolation",
        choices=("process", "thread"),
        default="process",
        help="compile in isolated worker processes that a crash or runaway input cannot "
        "take the server down with (default), or on threads of the server",
    )
    parser.add_argument(
        "--worker-memory",
        type=_worker_memory,
        default=WorkerLimits().memory_bytes,
        help="address space of each compile worker, e.g. 4G (default 4G)",
    )
    parser.add_argument(
        "--tileiras-memory-total",
        type=_memory_size,
        default=default_total_bytes(),
        help="address space all concurrent tileiras runs may map together, split evenly "
        "among the workers (each run 2G to 8G), e.g. 32G (default: half of this machine's "
        "memory or its cgroup limit)",
    )
    parser.add_argument(
        "--compile-cpu-seconds",
        type=_int_between(1, MAX_CPU_SECONDS),
        default=WorkerLimits().cpu_seconds,
        help="CPU time one compile's front end may use before it is stopped (default "
        "%(default)s; tileiras has its own limits)",
    )
    parser.add_argument(
        "--max-queued",
        type=_int_between(0, MAX_QUEUED),
        help="compiles that may wait for a worker; beyond, RESOURCE_EXHAUSTED "
        "(default: 4 x workers)",
    )
    parser.add_argument(
        "--grace",
        type=_seconds,
        default=DEFAULT_GRACE_S,
        help="seconds in-flight RPCs get on shutdown (default %(default)s)",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="logging level (default %(default)s)",
    )
    parser.add_argument(
        "--log-format",
        default="text",
        choices=("text", "json"),
        help="text lines or one JSON object per line (default %(default)s)",
    )
    parser.add_argument(
        "--metrics-port",
        type=int,
        metavar="PORT",
        help="serve Prometheus metrics over HTTP on this port (0 = any free; default: off)",
    )
    parser.add_argument(
        "--auth-token-file",
        type=Path,
        metavar="PATH",
        help="require `authorization: Bearer <token>` (the file's content) on every RPC "
        "but health checks",
    )
    parser.add_argument(
        "--signing-key-file",
        type=Path,
        metavar="PATH",
        help="sign every artifact with this key (HMAC-SHA256; hosts given the same key, "
        "CompileClient(signing_key=...), refuse artifacts without a valid signature)",
    )
    parser.add_argument("--tls-cert", type=Path, metavar="PEM", help="TLS certificate chain")
    parser.add_argument("--tls-key", type=Path, metavar="PEM", help="TLS private key")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error("--port must be 0..65535")
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        parser.error("--metrics-port must be 0..65535")
    if args.cache is not None and args.no_cache:
        parser.error("--cache and --no-cache exclude each other")
    if (args.tls_cert is None) != (args.tls_key is None):
        parser.error("--tls-cert and --tls-key go together")
    return args


def load_secrets(args: argparse.Namespace) -> None:
    """Read the token and TLS files once, into `args.auth_token` and `args.tls`; OSError."""
    args.auth_token = None
    args.tls = None
    args.signing_key = None
    if args.signing_key_file is not None:
        try:  # the token rules fit a key too: non-empty, no whitespace
            args.signing_key = read_token(args.signing_key_file).encode("utf-8")
        except TokenError as exc:
            raise OSError(str(exc).replace("auth token", "signing key")) from exc
    if args.auth_token_file is not None:
        try:
            args.auth_token = read_token(args.auth_token_file)
        except TokenError as exc:
            raise OSError(str(exc)) from exc
    if args.tls_cert is not None and args.tls_key is not None:
        try:
            args.tls = (args.tls_cert.read_bytes(), args.tls_key.read_bytes())
        except OSError as exc:
            raise OSError(f"cannot read the TLS certificate or key: {exc}") from exc
        try:  # what gRPC would only report as a failure to bind
            ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(args.tls_cert, args.tls_key)
        except (ssl.SSLError, ValueError) as exc:
            raise OSError(f"the TLS certificate and key are not a usable PEM pair: {exc}") from exc


def _int_between(low: int, high: int) -> Callable[[str], int]:
    """An argument type: an integer from `low` to `high` (a value past what the server can
    use fails at start, not in every RPC after it)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}")
        return value

    return parse


MAX_WORKERS = 4096
MAX_QUEUED = 1_000_000  # GetCapabilities reports it as a uint32
MAX_CPU_SECONDS = 86_400
MAX_TTL_S = 10 * 365 * 86_400
MAX_MEMORY_BYTES = 1 << 44  # 16 TiB: an address-space cap past any machine


def _seconds(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError("must be a finite number of seconds, at least 0")
    return value


MIN_WORKER_MEMORY = 512 << 20  # a worker's interpreter, imports and compile-thread stack


def _worker_memory(text: str) -> int:
    value = _memory_size(text)
    if value < MIN_WORKER_MEMORY:
        raise argparse.ArgumentTypeError(
            "must be at least 512M (a worker's interpreter and its compile thread's stack)"
        )
    return value


def _memory_size(text: str) -> int:
    value = _byte_size(text)
    if value > MAX_MEMORY_BYTES:
        raise argparse.ArgumentTypeError("must be at most 16T")
    return value


def _redis_url(text: str) -> str:
    if not text.startswith(("redis://", "rediss://", "unix://")):
        raise argparse.ArgumentTypeError("must be a redis://, rediss:// or unix:// URL")
    return text


_SIZE_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _byte_size(text: str) -> int:
    """ "2147483648", "512M", "2G" (binary units) → bytes."""
    body = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = body[-1:] if body[-1:] in _SIZE_SUFFIX and body[-1:] else ""
    try:
        value = float(body[: len(body) - len(unit)] if unit else body)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError("must be a finite size, at least 0")
    return int(value * _SIZE_SUFFIX[unit])


def _run(main_coroutine: Coroutine[object, object, int]) -> int:
    """Run the server on uvloop where it is installed (a dependency on Linux and macOS: it
    takes about 15% off a cache hit's round trip and half off its p99 on loopback), else on
    asyncio's own loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main_coroutine)
    return uvloop.run(main_coroutine)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logs.configure(args.log_level, args.log_format, sys.stderr)
    try:
        load_secrets(args)
        return _run(serve(args))
    except OSError as exc:
        log.error("%s", exc)
        return 1


if __name__ == "__main__":
    sys.exit(main())
