"""GPU cases for cutile-rs's cutile-examples: each launches the example's kernel the way its
`main` does (same generics; larger, uneven sizes where the kernel allows) and compares with
torch. Keys are the runner table's (`path::function`)."""

from __future__ import annotations

import math

import torch

from client_stubs import DeviceTensor
from tests.compat.gpu_support import (
    CaseContext,
    CaseFn,
    Compared,
    Launched,
    randn,
    tolerance_for,
    view,
)

EXAMPLES = "cutile-examples/examples/"
N_ELEMENTWISE = (1 << 22) + 3  # not a multiple of any tile


def _add(ctx: CaseContext, tile: int, n: int = N_ELEMENTWISE) -> Launched:
    """`z = x + y` with a [tile] output partition (the add examples)."""
    x, y = randn(n, seed=1), randn(n, seed=2)
    z = torch.zeros(n, device="cuda")
    kernel = ctx.kernel()
    args = (view(z).partition((tile,)), view(x), view(y))
    kernel(*args, sync=True)
    expected = x + y
    return Launched(
        [Compared("z", z, expected, 0.0)],
        ours=lambda: kernel(*args),
        reference=lambda: torch.add(x, y, out=z),
    )


def _add_shape_s(ctx: CaseContext) -> Launched:
    (tile,) = ctx.shape("S")
    return _add(ctx, tile)


def _add_b(ctx: CaseContext) -> Launched:
    return _add(ctx, ctx.int("B"))


def _saxpy(ctx: CaseContext, dtype: torch.dtype = torch.float32) -> Launched:
    """`y = a * x + y` with an [S0, S1] tile, y both read and written."""
    tile = ctx.shape("S")
    rows, cols = 1000, 1030  # neither a multiple of the tile
    x, y0 = randn(rows, cols, dtype=dtype, seed=1), randn(rows, cols, dtype=dtype, seed=2)
    y = y0.clone()
    a = 2.0
    kernel = ctx.kernel()
    args = (view(y).partition(tile), a, view(x))
    kernel(*args, sync=True)
    expected = a * x + y0
    timed_y = y.clone()
    return Launched(
        [Compared("y", y, expected, tolerance_for(dtype, float(expected.abs().max())))],
        ours=lambda: kernel(*args),
        reference=lambda: timed_y.add_(x, alpha=a),
    )


def _saxpy_typed(ctx: CaseContext) -> Launched:
    return _saxpy(ctx, ctx.dtype("T"))


def _gemm(ctx: CaseContext, m: int = 1000, n: int = 1030) -> Launched:
    """`z = z0 + x @ y` (the accumulator starts from z's old value) with K a generic."""
    k = ctx.int("K")
    bm, bn = ctx.int("BM"), ctx.int("BN")
    dtype = ctx.dtype("E") if "E" in ctx.generics else torch.float32
    x, y = randn(m, k, dtype=dtype, seed=1), randn(k, n, dtype=dtype, seed=2)
    z0 = randn(m, n, dtype=dtype, seed=3)
    z = z0.clone()
    kernel = ctx.kernel()
    args = (view(z).partition((bm, bn)), view(x), view(y))
    kernel(*args, sync=True)
    expected = (z0.double() + x.double() @ y.double()).to(dtype)
    out = torch.empty_like(z)
    return Launched(
        [Compared("z", z, expected, tolerance_for(dtype, math.sqrt(k), k))],
        ours=lambda: kernel(*args),
        reference=lambda: torch.addmm(z0, x, y, out=out),
        note=f"{m}x{n}x{k}",
    )


def _gemm_static(ctx: CaseContext) -> Launched:
    return _gemm(ctx, ctx.int("M"), ctx.int("N"))


def _async_gemm(ctx: CaseContext) -> Launched:
    """f16 inputs, f32 accumulator and output: `z = z0 + x @ y`."""
    k, bm, bn = ctx.int("K"), ctx.int("BM"), ctx.int("BN")
    m, n = 1000, 1030
    x, y = randn(m, k, dtype=torch.float16, seed=1), randn(k, n, dtype=torch.float16, seed=2)
    z = torch.zeros(m, n, device="cuda")
    kernel = ctx.kernel()
    args = (view(z).partition((bm, bn)), view(x), view(y))
    kernel(*args, sync=True)
    expected = x.float() @ y.float()
    return Launched(
        [Compared("z", z, expected, tolerance_for(torch.float32, math.sqrt(k), k))],
        ours=lambda: kernel(*args),
        reference=lambda: torch.matmul(x, y),
    )


