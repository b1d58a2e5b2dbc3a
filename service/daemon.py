"""`cutile-serve`: the gRPC compile daemon.

    cutile-serve [--host 127.0.0.1] [--port 50051] [--cache-dir DIR | --no-cache]
                 [--workers N] [--grace SECONDS] [--tileiras PATH] [--log-level LEVEL]

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
from service.cache import DiskCache, default_cache_dir
from service.convert import DEFAULT_LIMITS, Limits
from service.engine import CompileEngine
from service.servicer import SERVICE_NAME, CompileServicer
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
    limits: Limits = DEFAULT_LIMITS,
    health_servicer: health.aio.HealthServicer | None = None,
) -> tuple[grpc.aio.Server, int]:
    """A bound, not yet started server and its port. `engine=None`: no tileiras."""
    server = grpc.aio.server(options=SERVER_OPTIONS)
    servicer = CompileServicer(engine, limits=limits, workers=workers)
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
    cache_dir: Path | None, *, use_cache: bool = True, tileiras: str | None = None
) -> CompileEngine | None:
    """The engine over the located tileiras and the disk cache; None without tileiras."""
    assembler = locate_assembler(tileiras)
    if assembler is None:
        return None
    cache = DiskCache(cache_dir or default_cache_dir()) if use_cache else None
    return CompileEngine(assembler, cache=cache)


async def serve(args: argparse.Namespace) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):  # before anyone can know our port
        loop.add_signal_handler(signum, stop.set)

    engine = build_engine(args.cache_dir, use_cache=not args.no_cache, tileiras=args.tileiras)
    health_servicer = health.aio.HealthServicer()
    address = f"{_host_for_address(args.host)}:{args.port}"
    server, port = await create_server(
        address, engine, workers=args.workers, health_servicer=health_servicer
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
        "--tileiras",
        metavar="PATH",
        help="the tileiras binary (default: $CUTILE_TILEIRAS, the nvidia wheel, then PATH)",
    )
    parser.add_argument(
        "--workers", type=_positive_int, help="concurrent compiles (default: CPU count)"
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
