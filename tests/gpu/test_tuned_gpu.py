"""The tuned example kernels on a GPU: the persistent `gemm_tuned` (latency and entry hints,
declared facts), the single-read `rms_norm_rows` and `flash_attention_tuned`, against torch.

Needs a CUDA device, torch, and `CUTILE_GPU_ARTIFACTS` = a bundle built by
`python -m tests.gpu.build_artifacts`; skipped otherwise.
"""

from __future__ import annotations

import math

import pytest

from client_stubs import AssumptionError, BundleEntry, DeviceTensor, GridLimitError
from tests.gpu.test_examples_gpu import _check, _dtype, _entries, _inputs, _kernel

pytestmark = pytest.mark.gpu


def _gemm_args(entry: BundleEntry, z, x, y, blocks: int) -> tuple:  # type: ignore[no-untyped-def]
    generics = entry.generics_dict
    tile = (int(generics["BM"]), int(generics["BN"]))
    groups = tuple(int(g) for g in generics["MAP"].strip("[]").split(","))
    mapped = DeviceTensor.wrap(z).partition(tile).map(groups, blocks)
    return mapped, DeviceTensor.wrap(x), DeviceTensor.wrap(y)


@pytest.mark.parametrize("entry", _entries("gemm_tuned"))
@pytest.mark.parametrize("clusters", [1, 7])
def test_gemm_tuned(entry: BundleEntry, clusters: int, torch) -> None:
    """With CTA = n CTAs per tile block the grid counts CTAs: n * clusters blocks."""
    kernel = _kernel(entry)
    dtype = entry.generics_dict["E"]
    m, n, k = 1000, 264, 512  # partial tiles in M and N; N and K multiples of 8
    x, y = _inputs(torch, dtype, (m, k), (k, n), seed=11)
    z = torch.zeros((m, n), device="cuda", dtype=_dtype(torch, dtype))
    blocks = clusters * int(entry.generics_dict["CTA"])
    kernel(*_gemm_args(entry, z, x, y, blocks), sync=True)
    _check("gemm_tuned", dtype, f"{m}x{n}x{k}", z, x.float() @ y.float())


@pytest.mark.parametrize("entry", _entries("gemm_tuned"))
def test_gemm_tuned_refuses_arguments_that_break_its_facts(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    dtype = entry.generics_dict["E"]
    x, y = _inputs(torch, dtype, (256, 128), (128, 260), seed=12)  # N = 260: not % 8
    z = torch.zeros((256, 260), device="cuda", dtype=_dtype(torch, dtype))
    with pytest.raises(AssumptionError, match=r"dim\(y, 1\) % 8 == 0"):
        kernel(*_gemm_args(entry, z, x, y, 4))


@pytest.mark.parametrize("entry", _entries("gemm_tuned"))
def test_gemm_tuned_clusters_need_a_grid_they_divide(entry: BundleEntry, torch) -> None:
    """The contract carries the cubin's cluster size: the host refuses a grid it does not
    divide before anything reaches the driver."""
    if entry.generics_dict["CTA"] == "1":
        pytest.skip("one CTA per tile block")
    kernel = _kernel(entry)
    dtype = entry.generics_dict["E"]
    x, y = _inputs(torch, dtype, (512, 256), (256, 512), seed=12)
    z = torch.zeros((512, 512), device="cuda", dtype=_dtype(torch, dtype))
    with pytest.raises(GridLimitError, match="multiple of the cubin's cluster"):
        kernel(*_gemm_args(entry, z, x, y, 3), sync=True)


@pytest.mark.parametrize("entry", _entries("rms_norm_rows", "rms_norm_rows_tuned"))
def test_rms_norm_rows(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    bm, n = int(entry.generics_dict["BM"]), int(entry.generics_dict["N"])
    rows, eps = 301, 1e-6  # the last block has one row past the end
    x, w = _inputs(torch, "f32", (rows, n), (n,), seed=13)
    out = torch.zeros_like(x)
    part = DeviceTensor.wrap(out).partition((bm, n))
    kernel(part, DeviceTensor.wrap(x), DeviceTensor.wrap(w), eps, sync=True)
    expected = x * torch.rsqrt((x * x).mean(dim=1, keepdim=True) + eps) * w
    _check(entry.function, "f32", f"{rows}x{n}", out, expected)


@pytest.mark.parametrize("entry", _entries("flash_attention_tuned"))
def test_flash_attention_tuned(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    generics = entry.generics_dict
    dtype, bm, d = generics["E"], int(generics["BM"]), int(generics["D"])
    causal = generics["CAUSAL"] == "1"
    heads, length = 4, 1000  # a partial last query and key block
    q, k, v = _inputs(torch, dtype, *[(heads, length, d)] * 3, seed=14)
    out = torch.zeros_like(q)
    scale = 1.0 / math.sqrt(d)
    views = [DeviceTensor.wrap(t.transpose(0, 1)) for t in (out, q, k, v)]  # [L, heads, D]
    kernel(views[0].partition((bm, 1, d)), *views[1:], scale * math.log2(math.e), sync=True)
    scores = (q.float() @ k.float().transpose(1, 2)) * scale
    if causal:
        hidden = torch.ones(length, length, device="cuda", dtype=torch.bool).triu(1)
        scores = scores.masked_fill(hidden, float("-inf"))
    expected = torch.softmax(scores, dim=-1) @ v.float()
    _check("flash_attention_tuned", dtype, f"{heads}x{length}x{d}", out, expected)
