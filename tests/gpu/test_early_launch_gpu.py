"""Early launches on the GPU: kernels compiled by default wait for prior grids before
touching memory, and the client launches them with programmatic stream
serialization, so each may start while the kernel before it drains. A chain in which every
launch reads what the one before it wrote must still see every write: eagerly, in a captured
graph, and after work that is not ours (torch's). Buffers are torch tensors wrapped anew for
each launch (as the decoder does): one launch writes a buffer the next one reads.

    python -m tests.gpu.build_artifacts OUT      # writes OUT/default too
    PYTHONPATH=. CUTILE_GPU_ARTIFACTS=OUT python3 -m pytest tests/gpu/test_early_launch_gpu.py
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest

from client_stubs import (
    Bundle,
    BundleError,
    DeviceOp,
    DeviceTensor,
    Graph,
    Kernel,
    driver,
    launcher,
)

pytestmark = pytest.mark.gpu

ENV = "CUTILE_GPU_ARTIFACTS"
N = 1 << 24  # 64 MiB a tensor: each add runs long enough for a missed dependency to show
LINKS = 64


@pytest.fixture(scope="module")
def add(torch: Any) -> Kernel:
    root = os.environ.get(ENV)
    if not root:
        pytest.skip(f"{ENV} is not set")
    try:
        return Bundle.open(Path(root) / "default").kernel("add", {"B": "1024"})
    except BundleError as exc:
        pytest.skip(str(exc))


def link(add: Kernel, dst: Any, src: Any, y: Any) -> DeviceOp:
    """dst <- src + y, on fresh handles of the three tensors."""
    wrap = DeviceTensor.wrap
    return add.op(wrap(dst).partition((1024,)), wrap(src), wrap(y))


def chain(add: Kernel, a: Any, b: Any, y: Any) -> DeviceOp:
    """LINKS adds, each reading what the one before it wrote: b <- a + y, a <- b + y, ..."""
    op = link(add, b, a, y)
    for i in range(1, LINKS):
        dst, src = (b, a) if i % 2 == 0 else (a, b)
        op = op.then(link(add, dst, src, y))
    return op


def test_the_kernels_wait_and_are_launched_early(add: Kernel) -> None:
    kernels = getattr(add, "variants", (add,))
    assert all(k.spec.waits_for_prior_grids for k in kernels)
    assert launcher.EARLY_LAUNCH  # CUTILE_EARLY_LAUNCH is not 0 here


def test_an_eager_chain_sees_every_write(add: Kernel, torch: Any) -> None:
    # each launch writes a fresh buffer and reads the one before it: the host refuses to
    # partition (move) a buffer that unfinished work still reads, so nothing is reused
    buffers = [torch.zeros(N, device="cuda") for _ in range(LINKS + 1)]
    y = torch.ones(N, device="cuda")
    for src, dst in itertools.pairwise(buffers):
        add(DeviceTensor.wrap(dst).partition((1024,)), DeviceTensor.wrap(src), DeviceTensor.wrap(y))
    driver.synchronize()
    assert bool((buffers[-1] == LINKS).all()), buffers[-1].unique()[:8]


def test_a_captured_chain_sees_every_write(add: Kernel, torch: Any) -> None:
    a, b = torch.zeros(N, device="cuda"), torch.zeros(N, device="cuda")
    y = torch.ones(N, device="cuda")
    graph = Graph.capture(chain(add, a, b, y))
    try:
        for _ in range(3):
            graph.replay(sync=True)
    finally:
        graph.close()
    assert bool((a == 3 * LINKS).all()), a.unique()[:8]


def test_an_early_kernel_after_torch_work_reads_its_result(add: Kernel, torch: Any) -> None:
    x, y = torch.zeros(N, device="cuda"), torch.ones(N, device="cuda")
    z = torch.empty(N, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    for value in range(1, 9):
        x.fill_(float(value))  # torch's kernel, then ours on the same stream
        wrap = DeviceTensor.wrap
        add(wrap(z).partition((1024,)), wrap(x), wrap(y), stream=stream)
        torch.cuda.synchronize()
        assert bool((z == value + 1).all())
