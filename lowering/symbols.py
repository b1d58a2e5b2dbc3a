"""Kernel symbol names: valid PTX identifiers, distinct per specialization."""

from __future__ import annotations

import hashlib
import re

_NOT_IDENT = re.compile(r"[^A-Za-z0-9_]")


def entry_symbol(module_path: tuple[str, ...], function: str, specialization: str) -> str:
    """`<function>_<8 hex>`; the hash covers the module path and the specialization."""
    digest = hashlib.sha256(
        "\0".join((*module_path, function, specialization)).encode()
    ).hexdigest()[:8]
    base = _NOT_IDENT.sub("_", function) or "kernel"
    if base[0].isdigit():
        base = f"k_{base}"
    return f"{base}_{digest}"
