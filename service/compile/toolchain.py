"""Find the tileiras assembler once, at start-up, for the server and the CLI."""

from __future__ import annotations

import logging

from lowering.tileiras import Tileiras, TileirasError

log = logging.getLogger(__name__)


def locate_assembler(explicit: str | None = None) -> Tileiras | None:
    """A located tileiras that answers `--version`, or None (logged) when there is none.

    `explicit` is a path; otherwise $CUTILE_TILEIRAS, the nvidia wheel, then PATH.
    """
    try:
        assembler = Tileiras.locate(explicit)
        log.info("using tileiras %s at %s", assembler.version, assembler.path)
        assembler.fingerprint  # noqa: B018 - probe it now rather than on the first request
    except TileirasError as exc:
        log.warning("tileiras not available: %s", exc)
        return None
    return assembler
