"""What the GPU tests share: the bundle they launch from (`CUTILE_GPU_ARTIFACTS`, built by
`python -m tests.gpu.build_artifacts`), its entries as test parameters and loading an entry
for the current device (the `device` fixture is in conftest.py). Everything skips cleanly
without a GPU or a bundle."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from client_stubs import Bundle, BundleEntry, BundleError, Kernel, driver

ENV = "CUTILE_GPU_ARTIFACTS"


def entries(
    *functions: str, where: Callable[[BundleEntry], bool] = lambda entry: True
) -> list[object]:
    """One test parameter per bundle entry of `functions` that `where` accepts (a skip mark
    when there are none)."""
    root = os.environ.get(ENV)
    if not root:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{ENV} is not set"))]
    try:
        bundle = Bundle.open(root)
    except BundleError as exc:
        return [pytest.param(None, marks=pytest.mark.skip(reason=str(exc)))]
    found = [
        pytest.param(e, id=e.label())
        for e in bundle.entries
        if e.function in functions and where(e)
    ]
    return found or [pytest.param(None, marks=pytest.mark.skip(reason=f"no {functions} in {root}"))]


def load(entry: BundleEntry, device: int, *, allow_unchecked: bool = False) -> Kernel:
    """`entry`'s kernel; skips an entry built for another GPU."""
    sm = driver.device_sm(device)
    if entry.sm != sm:
        pytest.skip(f"{entry.label()} does not run on this {sm} device")
    return Bundle.open(os.environ[ENV]).load(entry, allow_unchecked=allow_unchecked)