def _mlp_gemm(ctx: CaseContext) -> Launched:
    return _gemm(ctx, 1000, 1030)


def _matvec_mk(ctx: CaseContext) -> Launched:
    """async_mlp's `z = z0 + x @ y` with x [M, K] and y [K]: a [BM] output tile."""
    bm, k = ctx.int("BM"), ctx.int("K")
    m = 1002
    x, y = randn(m, k, seed=1), randn(k, seed=2)
    z0 = randn(m, seed=3)
    z = z0.clone()
    kernel = ctx.kernel()
    args = (view(z).partition((bm,)), view(x), view(y))
    kernel(*args, sync=True)
    expected = z0.double() + x.double() @ y.double()
    out = torch.empty_like(z)
    return Launched(
        [Compared("z", z, expected, tolerance_for(torch.float32, math.sqrt(k), k))],
        ours=lambda: kernel(*args),
        reference=lambda: torch.addmv(z0, x, y, out=out),
    )


def _matvec_wx(ctx: CaseContext) -> Launched:
    """cuda_graphs' `out = out0 + w @ x[0]`, w stored [N, K] and x [1, K]."""
    bn, k = ctx.int("BN"), ctx.int("K")
    n = 2048
    w, x = randn(n, k, seed=1), randn(1, k, seed=2)
    out0 = randn(n, seed=3)
    out = out0.clone()
    kernel = ctx.kernel()
    args = (view(out).partition((bn,)), view(x), view(w))
    kernel(*args, sync=True)
    expected = out0.double() + w.double() @ x[0].double()
    scratch = torch.empty_like(out)
    return Launched(
        [Compared("out", out, expected, tolerance_for(torch.float32, math.sqrt(k), k))],
        ours=lambda: kernel(*args),
        reference=lambda: torch.addmv(out0, w, x[0], out=scratch),
    )


def _relu(ctx: CaseContext) -> Launched:
    d = ctx.int("D")
    x0 = randn(N_ELEMENTWISE, seed=1)
    x = x0.clone()
    kernel = ctx.kernel()
    args = (view(x).partition((d,)),)
    kernel(*args, sync=True)
    timed = x0.clone()
    return Launched(
        [Compared("input_output", x, torch.relu(x0), 0.0)],
        ours=lambda: kernel(*args),
        reference=lambda: torch.relu_(timed),
    )


