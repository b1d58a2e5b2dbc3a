"""Fixtures shared by every test package: the real tileiras (skipped when absent)."""

from __future__ import annotations

import pytest

from lowering.tileiras import Tileiras, TileirasNotFound


@pytest.fixture(scope="session")
def tileiras() -> Tileiras:
    """The located tileiras; tests that use it skip when it is not installed."""
    try:
        return Tileiras.locate()
    except TileirasNotFound as exc:
        pytest.skip(f"tileiras not installed: {exc}")
