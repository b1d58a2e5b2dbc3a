"""Run the example kernels of rust_examples/ on a GPU and compare with torch.

Needs a CUDA device, torch, and `CUTILE_GPU_ARTIFACTS` = a bundle built by
`python -m tests.gpu.build_artifacts`; skipped otherwise. With `CUTILE_GPU_REPORT=FILE`
each test appends {kernel, dtype, size, max_abs_error, tolerance} as a JSON line.

Tolerances compare with a float32 torch computation on the same (rounded) inputs, relative
to the largest reference magnitude: f32 1e-3 (tensor cores may use tf32-like paths),
f16 1e-2, bf16 3e-2 (8 significant bits in the stored result).
"""

from __future__ import annotations

import json
import math
import os

import pytest

from client_stubs import (
    AssumptionError,
    Bundle,
    BundleEntry,
    DeviceTensor,
    LaunchCheckError,
)
from tests.gpu.support import ENV
from tests.gpu.support import entries as _entries

pytestmark = pytest.mark.gpu

TOLERANCE = {"f32": 1e-3, "f16": 1e-2, "bf16": 3e-2, "f64": 1e-9}


def _kernel(entry: BundleEntry):
    """The entry's kernel; `unchecked_accesses` twins of the safe examples too."""
    return Bundle.open(os.environ[ENV]).load(entry, allow_unchecked=True)


def _dtype(torch, name: str):
    return {
        "f16": torch.float16,
        "bf16": torch.bfloat16,
        "f32": torch.float32,
        "f64": torch.float64,
    }[name]


def _check(kernel: str, dtype: str, size: str, got, expected) -> None:
    error = (got.float() - expected.float()).abs().max().item()
    scale = max(1.0, expected.float().abs().max().item())
    tolerance = TOLERANCE[dtype] * scale
    report = os.environ.get("CUTILE_GPU_REPORT")
    if report:
        with open(report, "a") as file:
            file.write(
                json.dumps(
                    {
                        "kernel": kernel,
                        "dtype": dtype,
                        "size": size,
                        "max_abs_error": error,
                        "tolerance": tolerance,
                    }
                )
                + "\n"
            )
    assert error <= tolerance, f"{kernel} {dtype} {size}: max error {error} > {tolerance}"


def _inputs(torch, dtype: str, *shapes: tuple[int, ...], seed: int = 0):
    generator = torch.Generator(device="cuda").manual_seed(seed)
    return [
        torch.randn(s, device="cuda", generator=generator).to(_dtype(torch, dtype)) for s in shapes
    ]


