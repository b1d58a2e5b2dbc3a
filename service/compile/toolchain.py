"""Find the tileiras assembler once, at start-up, for the server and the CLI."""

from __future__ import annotations

import logging

from lowering.tileiras import ADDRESS_SPACE_CAP, Tileiras, TileirasError

log = logging.getLogger(__name__)


def locate_assembler(
    explicit: str | None = None, memory_cap: int = ADDRESS_SPACE_CAP
) -> Tileiras | None:
    """A located tileiras that answers `--version`, or None (logged) when there is none;
    each of its runs may map `memory_cap` bytes.

    `explicit` is a path; otherwise $CUTILE_TILEIRAS, the nvidia wheel, then PATH.
    """
    try:
        assembler = Tileiras.locate(explicit, memory_cap)
        log.info("using tileiras %s at %s", assembler.version, assembler.path)
        assembler.fingerprint  # noqa: B018 - probe it now rather than on the first request
    except TileirasError as exc:
        log.warning("tileiras not available: %s", exc)
        return None
    return assembler