def _rms_rows(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    xd = x.double()
    return xd * torch.rsqrt(xd.pow(2).mean(dim=1, keepdim=True) + eps) * w.double()


def _rms_norm(ctx: CaseContext, n_name: str, out_first: bool, rows: int = 4097) -> Launched:
    """`out[i] = x[i] * rsqrt(mean(x[i]^2) + eps) * w` with a [1, N] output tile."""
    n = ctx.int(n_name)
    x, w = randn(rows, n, seed=1), randn(n, seed=2)
    out = torch.zeros(rows, n, device="cuda")
    eps = 1e-5
    kernel = ctx.kernel()
    part = view(out).partition((1, n))
    args = (part, view(x), view(w), eps) if out_first else (view(x), view(w), part, eps)
    kernel(*args, sync=True)
    expected = _rms_rows(x, w, eps)
    return Launched(
        [Compared("out", out, expected, 1e-4 * float(expected.abs().max()))],
        ours=lambda: kernel(*args),
        reference=lambda: torch.nn.functional.rms_norm(x, (n,), w, eps),
    )


def _rms_norm_x_first(ctx: CaseContext) -> Launched:
    return _rms_norm(ctx, "N", out_first=False)


def _rms_norm_out_first(ctx: CaseContext) -> Launched:
    return _rms_norm(ctx, "D", out_first=True)


def _batch_matmul(ctx: CaseContext) -> Launched:
    k, bm, bn = ctx.int("K"), ctx.int("BM"), ctx.int("BN")
    batch, m, n = 6, 500, 520
    dtype = ctx.dtype("E")
    a, b = randn(batch, m, k, dtype=dtype, seed=1), randn(batch, k, n, dtype=dtype, seed=2)
    c = torch.zeros(batch, m, n, device="cuda", dtype=dtype)
    kernel = ctx.kernel()
    args = (view(c).partition((1, bm, bn)), view(a), view(b))
    kernel(*args, sync=True)
    expected = torch.bmm(a.double(), b.double())
    out = torch.empty_like(c)
    return Launched(
        [Compared("c", c, expected, tolerance_for(dtype, math.sqrt(k), k))],
        ours=lambda: kernel(*args),
        reference=lambda: torch.bmm(a, b, out=out),
    )


def _dropout(ctx: CaseContext) -> Launched:
    """`out = where(x_keep > p, x_keep, 0) / (1 - p)` (the example never reads `_x`)."""
    (tile,) = ctx.shape("S")
    p = 0.4
    x = randn(N_ELEMENTWISE, seed=1)
    keep = torch.rand(
        N_ELEMENTWISE, device="cuda", generator=torch.Generator("cuda").manual_seed(2)
    )
    out = torch.zeros(N_ELEMENTWISE, device="cuda")
    kernel = ctx.kernel()
    args = (p, view(x), view(keep), view(out).partition((tile,)))
    kernel(*args, sync=True)
    expected = torch.where(keep > p, keep, 0.0) / (1 - p)
    return Launched(
        [Compared("out", out, expected, 1e-6)],
        ours=lambda: kernel(*args),
        reference=lambda: torch.where(keep > p, keep, 0.0) / (1 - p),
    )


def _attention_reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, causal_offset: int | None
) -> torch.Tensor:
    """softmax(q k^T * scale [+ mask: key j > query i + offset]) v, in f64."""
    scores = (q.double() @ k.double().transpose(-1, -2)) * scale
    if causal_offset is not None:
        m, n = scores.shape[-2:]
        i = torch.arange(m, device="cuda")[:, None]
        j = torch.arange(n, device="cuda")[None, :]
        scores = scores.masked_fill(j > i + causal_offset, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v.double()


def _fmha(ctx: CaseContext) -> Launched:
    """flash_attention.rs: out [B*H, M, D] from q [B, H, M, D], k/v [B, H, N, D], non-causal."""
    bm, d = ctx.int("BM"), ctx.int("D")
    b, h, m = 4, 32, 1024  # keys as many as queries
    q, k, v = (randn(b, h, m, d, seed=s) for s in (1, 2, 3))
    out = torch.zeros(b * h, m, d, device="cuda")
    scale = 1 / math.sqrt(d)
    kernel = ctx.kernel()
    args = (view(out).partition((1, bm, d)), view(q), view(k), view(v), scale, 1)
    kernel(*args, sync=True)
    expected = _attention_reference(q, k, v, scale, None).reshape(b * h, m, d)
    return Launched(
        [Compared("out", out, expected, 1e-4)],
        ours=lambda: kernel(*args),
        reference=lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=scale),
    )


def _fmha_causal(ctx: CaseContext) -> Launched:
    """flash_attention_causal.rs at its host's sizes (b, h, seq, d) = (2, 8, 64, 32);
    CAUSAL masks key j > query i + input_pos."""
    bm, d, heads = ctx.int("BM"), ctx.int("D"), ctx.int("H")
    causal = ctx.int("CAUSAL") == 1
    b, seq = 2, 64
    q, k, v = (randn(b, heads, seq, d, seed=s) for s in (7, 11, 13))
    out = torch.zeros(b * heads, seq, d, device="cuda")
    scale = 1 / math.sqrt(d)
    input_pos = 5 if causal else 0
    kernel = ctx.kernel()
    args = (view(out).partition((1, bm, d)), view(q), view(k), view(v), scale, input_pos, 1)
    kernel(*args, sync=True)
    expected = _attention_reference(q, k, v, scale, input_pos if causal else None)
    return Launched(
        [Compared("out", out, expected.reshape(b * heads, seq, d), 2e-4)],
        ours=lambda: kernel(*args),
        reference=lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=scale),
    )


def _persistent_gemm(ctx: CaseContext) -> Launched:
    bm, bn = ctx.int("BM"), ctx.int("BN")
    map_shape = ctx.shape("MAP_SHAPE")
    dtype = ctx.dtype("T")
    m, n, k = 1000, 1030, 520
    x, y = randn(m, k, dtype=dtype, seed=1), randn(k, n, dtype=dtype, seed=2)
    z = torch.zeros(m, n, device="cuda", dtype=dtype)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    kernel = ctx.kernel()
    args = (view(z).partition((bm, bn)).map(map_shape, sms), view(x), view(y))
    kernel(*args, sync=True)
    expected = x.double() @ y.double()
    out = torch.empty_like(z)
    return Launched(
        [Compared("z", z, expected, tolerance_for(dtype, math.sqrt(k), k))],
        ours=lambda: kernel(*args),
        reference=lambda: torch.matmul(x, y, out=out),
    )


