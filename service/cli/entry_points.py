"""The console scripts `cutile-serve`, `cutile-compile` and `cutile-lsp`.

The default `pip install cutile-serve` is the host client alone (client_stubs: bundles,
launches, the service client); the compiler and the daemon come with the `server` extra.
The scripts are installed either way, so each imports its tool only when run: in a
host-only install, a missing server dependency is reported as one line that says what to
install, not as an ImportError traceback.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable

EXIT_MISSING = 1
INSTALL_HINT = "pip install 'cutile-serve[server]'"

# top-level modules only the `server` extra brings (pyproject.toml)
SERVER_MODULES = frozenset(
    {
        "tree_sitter",
        "tree_sitter_rust",
        "grpc_health",
        "grpc_reflection",
        "grpc_status",
        "prometheus_client",
        "redis",
        "uvloop",
        "tqdm",
        "pygls",
        "lsprotocol",
    }
)


def missing_server_module(exc: ModuleNotFoundError) -> str | None:
    """The server-extra module whose absence `exc` reports, or None for any other."""
    top = (exc.name or "").split(".")[0]
    return top if top in SERVER_MODULES else None


def run_tool(program: str, module: str, function: str = "main") -> int:
    """Import `module` and run its `function`; a server dependency that is not installed
    is reported with the extra that brings it (exit status 1)."""
    try:
        main: Callable[[], int | None] = getattr(importlib.import_module(module), function)
    except ModuleNotFoundError as exc:
        missing = missing_server_module(exc)
        if missing is None:
            raise
        print(
            f"error: {program} needs the compiler and server tools, which the host-only "
            f"install leaves out (no module `{missing}`)\n"
            f"help: install them with `{INSTALL_HINT}` (from a checkout: "
            "`pip install -e '.[server]'`)",
            file=sys.stderr,
        )
        return EXIT_MISSING
    return int(main() or 0)


def serve() -> int:
    return run_tool("cutile-serve", "service.server.daemon")


def compile_batch() -> int:
    return run_tool("cutile-compile", "service.cli.batch")


def lsp() -> int:
    return run_tool("cutile-lsp", "service.cli.lsp")
