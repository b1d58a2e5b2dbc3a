"""Early launches on the GPU: kernels compiled with `--early-launch` wait for prior grids
before touching memory, and the client launches them with programmatic stream
serialization, so each may start while the kernel before it drains. A chain in which every
launch reads what the one before it wrote must still see every write: eagerly, in a captured
graph, and after work that is not ours (torch's).

    python -m tests.gpu.build_artifacts OUT      # writes OUT/early too
    PYTHONPATH=. CUTILE_GPU_ARTIFACTS=OUT python3 -m pytest tests/gpu/test_early_launch_gpu.py
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from client_stubs import Bundle, BundleError, DeviceTensor, Graph, Kernel, driver, launcher

pytestmark = pytest.mark.gpu

ENV = "CUTILE_GPU_ARTIFACTS"
N = 1 << 24  # 64 MiB a tensor: each add runs long enough for a missed dependency to show
LINKS = 64


@pytest.fixture(scope="module")
def add() -> Kernel:
    root = os.environ.get(ENV)
    if not root:
        pytest.skip(f"{ENV} is not set")
    if driver.device_count() == 0:
        pytest.skip("no CUDA device")
    try:
        kernel = Bundle.open(Path(root) / "early").kernel("add", {"B": "1024"})
    except BundleError as exc:
        pytest.skip(str(exc))
    driver.ensure_context(0)
    return kernel


def chain(add: Kernel, a: DeviceTensor, b: DeviceTensor, y: DeviceTensor, links: int):
    """`links` adds, each reading the other buffer's last write: a <- b + y <- a + y ..."""
    op = None
    for i in range(links):
        src, dst = (a, b) if i % 2 == 0 else (b, a)
        step = add.op(dst.partition((1024,)), src, y)
        op = step if op is None else op.then(step)
    return op


def test_the_kernels_wait_and_are_launched_early(add: Kernel) -> None:
    kernels = getattr(add, "variants", (add,))
    assert all(k.spec.waits_for_prior_grids for k in kernels)
    assert launcher.EARLY_LAUNCH  # CUTILE_EARLY_LAUNCH is not 0 here


def test_an_eager_chain_sees_every_write(add: Kernel) -> None:
    a = DeviceTensor.from_numpy(np.zeros(N, np.float32))
    b = DeviceTensor.zeros(N)
    y = DeviceTensor.from_numpy(np.ones(N, np.float32))
    for i in range(LINKS):
        src, dst = (a, b) if i % 2 == 0 else (b, a)
        add(dst.partition((1024,)), src, y)
    driver.synchronize()
    result = a.to_numpy()  # LINKS is even: the last add wrote a
    assert np.array_equal(result, np.full(N, LINKS, np.float32)), np.unique(result)[:8]


def test_a_captured_chain_sees_every_write(add: Kernel) -> None:
    a = DeviceTensor.from_numpy(np.zeros(N, np.float32))
    b = DeviceTensor.zeros(N)
    y = DeviceTensor.from_numpy(np.ones(N, np.float32))
    graph = Graph.capture(chain(add, a, b, y, LINKS))
    try:
        for _ in range(3):
            graph.replay(sync=True)
    finally:
        graph.close()
    result = a.to_numpy()
    assert np.array_equal(result, np.full(N, 3 * LINKS, np.float32)), np.unique(result)[:8]


def test_an_early_kernel_after_torch_work_reads_its_result(add: Kernel) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    x = torch.zeros(N, device="cuda")
    y = torch.ones(N, device="cuda")
    z = torch.empty(N, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    for value in range(1, 9):
        x.fill_(float(value))  # torch's kernel, then ours on the same stream
        add(
            DeviceTensor.wrap(z).partition((1024,)),
            DeviceTensor.wrap(x),
            DeviceTensor.wrap(y),
            stream=stream,
        )
        torch.cuda.synchronize()
        assert bool((z == value + 1).all())
