"""`cutile-serve`: the gRPC compile daemon.

    cutile-serve [--host 127.0.0.1] [--port 50051] [--cache-dir DIR | --no-cache]
                 [--cache-max-bytes N[K|M|G]] [--workers N] [--max-queued N]
                 [--grace SECONDS] [--tileiras PATH] [--log-level LEVEL]

Serves `cutile.compile.v1.CompileService`, the standard health service (SERVING for ""
and the compile service; NOT_SERVING when tileiras is missing) and server reflection.
Prints `cutile-serve listening on HOST:PORT` once bound (`--port 0` picks a free port).
SIGTERM or SIGINT: health goes NOT_SERVING, new RPCs are refused, in-flight ones get
`--grace` seconds, then the process exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from protos.generated.cutile.compile.v1 import compile_pb2_grpc
from service.cache import DEFAULT_MAX_BYTES, DiskCache, default_cache_dir
from service.convert import DEFAULT_LIMITS, Limits
from service.engine import CompileEngine
from service.servicer import DEFAULT_SERVICE_LIMITS, SERVICE_NAME, CompileServicer, ServiceLimits
from service.toolchain import locate_assembler

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
) -> tuple[grpc.aio.Server, int]:
    """A bound, not yet started server and its port. `engine=None`: no tileiras."""
    server = grpc.aio.server(options=SERVER_OPTIONS)
    servicer = CompileServicer(
        engine,
        limits=limits,
        workers=workers,
        max_queued=max_queued,
        service_limits=service_limits,
        retry_delay_s=retry_delay_s,
    )
    compile_pb2_grpc.add_CompileServiceServicer_to_server(servicer, server)

    health_servicer = health_servicer or health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    serving = health_pb2.HealthCheckResponse.SERVING
    status = serving if engine is not None else health_pb2.HealthCheckResponse.NOT_SERVING
    for service in ("", SERVICE_NAME):
        await health_servicer.set(service, status)

    names = (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME)
    reflection.enable_server_reflection(names, server)

    try:
        port = server.add_insecure_port(address)
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
) -> CompileEngine | None:
    """The engine over the located tileiras and the disk cache; None without tileiras."""
    assembler = locate_assembler(tileiras)
    if assembler is None:
        return None
    cache = (
        DiskCache(cache_dir or default_cache_dir(), max_bytes=cache_max_bytes)
        if use_cache
        else None
    )
    return CompileEngine(assembler, cache=cache)


async def serve(args: argparse.Namespace) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):  # before anyone can know our port
        loop.add_signal_handler(signum, stop.set)

    engine = build_engine(
        args.cache_dir,
        use_cache=not args.no_cache,
        tileiras=args.tileiras,
        cache_max_bytes=args.cache_max_bytes or None,
    )
    health_servicer = health.aio.HealthServicer()
    address = f"{_host_for_address(args.host)}:{args.port}"
    server, port = await create_server(
        address,
        engine,
        workers=args.workers,
        max_queued=args.max_queued,
        health_servicer=health_servicer,
    )
    await server.start()
    print(f"cutile-serve listening on {_host_for_address(args.host)}:{port}", flush=True)
    await stop.wait()

    log.info("shutting down (grace %.1f s)", args.grace)
    await health_servicer.enter_graceful_shutdown()
    await server.stop(args.grace)
    log.info("stopped")
    return 0


def _host_for_address(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="cutile-serve", description="Serve cuTile Rust kernel compilation over gRPC."
    )
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
        "--cache-max-bytes",
        type=_byte_size,
        default=DEFAULT_MAX_BYTES,
        help="evict least-recently-used artifacts past this size, e.g. 512M (default 2G; 0 = "
        "unbounded)",
    )
    parser.add_argument(
        "--tileiras",
        metavar="PATH",
        help="the tileiras binary (default: $CUTILE_TILEIRAS, the nvidia wheel, then PATH)",
    )
    parser.add_argument(
        "--workers", type=_positive_int, help="concurrent compiles (default: CPU count)"
    )
    parser.add_argument(
        "--max-queued",
        type=_non_negative_int,
        help="compiles that may wait for a worker; beyond, RESOURCE_EXHAUSTED "
        "(default: 4 x workers)",
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=DEFAULT_GRACE_S,
        help="seconds in-flight RPCs get on shutdown (default %(default)s)",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=("DEBUG", "INFO", "WARNING", "ERROR"),
        help="logging level (default %(default)s)",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error("--port must be 0..65535")
    return args


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be at least 0")
    return value


_SIZE_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _byte_size(text: str) -> int:
    """ "2147483648", "512M", "2G" (binary units) → bytes."""
    body = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = body[-1:] if body[-1:] in _SIZE_SUFFIX and body[-1:] else ""
    try:
        value = float(body[: len(body) - len(unit)] if unit else body)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be at least 0")
    return int(value * _SIZE_SUFFIX[unit])


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        level=args.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        return asyncio.run(serve(args))
    except OSError as exc:
        log.error("%s", exc)
        return 1


if __name__ == "__main__":
    sys.exit(main())