def _softmax(ctx: CaseContext) -> Launched:
    bm, bn = ctx.int("BM"), ctx.int("BN")
    rows = 4097
    x = randn(rows, bn, seed=1)
    y = torch.zeros(rows, bn, device="cuda")
    kernel = ctx.kernel()
    args = (view(y).partition((bm, bn)), view(x))
    kernel(*args, sync=True)
    return Launched(
        [Compared("y", y, torch.softmax(x.double(), dim=1), 1e-6)],
        ours=lambda: kernel(*args),
        reference=lambda: torch.softmax(x, dim=1),
    )


def _scale_ptr(ctx: CaseContext) -> Launched:
    """`out[i] = in[i] * scale` for i < len through raw pointers, grid (4, 1, 1)."""
    n = 1_000_003
    source = randn(n, seed=1)
    out = torch.zeros(n, device="cuda")
    kernel = ctx.kernel(allow_unchecked=True)
    args = (DeviceTensor.wrap(out), DeviceTensor.wrap(source), 3.0, n)
    kernel(*args, grid=(4, 1, 1), sync=True)
    return Launched(
        [Compared("out", out, source * 3.0, 0.0)],
        ours=lambda: kernel(*args, grid=(4, 1, 1)),
        reference=lambda: torch.mul(source, 3.0, out=out),
    )


def _hello_world(ctx: CaseContext) -> Launched:
    """No output: it prints; the check is that a host-grid launch runs and completes."""
    kernel = ctx.kernel()
    kernel(grid=(1, 1, 1), sync=True)
    return Launched([], ours=lambda: kernel(grid=(1, 1, 1)), note="prints only")


CASES: dict[str, CaseFn] = {
    EXAMPLES + "async_add.rs::add": _add_shape_s,
    EXAMPLES + "async_and_then_example.rs::saxpy": _saxpy,
    EXAMPLES + "async_gemm.rs::gemm": _async_gemm,
    EXAMPLES + "async_mlp.rs::gemm": _mlp_gemm,
    EXAMPLES + "async_mlp.rs::matvec": _matvec_mk,
    EXAMPLES + "async_mlp.rs::relu": _relu,
    EXAMPLES + "async_saxpy.rs::saxpy": _saxpy_typed,
    EXAMPLES + "autotune.rs::rms_norm": _rms_norm_x_first,
    EXAMPLES + "batch_matmul.rs::batch_matmul": _batch_matmul,
    EXAMPLES + "cuda_graphs.rs::rms_norm": _rms_norm_out_first,
    EXAMPLES + "cuda_graphs.rs::matvec": _matvec_wx,
    EXAMPLES + "cuda_graphs.rs::add": _add_b,
    EXAMPLES + "cuda_graphs_deviceop.rs::rms_norm": _rms_norm_out_first,
    EXAMPLES + "cuda_graphs_deviceop.rs::matvec": _matvec_wx,
    EXAMPLES + "cuda_graphs_deviceop.rs::add": _add_b,
    EXAMPLES + "cudarc_interop.rs::add": _add_shape_s,
    EXAMPLES + "dropout.rs::dropout": _dropout,
    EXAMPLES + "flash_attention.rs::fmha": _fmha,
    EXAMPLES + "flash_attention_causal.rs::fmha": _fmha_causal,
    EXAMPLES + "gemm.rs::gemm": _gemm,
    EXAMPLES + "gemm_static.rs::gemm": _gemm_static,
    EXAMPLES + "hello_world.rs::hello_world_kernel": _hello_world,
    EXAMPLES + "interop.rs::add": _add_shape_s,
    EXAMPLES + "jit_custom_store.rs::add": _add_shape_s,
    EXAMPLES + "jit_disk_cache.rs::add": _add_shape_s,
    EXAMPLES + "persistent_gemm.rs::gemm_persistent": _persistent_gemm,
    EXAMPLES + "rms_norm.rs::rms_norm": _rms_norm_x_first,
    EXAMPLES + "saxpy.rs::saxpy": _saxpy,
    EXAMPLES + "scale_ptr.rs::scale_ptr": _scale_ptr,
    EXAMPLES + "softmax.rs::softmax": _softmax,
}
