"""Fixtures of the GPU tests (helpers in tests/gpu/support.py)."""

from __future__ import annotations

import pytest

from client_stubs import driver


@pytest.fixture(scope="module")
def device() -> int:
    """Device 0 with its context current; skips without a CUDA device."""
    if driver.device_count() == 0:
        pytest.skip("no CUDA device")
    driver.ensure_context(0)
    return 0
