"""How blocks cut their output, on a GPU (rust_examples/row_copies.rs): sub-tiles that
overhang a row, a slab whose rows the host's partition chooses, and a persistent map that
hands out whole rows (an OWNED axis). Each output sits in a buffer whose tail holds a
sentinel, so a write past the end is seen.

Needs a CUDA device and `CUTILE_GPU_ARTIFACTS` = a bundle built by
`python -m tests.gpu.build_artifacts`; skipped otherwise.
"""

from __future__ import annotations

import numpy as np
import pytest

from client_stubs import BundleEntry, DeviceTensor, LaunchCheckError, NumTileBlocksError
from tests.gpu.support import entries as _entries
from tests.gpu.support import load

pytestmark = pytest.mark.gpu

GUARD = 4096
SENTINEL = -7.0


def _rows(rows: int, cols: int) -> tuple[np.ndarray, DeviceTensor]:
    values = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    return values, DeviceTensor.from_numpy(values)


def _guarded(rows: int, cols: int) -> tuple[DeviceTensor, DeviceTensor]:
    full = DeviceTensor.from_numpy(np.full(rows * cols + GUARD, SENTINEL, np.float32))
    return full, full.narrow(0, 0, rows * cols).reshape((rows, cols))


def _written(full: DeviceTensor, rows: int, cols: int) -> np.ndarray:
    host = full.to_numpy()
    assert np.all(host[rows * cols :] == SENTINEL), "the kernel wrote past the end of its output"
    return host[: rows * cols].reshape(rows, cols)


@pytest.mark.parametrize("entry", _entries("copy_rows_overhang"))
def test_sub_tiles_may_overhang_the_row(entry: BundleEntry, device: int) -> None:
    """[1, 100] rows cut into [1, 32] sub-tiles: the fourth covers columns 96..127, of which
    only 96..99 exist; one block per row, as the contract's launch check demands."""
    kernel = load(entry, device)
    n = int(entry.generics_dict["N"])
    expected, x = _rows(37, n)
    full, out = _guarded(37, n)
    kernel(out.partition((1, n)), x, sync=True)
    np.testing.assert_array_equal(_written(full, 37, n), expected)
    _, two_blocks = _guarded(37, 2 * n)  # two [1, 100] blocks per row: they would overlap
    with pytest.raises(LaunchCheckError, match="grid axis 1"):
        kernel(two_blocks.partition((1, n)), x)


@pytest.mark.parametrize("entry", _entries("copy_rows_dynamic"))
@pytest.mark.parametrize("rows_per_block", [1, 4, 5])
def test_the_host_partition_chooses_each_blocks_rows(
    entry: BundleEntry, rows_per_block: int, device: int
) -> None:
    kernel = load(entry, device)
    b = int(entry.generics_dict["B"])
    rows = 20  # a multiple of every slab height tried: each block's rows all exist in x
    expected, x = _rows(rows, b)
    full, out = _guarded(rows, b)
    kernel(out.partition((rows_per_block, b)), x, sync=True)
    np.testing.assert_array_equal(_written(full, rows, b), expected)


@pytest.mark.parametrize("entry", _entries("scale_rows_owned"))
@pytest.mark.parametrize("blocks", [1, 3, 16])
def test_an_owned_axis_is_written_whole_by_one_work_item(
    entry: BundleEntry, blocks: int, device: int
) -> None:
    kernel = load(entry, device)
    bs = int(entry.generics_dict["BS"])
    rows, cols = 16, 3 * bs + 5  # four tiles per row, the last partial
    values, x = _rows(rows, cols)
    full, out = _guarded(rows, cols)
    kernel(out.partition((1, bs)).map((1, 0), blocks), x, sync=True)
    np.testing.assert_array_equal(_written(full, rows, cols), 2 * values)
    _, again = _guarded(rows, cols)
    with pytest.raises(NumTileBlocksError, match="work items"):  # more blocks than rows
        kernel(again.partition((1, bs)).map((1, 0), rows + 1), x)
