"""Two GPUs in one process: kernels on each device's legacy stream and on streams of each,
launched eagerly, started, awaited and replayed from graphs, are tracked apart
(`client_stubs.pending.stream_key`, an event pool per device) and compute the right sums.

Needs two CUDA devices, torch and `CUTILE_GPU_ARTIFACTS` holding `add` on f32 (built by
`python -m tests.gpu.build_artifacts`); skipped otherwise.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from client_stubs import (
    BundleEntry,
    DeviceMismatchError,
    DeviceTensor,
    Graph,
    PendingWorkError,
    driver,
    synchronize,
)
from client_stubs.pending import RETIRE_EVERY
from tests.gpu.support import entries as _entries
from tests.gpu.support import load

pytestmark = pytest.mark.gpu

N = 1 << 20
SLEEP_CYCLES = 500_000_000  # about 0.25 s of one device's legacy stream held back


@pytest.fixture(scope="module")
def two(torch) -> Any:
    if torch.cuda.device_count() < 2:
        pytest.skip("needs two CUDA devices")
    return torch


def _f32_add(entry: BundleEntry) -> bool:
    return entry.generics_dict.get("E", "f32") == "f32"


@pytest.fixture(params=_entries("add", where=_f32_add))
def add(request, two) -> Any:  # type: ignore[no-untyped-def]
    entry = request.param
    return load(entry, 0), int(entry.generics_dict["B"])


def _inputs(torch, device: int) -> tuple[Any, Any, Any]:  # type: ignore[no-untyped-def]
    generator = torch.Generator(device=f"cuda:{device}").manual_seed(device)
    x, y = (torch.randn(N, device=f"cuda:{device}", generator=generator) for _ in range(2))
    return torch.zeros(N, device=f"cuda:{device}"), x, y


def test_eager_launches_on_both_legacy_streams_are_right(two, add) -> None:
    kernel, block = add
    tensors = {d: _inputs(two, d) for d in (0, 1)}
    for _ in range(3 * RETIRE_EVERY):  # past the retire batching, events recorded on both
        for d in (0, 1):
            z, x, y = tensors[d]
            kernel(
                DeviceTensor.wrap(z).partition((block,)), DeviceTensor.wrap(x), DeviceTensor.wrap(y)
            )
    for d in (0, 1):
        z, x, y = tensors[d]
        (part, _, _) = kernel.op(
            DeviceTensor.wrap(z).partition((block,)), DeviceTensor.wrap(x), DeviceTensor.wrap(y)
        ).sync()
        part.unpartition()
        assert two.equal(z, x + y)


def test_one_devices_finished_work_does_not_release_anothers(two, add) -> None:
    """Device 0's legacy stream is held back; device 1's launch finishes and is waited for:
    device 0's output stays refused on the host until its own stream is done."""
    kernel, block = add
    z0, x0, y0 = _inputs(two, 0)
    z1, x1, y1 = _inputs(two, 1)
    with two.cuda.device(0):
        two.cuda._sleep(SLEEP_CYCLES)  # on device 0's legacy stream, torch's default
    part0, _, _ = kernel(
        DeviceTensor.wrap(z0).partition((block,)), DeviceTensor.wrap(x0), DeviceTensor.wrap(y0)
    )
    (part1, _, _) = kernel.op(
        DeviceTensor.wrap(z1).partition((block,)), DeviceTensor.wrap(x1), DeviceTensor.wrap(y1)
    ).sync()
    part1.unpartition()
    assert two.equal(z1, x1 + y1)
    with pytest.raises(PendingWorkError):
        part0.unpartition()
    driver.ensure_context(0)
    synchronize()  # device 0's legacy stream
    part0.unpartition()
    assert two.equal(z0, x0 + y0)


def test_starts_on_streams_of_both_devices_use_their_own_events(two, add) -> None:
    kernel, block = add
    streams = {d: two.cuda.Stream(device=d) for d in (0, 1)}
    tensors = {d: _inputs(two, d) for d in (0, 1)}
    for _ in range(4):
        pendings = []
        for d in (0, 1):
            z, x, y = tensors[d]
            op = kernel.op(
                DeviceTensor.wrap(z).partition((block,)), DeviceTensor.wrap(x), DeviceTensor.wrap(y)
            )
            pendings.append(op.start(streams[d]))
        for pending in pendings:
            (part, _, _) = pending.sync()
            part.unpartition()
    for d in (0, 1):
        z, x, y = tensors[d]
        assert two.equal(z, x + y)


def test_awaits_and_graphs_on_the_second_device(two, add) -> None:
    kernel, block = add
    driver.ensure_context(0)
    z, x, y = _inputs(two, 1)

    def op():  # type: ignore[no-untyped-def]
        return kernel.op(
            DeviceTensor.wrap(z).partition((block,)), DeviceTensor.wrap(x), DeviceTensor.wrap(y)
        )

    (part, _, _) = asyncio.run(op())  # a pooled stream of device 1
    part.unpartition()
    assert two.equal(z, x + y)
    z.zero_()
    two.cuda.synchronize(1)
    with Graph.capture(op(), device=1) as graph:
        driver.ensure_context(0)
        graph.replay(sync=True)  # on device 1's legacy stream, made current for it
        assert two.equal(z, x + y)


def test_an_op_over_both_devices_is_refused(two, add) -> None:
    kernel, block = add
    z0, x0, y0 = _inputs(two, 0)
    z1, x1, y1 = _inputs(two, 1)
    first = kernel.op(
        DeviceTensor.wrap(z0).partition((block,)), DeviceTensor.wrap(x0), DeviceTensor.wrap(y0)
    )
    second = kernel.op(
        DeviceTensor.wrap(z1).partition((block,)), DeviceTensor.wrap(x1), DeviceTensor.wrap(y1)
    )
    with pytest.raises(DeviceMismatchError, match="an op runs on one device"):
        first.then(second).sync()
    driver.ensure_context(0)
    synchronize()
    assert two.equal(z0, x0 + y0)
    assert not z1.any()
