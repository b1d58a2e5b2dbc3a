"""The default path on the GPU: kernels built the way `cutile-compile` builds them by default
(the general kernel plus its variants for extents and strides divisible by 16, for the same
past the leading extent, and for rows of 16-byte multiples: of variants that assemble to one
cubin only the one assuming less is kept; and for an entry with no occupancy hint and no
`mma`, the occupancy variant), launched with `Bundle.kernel(...)` and no `for_args`: each
launch runs the variant its arguments meet, the occupancy variant only with 1024 or more tile
blocks.

    python -m tests.gpu.build_artifacts OUT      # writes OUT/default too
    PYTHONPATH=. CUTILE_GPU_ARTIFACTS=OUT python3 -m pytest tests/gpu/test_default_variants_gpu.py
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from client_stubs import Bundle, BundleError, DeviceTensor, Variants

pytestmark = pytest.mark.gpu

ENV = "CUTILE_GPU_ARTIFACTS"
GEMM = {"E": "f16", "BM": "128", "BN": "128", "BK": "64"}


@pytest.fixture(scope="module")
def bundle() -> Bundle:
    root = os.environ.get(ENV)
    if not root:
        pytest.skip(f"{ENV} is not set")
    try:
        return Bundle.open(Path(root) / "default")
    except BundleError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize(
    ("m", "n", "k", "variant"),
    [
        (1024, 512, 256, 0),  # all 16-multiples: past M (the all-16 one is the same cubin)
        (1000, 512, 256, 0),  # M of no divisibility: the same variant
        (1000, 520, 200, 1),  # rows of 16-byte multiples, extents not: the rows variant
        (1024, 512, 264, 1),
        (1000, 520, 201, 2),  # x's rows of 402 bytes: only the general kernel
    ],
)
def test_gemm_runs_the_variant_its_arguments_meet(bundle: Bundle, torch, m, n, k, variant) -> None:
    kernel = bundle.kernel("gemm", GEMM)
    assert isinstance(kernel, Variants) and len(kernel.variants) == 3
    x = torch.randn((m, k), device="cuda", dtype=torch.float16)
    y = torch.randn((k, n), device="cuda", dtype=torch.float16)
    z = torch.zeros((m, n), device="cuda", dtype=torch.float16)
    args = (DeviceTensor.wrap(z).partition((128, 128)), DeviceTensor.wrap(x), DeviceTensor.wrap(y))
    assert kernel.choose(*args) is kernel.variants[variant]
    kernel(*args, sync=True)
    expected = x.float() @ y.float()
    error = (z.float() - expected).abs().max().item() / expected.abs().max().item()
    assert error <= 1e-2


def test_add_repeats_and_alternates_its_variants(bundle: Bundle, torch) -> None:
    kernel = bundle.kernel("add", {"B": "1024"})
    assert isinstance(kernel, Variants)
    for n in (1 << 20, (1 << 20) + 3, 1 << 20):
        x = torch.randn(n, device="cuda")
        y = torch.randn(n, device="cuda")
        z = torch.zeros(n, device="cuda")
        args = (DeviceTensor.wrap(z).partition((1024,)), DeviceTensor.wrap(x), DeviceTensor.wrap(y))
        for _ in range(3):
            kernel(*args)
        kernel.op(*args).sync()
        assert (kernel.choose(*args) is kernel.general) == (n % 16 != 0)
        assert torch.equal(z, x + y)


@pytest.mark.parametrize(("rows", "occupancy"), [(4097, True), (1024, True), (1000, False)])
def test_rms_norm_runs_its_occupancy_variant_for_many_tile_blocks(
    bundle: Bundle, torch, rows: int, occupancy: bool
) -> None:
    kernel = bundle.kernel("rms_norm", {"N": "2048", "BLOCK_SIZE": "128"})
    assert isinstance(kernel, Variants)
    assert any(v.spec.min_tile_blocks == 1024 for v in kernel.variants)
    x = torch.randn((rows, 2048), device="cuda")
    w = torch.randn(2048, device="cuda")
    out = torch.zeros_like(x)
    args = (DeviceTensor.wrap(x), DeviceTensor.wrap(w), DeviceTensor.wrap(out).partition((1, 2048)))
    chosen = kernel.choose(*args, 1e-6)
    assert (chosen.spec.min_tile_blocks == 1024) == occupancy  # one tile block a row
    kernel(*args, 1e-6, sync=True)
    expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    assert torch.allclose(out, expected, rtol=1e-4, atol=1e-5)
