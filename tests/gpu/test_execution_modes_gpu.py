"""Execution modes on a real GPU: `.sync()` chains, `await` (event-driven, several streams),
CUDA graph capture and replay, and pending-work protection, with the bundle's `add<B=1024>`.

    PYTHONPATH=. CUTILE_GPU_ARTIFACTS=gpu_artifacts/bundle python3 -m pytest tests/gpu -v
"""

from __future__ import annotations

import asyncio
import gc
import os
import time

import numpy as np
import pytest

from client_stubs import (
    Bundle,
    BundleError,
    DeviceTensor,
    Graph,
    GraphCapturedError,
    Kernel,
    PendingWorkError,
    driver,
    synchronize,
)

pytestmark = pytest.mark.gpu

ENV = "CUTILE_GPU_ARTIFACTS"
N = 1 << 20
TILE = [1024]


@pytest.fixture(scope="module")
def add() -> Kernel:
    if driver.device_count() == 0:
        pytest.skip("no CUDA device")
    root = os.environ.get(ENV)
    if not root:
        pytest.skip(f"{ENV} is not set")
    driver.ensure_context(0)
    try:
        return Bundle.open(root).kernel("add", {"B": "1024"})
    except BundleError as exc:
        pytest.skip(str(exc))


def upload(values: np.ndarray) -> DeviceTensor:
    return DeviceTensor.from_numpy(values.astype(np.float32))


def values(seed: int, n: int = N) -> np.ndarray:
    return np.random.default_rng(seed).integers(-50, 50, n).astype(np.float32)


def test_a_chain_passes_outputs_along_and_syncs(add: Kernel) -> None:
    x, y = values(1), values(2)
    dx, dy = upload(x), upload(y)
    z, w = DeviceTensor.zeros(N), DeviceTensor.zeros(N)
    z_in = DeviceTensor(z.ptr, N, owner=z.owner)
    part_z, part_w = z.partition(TILE), w.partition(TILE)
    op = add.op(part_z, dx, dy).then(lambda r: add.op(part_w, z_in, r[2]))
    results = op.sync()
    assert results[0] is part_w and results[2] is dy
    np.testing.assert_array_equal(part_z.to_numpy(), x + y)
    np.testing.assert_array_equal(part_w.unpartition().to_numpy(), x + 2 * y)


def test_await_on_pooled_streams_gives_every_result(add: Kernel) -> None:
    x, y = values(3), values(4)
    dx, dy = upload(x), upload(y)
    outputs = [DeviceTensor.zeros(N).partition(TILE) for _ in range(8)]

    async def main() -> list[tuple[object, ...]]:
        return await asyncio.gather(*(add.op(out, dx, dy) for out in outputs))

    results = asyncio.run(main())
    assert [r[0] for r in results] == outputs
    for out in outputs:
        np.testing.assert_array_equal(out.to_numpy(), x + y)


def test_await_does_not_burn_the_cpu(add: Kernel) -> None:
    n = 1 << 26
    dx, dy = DeviceTensor.zeros(n), DeviceTensor.zeros(n)
    part = DeviceTensor.zeros(n).partition(TILE)
    op = add.op(part, dx, dy)
    for _ in range(199):
        op = op.then(add.op(part, dx, dy))
    op.sync()  # warm-up

    # the awaiting thread's own CPU time (process time would also count the driver's
    # threads, whose waiting policy is the driver's), with the garbage collector held off:
    # after the whole GPU suite a full collection of its heap takes ~30 ms by itself
    async def main() -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.thread_time()
        await op
        return time.perf_counter() - wall, time.thread_time() - cpu

    gc.collect()
    gc.disable()
    try:
        wall, cpu = asyncio.run(main())
    finally:
        gc.enable()
    print(f"await of 200 launches: wall {wall * 1e3:.1f} ms, cpu {cpu * 1e3:.1f} ms")
    assert wall > 0.02 and cpu < 0.5 * wall


def test_reading_while_a_kernel_writes_raises(add: Kernel) -> None:
    n = 1 << 26
    dx, dy = DeviceTensor.zeros(n), upload(np.ones(n, np.float32))
    part = DeviceTensor.zeros(n).partition(TILE)
    op = add.op(part, dx, dy)
    for _ in range(99):
        op = op.then(add.op(part, dx, dy))
    pending = op.start()
    with pytest.raises(PendingWorkError, match="kernel `add` writes it"):
        part.to_numpy()
    with pytest.raises(PendingWorkError):
        dy.free()
    pending.sync()
    assert float(part.to_numpy()[-1]) == 1.0


def test_graph_replay_reuses_buffers_and_pins_them(add: Kernel) -> None:
    x, y = values(5), values(6)
    dx, dy = upload(x), upload(y)
    z, w = DeviceTensor.zeros(N), DeviceTensor.zeros(N)
    z_in = DeviceTensor(z.ptr, N, owner=z.owner)
    part_z, part_w = z.partition(TILE), w.partition(TILE)
    with Graph.capture(add.op(part_z, dx, dy).then(add.op(part_w, z_in, dy))) as graph:
        graph.replay(sync=True)
        np.testing.assert_array_equal(part_w.to_numpy(), x + 2 * y)
        dx.copy_from_numpy(2 * x)
        pending = graph.replay()
        assert pending.sync()[0] is part_w
        np.testing.assert_array_equal(part_w.to_numpy(), 2 * x + 2 * y)
        with pytest.raises(GraphCapturedError):
            part_z.unpartition()
    part_z.unpartition()
    synchronize()
