"""Relaxed view facts on the GPU: `add` launched on views the default kernel refuses.

A `x[1:]` view of f32 data is only 4-byte aligned and a `x[::2]` view has last stride 2; the
default kernel assumes a 16-byte aligned base and a unit last stride, so the host refuses them.
The bundle from `python -m tests.gpu.build_artifacts` holds `add<B=256>` in the general form and
relaxed for each kind of view; `Bundle.find(..., for_args=...)` must pick the relaxed variant
for such views (and the general one for ordinary tensors), and its results must match numpy.

    PYTHONPATH=. CUTILE_GPU_ARTIFACTS=gpu_artifacts/bundle python3 -m pytest tests/gpu -v
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from client_stubs import (
    AssumptionError,
    Bundle,
    BundleError,
    DeviceTensor,
    Partition,
    driver,
)

pytestmark = pytest.mark.gpu

ENV = "CUTILE_GPU_ARTIFACTS"
GENERICS = {"B": "256"}
N = 100_003  # a partial last tile
SENTINEL = -7.0


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    root = os.environ.get(ENV)
    if not root:
        pytest.skip(f"{ENV} is not set")
    if driver.device_count() == 0:
        pytest.skip("no CUDA device")
    driver.ensure_context(0)
    try:
        opened = Bundle.open(root)
    except BundleError as exc:
        pytest.skip(str(exc))
    variants = [e for e in opened.entries if e.function == "add" and e.matches(GENERICS)]
    if len(variants) < 3 or not any(e.relaxation for e in variants):
        pytest.skip(f"{root} lacks the relaxed add<B=256> variants (tests.gpu.build_artifacts)")
    return opened


def _x_align(bundle: Bundle, args: tuple[object, ...]) -> tuple[str, int]:
    """The chosen variant's label and what it assumes of x's base address."""
    entry = bundle.find("add", GENERICS, for_args=args)
    kernel = bundle.load(entry)
    aligns = [a.value for a in kernel.spec.assumptions if a.param == 1 and a.kind == "BASE_ALIGN"]
    return entry.label(), aligns[0] if aligns else 1


def _launch(bundle: Bundle, z: Partition, x: DeviceTensor, y: DeviceTensor) -> str:
    """Launch the variant chosen for these arguments; `z` (a partition) stays usable."""
    args = (z, x, y)
    entry = bundle.find("add", GENERICS, for_args=args)
    bundle.load(entry)(*args, sync=True)
    return entry.label()


def test_ordinary_tensors_get_the_general_variant(bundle: Bundle) -> None:
    rng = np.random.default_rng(3)
    xs, ys = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    z = DeviceTensor.zeros((N,)).partition((256,))
    label = _launch(bundle, z, DeviceTensor.from_numpy(xs), DeviceTensor.from_numpy(ys))
    assert "relaxed" not in label
    np.testing.assert_array_equal(z.unpartition().to_numpy(), xs + ys)


def test_misaligned_views_get_the_relaxed_variant(bundle: Bundle) -> None:
    rng = np.random.default_rng(4)
    xs, ys = (rng.standard_normal(N + 1).astype(np.float32) for _ in range(2))
    x, y = (DeviceTensor.from_numpy(v).narrow(0, 1, N) for v in (xs, ys))  # x[1:], y[1:]
    z_full = DeviceTensor.from_numpy(np.full(N + 2, SENTINEL, np.float32))
    z_view = z_full.narrow(0, 1, N)
    assert x.layout.ptr % 16 == 4 and z_view.layout.ptr % 16 == 4
    z = z_view.partition((256,))
    (general,) = [
        e
        for e in bundle.entries
        if e.function == "add" and e.matches(GENERICS) and not (e.relaxation or e.specificity)
    ]
    with pytest.raises(AssumptionError, match="% 16 == 0"):
        bundle.load(general).plan(z, x, y)
    label, align = _x_align(bundle, (z, x, y))
    assert "relaxed" in label and align == 4
    _launch(bundle, z, x, y)
    host = z_full.to_numpy()
    np.testing.assert_array_equal(host[1 : N + 1], xs[1:] + ys[1:])
    assert host[0] == host[N + 1] == SENTINEL  # nothing written outside the view


def test_strided_views_get_the_relaxed_variant(bundle: Bundle) -> None:
    rng = np.random.default_rng(5)
    xs, ys = (rng.standard_normal(2 * N).astype(np.float32) for _ in range(2))
    x_full, y_full = DeviceTensor.from_numpy(xs), DeviceTensor.from_numpy(ys)
    z_full = DeviceTensor.from_numpy(np.full(2 * N, SENTINEL, np.float32))
    x, y, z_view = (  # x[::2], y[::2], z[::2]
        DeviceTensor(t.layout.ptr, (N,), (2,), owner=t.layout.owner)
        for t in (x_full, y_full, z_full)
    )
    z = z_view.partition((256,))
    label, _ = _x_align(bundle, (z, x, y))
    assert "relaxed" in label
    _launch(bundle, z, x, y)
    host = z_full.to_numpy()
    np.testing.assert_array_equal(host[0::2], xs[0::2] + ys[0::2])
    assert np.all(host[1::2] == SENTINEL)  # the odd elements are not part of the view
