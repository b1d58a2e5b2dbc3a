"""Fixtures of the GPU tests (helpers in tests/gpu/support.py)."""

from __future__ import annotations

from typing import Any

import pytest

from client_stubs import driver


@pytest.fixture(scope="module")
def device() -> int:
    """Device 0 with its context current; skips without a CUDA device."""
    if driver.device_count() == 0:
        pytest.skip("no CUDA device")
    driver.ensure_context(0)
    return 0


@pytest.fixture(scope="module")
def torch() -> Any:
    """torch with CUDA, device 0's context current; skips without either."""
    torch = pytest.importorskip("torch")
    if driver.device_count() == 0 or not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    driver.ensure_context(0)
    return torch
