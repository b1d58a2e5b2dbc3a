"""Launch a persistent kernel (a `MappedPartitionMut` output) on a GPU: `copy_persistent` from
a cutile-compile bundle, on a host-chosen grid of (num_tile_blocks, 1, 1).

Needs a CUDA device and `CUTILE_GPU_ARTIFACTS` = a bundle folder holding `copy_persistent`
(rust_examples/persistent_gemm.rs; `python -m tests.gpu.build_artifacts` builds one);
skipped otherwise.

    copy_persistent<E, const BM: i32, const BN: i32, const MAP: [i32; 2]>(
        mut z: MappedPartitionMut<E, { [BM, BN] }, MAP>, x: &Tensor<E, { [-1, -1] }>)
"""

from __future__ import annotations

import numpy as np
import pytest

from client_stubs import BundleEntry, DeviceTensor, Kernel, NumTileBlocksError
from client_stubs.contract import TENSOR_IN, TENSOR_OUT_MAPPED, ParamSpec
from tests.gpu.support import entries as _entries
from tests.gpu.support import load
from tests.gpu.test_launch_gpu import as_float, upload

pytestmark = pytest.mark.gpu

M, N = 1000, 300  # not multiples of the 64 x 64 tiles: the edge tiles are partial
GUARD = 4096
SENTINEL = -7.0


def roles(kernel: Kernel) -> tuple[ParamSpec, ParamSpec]:
    (out,) = [p for p in kernel.spec.params if p.kind == TENSOR_OUT_MAPPED]
    (inp,) = [p for p in kernel.spec.params if p.kind == TENSOR_IN]
    return out, inp


def source_values(dtype: str) -> np.ndarray:
    """M x N distinct values, exact in `dtype` (float64 on the host)."""
    values = np.arange(M * N, dtype=np.float64).reshape(M, N)
    if dtype in ("f16", "bf16"):
        values = values % 256 - 128  # small integers are exact in every float width
    return values


def tiles(out: ParamSpec) -> int:
    bm, bn = out.tile_shape
    return -(-M // bm) * -(-N // bn)


def launch(kernel: Kernel, z: DeviceTensor, x: DeviceTensor, blocks: int) -> None:
    out, inp = roles(kernel)
    mapped = z.partition(out.tile_shape).map(out.map_shape, blocks)
    args: list[object] = [None] * len(kernel.spec.params)
    args[out.index], args[inp.index] = mapped, x
    result = kernel(*args, sync=True)
    assert result[out.index] is mapped
    assert kernel.plan(*args).grid == (blocks, 1, 1)
    assert mapped.unpartition() is z


@pytest.mark.parametrize("entry", _entries("copy_persistent"))
@pytest.mark.parametrize("blocks", [1, 7, 132])
def test_copy_persistent(entry: BundleEntry, blocks: int, device: int) -> None:
    kernel = load(entry, device)
    assert kernel.persistent
    out, _ = roles(kernel)
    dtype = out.dtype
    expected = source_values(dtype)
    x = upload(expected.reshape(-1), dtype).reshape((M, N))
    full = upload(np.full(M * N + GUARD, SENTINEL), dtype)
    z = full.narrow(0, 0, M * N).reshape((M, N))
    total = tiles(out)
    if blocks > total:  # more blocks than tiles is refused before anything is launched
        mapped = z.partition(out.tile_shape).map(out.map_shape, blocks)
        with pytest.raises(NumTileBlocksError):
            kernel(*_ordered(kernel, mapped, x))
        mapped.unpartition()
        blocks = total  # one tile per block
    launch(kernel, z, x, blocks)
    host = as_float(full.to_numpy(), dtype)
    got = host[: M * N].reshape(M, N)
    mismatched = np.argwhere(got != expected)
    assert mismatched.size == 0, (
        f"{len(mismatched)} elements differ with {blocks} blocks, first at {mismatched[0]}: "
        f"got {got[tuple(mismatched[0])]}, expected {expected[tuple(mismatched[0])]}"
    )
    assert np.all(host[M * N :] == SENTINEL), "the kernel wrote past the end of its output"


@pytest.mark.parametrize("entry", _entries("copy_persistent"))
def test_copy_persistent_into_a_pitched_view(entry: BundleEntry, device: int) -> None:
    """An output whose rows are padded (row stride > N): the padding must stay untouched."""
    kernel = load(entry, device)
    out, _ = roles(kernel)
    dtype = out.dtype
    pitch = N + 20
    expected = source_values(dtype)
    x = upload(expected.reshape(-1), dtype).reshape((M, N))
    wide = upload(np.full(M * pitch, SENTINEL), dtype).reshape((M, pitch))
    z = wide.narrow(1, 0, N)
    assert z.strides == (pitch, 1)
    launch(kernel, z, x, 13)
    host = as_float(wide.to_numpy(), dtype)
    np.testing.assert_array_equal(host[:, :N], expected)
    assert np.all(host[:, N:] == SENTINEL), "the kernel wrote into the row padding"


@pytest.mark.parametrize("entry", _entries("copy_persistent"))
def test_repeated_launches_with_different_grids(entry: BundleEntry, device: int) -> None:
    kernel = load(entry, device)
    out, _ = roles(kernel)
    dtype = out.dtype
    expected = source_values(dtype)
    x = upload(expected.reshape(-1), dtype).reshape((M, N))
    z = upload(np.full(M * N, SENTINEL), dtype).reshape((M, N))
    for blocks in (3, 3, tiles(out), 2):
        launch(kernel, z, x, blocks)
    np.testing.assert_array_equal(as_float(z.to_numpy(), dtype), expected)


def _ordered(kernel: Kernel, mapped: object, x: DeviceTensor) -> list[object]:
    out, inp = roles(kernel)
    args: list[object] = [None] * len(kernel.spec.params)
    args[out.index], args[inp.index] = mapped, x
    return args