@pytest.mark.parametrize("entry", _entries("gemm"))
def test_gemm(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    dtype = entry.generics_dict["E"]
    bm, bn = int(entry.generics_dict["BM"]), int(entry.generics_dict["BN"])
    m, n, k = 1000, 520, 200  # none a multiple of the tiles: edges are masked / padded
    x, y = _inputs(torch, dtype, (m, k), (k, n))
    z = torch.zeros((m, n), device="cuda", dtype=_dtype(torch, dtype))
    out = DeviceTensor.wrap(z).partition((bm, bn))
    kernel(out, DeviceTensor.wrap(x), DeviceTensor.wrap(y), sync=True)
    _check("gemm", dtype, f"{m}x{n}x{k}", z, x.float() @ y.float())


# relative to the largest output; at 4096^3 on an H100 (BENCHMARKS.md, 2026-12-05) f32 FMA and
# the pass's products gave 5e-7, the three products chained through the tensor cores' sum
# 2.8e-5 (about half that at k = 2048), a single TF32 product 2.7e-4
F32_PRODUCT_TOLERANCE = 4e-6


@pytest.mark.parametrize("entry", _entries("gemm", where=lambda e: e.generics_dict["E"] == "f32"))
def test_f32_gemm_on_tensor_cores_keeps_f32_accuracy(entry: BundleEntry, torch) -> None:
    """The f32 GEMM runs as three TF32 products a k-tile (`lowering.split_f32_products`);
    against a float64 reference it must stay as accurate as f32 arithmetic."""
    kernel = _kernel(entry)
    bm, bn = int(entry.generics_dict["BM"]), int(entry.generics_dict["BN"])
    m, n, k = 1000, 520, 2048
    x, y = _inputs(torch, "f32", (m, k), (k, n), seed=3)
    z = torch.zeros((m, n), device="cuda", dtype=torch.float32)
    kernel(DeviceTensor.wrap(z).partition((bm, bn)), DeviceTensor.wrap(x), DeviceTensor.wrap(y))
    torch.cuda.synchronize()
    expected = x.double() @ y.double()
    error = ((z.double() - expected).abs().max() / expected.abs().max()).item()
    assert error <= F32_PRODUCT_TOLERANCE, f"relative error {error:.2e}"


def test_bundle_picks_the_fact_variant_only_for_tensors_that_meet_its_facts(torch) -> None:
    bundle = Bundle.open(os.environ.get(ENV) or pytest.skip(f"{ENV} is not set"))
    variants = [e for e in bundle.entries if e.function == "gemm" and e.specificity]
    if not variants:
        pytest.skip("no gemm variant built with --facts")
    generics = variants[0].generics_dict

    def chosen(k: int) -> BundleEntry:
        x, y = _inputs(torch, "f16", (1000, k), (k, 520))
        z = torch.zeros((1000, 520), device="cuda", dtype=torch.float16)
        out = DeviceTensor.wrap(z).partition((128, 128))
        args = (out, DeviceTensor.wrap(x), DeviceTensor.wrap(y))
        return bundle.find("gemm", generics, for_args=args)

    assert chosen(200) == variants[0]  # 200 and 520: multiples of 8
    assert chosen(201).specificity == 0  # K = 201: the general kernel


@pytest.mark.parametrize("entry", _entries("gemm_aligned") + _entries("gemm_unchecked"))
def test_gemm_with_declared_preconditions(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    dtype = entry.generics_dict["E"]
    bm, bn = int(entry.generics_dict["BM"]), int(entry.generics_dict["BN"])
    m, n, k = 1000, 520, 200  # row strides 200 and 520 are multiples of 8; edges still ragged
    x, y = _inputs(torch, dtype, (m, k), (k, n))
    z = torch.zeros((m, n), device="cuda", dtype=_dtype(torch, dtype))
    out = DeviceTensor.wrap(z).partition((bm, bn))
    kernel(out, DeviceTensor.wrap(x), DeviceTensor.wrap(y), sync=True)
    _check(entry.function, dtype, f"{m}x{n}x{k}", z, x.float() @ y.float())

    odd_x, odd_y = _inputs(torch, dtype, (m, k + 1), (k + 1, n))  # K = stride(x, 0) = 201
    with pytest.raises(AssumptionError, match=r"dim\(x, 1\) % 8 == 0"):
        kernel(out, DeviceTensor.wrap(odd_x), DeviceTensor.wrap(odd_y), sync=True)
    padded_x = _inputs(torch, dtype, (m, k + 4))[0][:, :k]  # K = 200 but stride(x, 0) = 204
    with pytest.raises(AssumptionError, match=r"stride\(x, 0\) % 8 == 0"):
        kernel(out, DeviceTensor.wrap(padded_x), DeviceTensor.wrap(y), sync=True)
    short_y = _inputs(torch, dtype, (k - 8, n))[0]  # dim(x, 1) != dim(y, 0)
    with pytest.raises(LaunchCheckError, match="precondition"):
        kernel(out, DeviceTensor.wrap(x), DeviceTensor.wrap(short_y), sync=True)


@pytest.mark.parametrize("entry", _entries("gemm_persistent"))
@pytest.mark.parametrize("blocks", [1, 132])
def test_persistent_gemm(entry: BundleEntry, blocks: int, torch) -> None:
    kernel = _kernel(entry)
    dtype = entry.generics_dict["E"]
    bm, bn = int(entry.generics_dict["BM"]), int(entry.generics_dict["BN"])
    group = [int(v) for v in entry.generics_dict["MAP"].strip("[]").split(",")]
    m, n, k = 1100, 700, 256
    blocks = min(blocks, -(-m // bm) * -(-n // bn))  # at most one block per output tile
    x, y = _inputs(torch, dtype, (m, k), (k, n), seed=1)
    z = torch.zeros((m, n), device="cuda", dtype=_dtype(torch, dtype))
    out = DeviceTensor.wrap(z).partition((bm, bn)).map(group, blocks)
    kernel(out, DeviceTensor.wrap(x), DeviceTensor.wrap(y), sync=True)
    _check("gemm_persistent", dtype, f"{m}x{n}x{k}, {blocks} blocks", z, x.float() @ y.float())


def _fp8_view(torch, t, name: str) -> DeviceTensor:
    """A DeviceTensor over a torch float8 tensor's memory (by pointer: no DLPack needed)."""
    return DeviceTensor(t.data_ptr(), tuple(t.shape), t.stride(), name, t.device.index or 0, t)


FP8_TORCH = {"f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2"}


@pytest.mark.parametrize(
    "entry", _entries("gemm_fp8") + _entries("gemm_fp8_aligned") + _entries("gemm_fp8_tuned")
)
def test_gemm_fp8(entry: BundleEntry, torch) -> None:
    """z = (sx * x) @ (sy * y)^T with x [M, K], y [N, K] in fp8, accumulated in f32: compared
    with the f32 product of the same fp8 values (the fp8 rounding is the inputs', not ours)."""
    kernel = _kernel(entry)
    generics = entry.generics_dict
    fp, out_dtype = generics["FP"], generics["E"]
    bm, bn = int(generics["BM"]), int(generics["BN"])
    m, n, k = 1000, 520, 256  # ragged M and N; K a multiple of 16 (the aligned forms' rule)
    generator = torch.Generator(device="cuda").manual_seed(3)
    x32 = torch.randn((m, k), device="cuda", generator=generator)
    y32 = torch.randn((n, k), device="cuda", generator=generator)
    x8, y8 = (t.to(getattr(torch, FP8_TORCH[fp])) for t in (x32, y32))
    sx, sy = 0.5, 0.25
    z = torch.zeros((m, n), device="cuda", dtype=_dtype(torch, out_dtype))
    part = DeviceTensor.wrap(z).partition((bm, bn))
    if "MAP" in generics:
        group = [int(v) for v in generics["MAP"].strip("[]").split(",")]
        part = part.map(group, min(132, -(-m // bm) * -(-n // bn)))
    kernel(part, _fp8_view(torch, x8, fp), _fp8_view(torch, y8, fp), sx, sy, sync=True)
    expected = (x8.float() @ y8.float().T) * (sx * sy)
    _check(entry.function, out_dtype, f"{fp} {m}x{n}x{k}", z, expected)


@pytest.mark.parametrize("entry", _entries("batch_matmul"))
def test_batch_matmul(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    dtype = entry.generics_dict["E"]
    bm, bn = int(entry.generics_dict["BM"]), int(entry.generics_dict["BN"])
    b, m, n, k = 3, 130, 70, 96
    x, y = _inputs(torch, dtype, (b, m, k), (b, k, n), seed=2)
    z = torch.zeros((b, m, n), device="cuda", dtype=_dtype(torch, dtype))
    out = DeviceTensor.wrap(z).partition((1, bm, bn))
    kernel(out, DeviceTensor.wrap(x), DeviceTensor.wrap(y), sync=True)
    _check("batch_matmul", dtype, f"{b}x{m}x{n}x{k}", z, torch.bmm(x.float(), y.float()))


@pytest.mark.parametrize("entry", _entries("mlp"))
def test_mlp(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    dtype = entry.generics_dict["E"]
    bm, bn = int(entry.generics_dict["BM"]), int(entry.generics_dict["BN"])
    m, n, k = 300, 200, 160
    x, w, bias = _inputs(torch, dtype, (m, k), (k, n), (n,), seed=3)
    z = torch.zeros((m, n), device="cuda", dtype=_dtype(torch, dtype))
    out = DeviceTensor.wrap(z).partition((bm, bn))
    kernel(out, DeviceTensor.wrap(x), DeviceTensor.wrap(w), DeviceTensor.wrap(bias), sync=True)
    expected = torch.relu(x.float() @ w.float() + bias.float())
    _check("mlp", dtype, f"{m}x{n}x{k}", z, expected)


@pytest.mark.parametrize(
    "entry", _entries("flash_attention") + _entries("flash_attention_unchecked")
)
@pytest.mark.parametrize("length", [256, 1000])
def test_flash_attention(entry: BundleEntry, length: int, torch) -> None:
    kernel = _kernel(entry)
    dtype = entry.generics_dict["E"]
    bm, d = int(entry.generics_dict["BM"]), int(entry.generics_dict["D"])
    causal = entry.generics_dict["CAUSAL"] == "1"
    heads = 4
    q, k, v = _inputs(torch, dtype, *[(heads, length, d)] * 3, seed=4)
    out = torch.zeros((heads, length, d), device="cuda", dtype=_dtype(torch, dtype))
    scale = 1.0 / math.sqrt(d)
    # the kernel's sequence-major [L, heads, D] views
    views = [DeviceTensor.wrap(t.transpose(0, 1)) for t in (out, q, k, v)]
    if entry.specificity and length % 16:  # a variant specialized for 16-multiples refuses
        with pytest.raises(AssumptionError, match=r"dim\(\w+, 0\) % 16 == 0"):
            kernel.plan(views[0].partition((bm, 1, d)), *views[1:], 1.0)
        return
    kernel(views[0].partition((bm, 1, d)), *views[1:], scale * math.log2(math.e), sync=True)
    expected = torch.nn.functional.scaled_dot_product_attention(
        q.float(), k.float(), v.float(), is_causal=causal, scale=scale
    )
    _check(
        entry.function + (" causal" if causal else ""),
        dtype,
        f"{heads}x{length}x{d}",
        out,
        expected,
    )


def _rows(torch, entry: BundleEntry, m: int, seed: int):
    generics = entry.generics_dict
    dtype = generics.get("E", "f32")
    n = int(generics["N"])
    (x,) = _inputs(torch, dtype, (m, n), seed=seed)
    return dtype, n, x


@pytest.mark.parametrize("entry", _entries("softmax", "softmax_tuned", "softmax_mixed"))
def test_softmax(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    dtype, n, x = _rows(torch, entry, 1001, seed=5)
    y = torch.zeros_like(x)
    kernel(
        DeviceTensor.wrap(y).partition((int(entry.generics_dict["BM"]), n)),
        DeviceTensor.wrap(x),
        sync=True,
    )
    _check(entry.function, dtype, f"1001x{n}", y, torch.softmax(x.float(), dim=1))


@pytest.mark.parametrize("entry", _entries("rms_norm"))
def test_rms_norm(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    dtype, n, x = _rows(torch, entry, 300, seed=6)
    (w,) = _inputs(torch, dtype, (n,), seed=7)
    out = torch.zeros_like(x)
    eps = 1e-6
    kernel(
        DeviceTensor.wrap(x),
        DeviceTensor.wrap(w),
        DeviceTensor.wrap(out).partition((1, n)),
        eps,
        sync=True,
    )
    expected = x.float() * torch.rsqrt((x.float() ** 2).mean(dim=1, keepdim=True) + eps) * w
    _check("rms_norm", dtype, f"300x{n}", out, expected)


@pytest.mark.parametrize("entry", _entries("layer_norm"))
def test_layer_norm(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    dtype, n, x = _rows(torch, entry, 257, seed=8)
    out = torch.zeros_like(x)
    eps = 1e-5
    kernel(
        DeviceTensor.wrap(out).partition((int(entry.generics_dict["BM"]), n)),
        DeviceTensor.wrap(x),
        eps,
        sync=True,
    )
    expected = torch.nn.functional.layer_norm(x.float(), (n,), eps=eps)
    _check("layer_norm", dtype, f"257x{n}", out, expected)


@pytest.mark.parametrize("entry", _entries("argmax_rows"))
def test_argmax(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    dtype, n, x = _rows(torch, entry, 123, seed=9)
    out = torch.full((123,), -1, device="cuda", dtype=torch.int32)
    kernel(
        DeviceTensor.wrap(out).partition((int(entry.generics_dict["BM"]),)),
        DeviceTensor.wrap(x),
        sync=True,
    )
    expected = torch.argmax(x.float(), dim=1).to(torch.int32)  # first maximum, as the kernel
    mismatches = int((out != expected).sum().item())
    report = os.environ.get("CUTILE_GPU_REPORT")
    if report:
        with open(report, "a") as file:
            file.write(
                json.dumps(
                    {
                        "kernel": "argmax_rows",
                        "dtype": dtype,
                        "size": f"123x{n}",
                        "max_abs_error": mismatches,
                        "tolerance": 0,
                    }
                )
                + "\n"
            )
    assert mismatches == 0


@pytest.mark.parametrize("entry", _entries("rope"))
def test_rope(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    generics = entry.generics_dict
    dtype, bt, d = generics["E"], int(generics["BT"]), int(generics["D"])
    rows = 333
    x, angles = _inputs(torch, dtype, (rows, d), (rows, d // 2), seed=10)
    cos, sin = torch.cos(angles.float()).to(x.dtype), torch.sin(angles.float()).to(x.dtype)
    out = torch.zeros_like(x)
    kernel(
        DeviceTensor.wrap(out).partition((bt, d)),
        DeviceTensor.wrap(x),
        DeviceTensor.wrap(cos),
        DeviceTensor.wrap(sin),
        sync=True,
    )
    x1, x2 = x.float()[:, : d // 2], x.float()[:, d // 2 :]
    c, s = cos.float(), sin.float()
    expected = torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=1)
    _check("rope", dtype, f"{rows}x{d}", out, expected)


@pytest.mark.parametrize("entry", _entries("control_flow"))
def test_control_flow(entry: BundleEntry, torch) -> None:
    kernel = _kernel(entry)
    b = int(entry.generics_dict["B"])
    size, n, limit = 10 * b + 17, 7, 6  # 11 blocks; blocks 6.. return early
    (x,) = _inputs(torch, "f32", (size,), seed=11)
    z = torch.full((size,), -7.0, device="cuda")
    kernel(DeviceTensor.wrap(z).partition((b,)), DeviceTensor.wrap(x), n, limit, sync=True)
    factor = 1 + (n + 1) // 2 - 3
    scale = torch.tensor([2.0 if (i // b) % 2 == 0 else 0.5 for i in range(size)], device="cuda")
    expected = torch.where(
        torch.arange(size, device="cuda") // b < limit, x * factor * scale, torch.full_like(x, -7.0)
    )
    _check("control_flow", "f32", f"{size} (guard at block {limit})", z, expected)
