"""Compiled helpers of the launch hot path, each optional: without a C compiler at install
time the client makes the same calls through `cuda.bindings` (a little slower per launch).

`_launch` (launch.c) calls `cuLaunchKernel`, `cuCtxGetCurrent`, `cuStreamSynchronize`,
`cuLaunchKernelEx` (an early launch: programmatic stream serialization), the completion
queries `cuStreamQuery` and `cuEventQuery` and `cuEventRecord` through function pointers
bound once to the bindings' own driver. `bind_driver` binds it and returns its calls, or
None where it is not built, is switched off (CUTILE_NATIVE_LAUNCH=0) or the driver has no
address for one of the first three (without cuLaunchKernelEx, early launches take the
bindings' path; without a query or cuEventRecord, that call does).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

try:
    from client_stubs.native import _launch
except ImportError:  # not built (no compiler at install time): the bindings' path serves
    _launch = None  # type: ignore[assignment]


@dataclass(frozen=True)
class NativeDriver:
    """The compiled calls, bound: `launch(function, grid, block, shared_mem_bytes, stream,
    kernel_params)`, `launch_early` (the same arguments), `current_context()` (an int, 0:
    none), `synchronize(stream)`, the queries `stream_done(stream)` and `event_done(event)`
    (True: completed, False: not yet) and `event_record(event, stream)`; a failing call raises
    through `on_error`."""

    launch: Callable[..., None]
    launch_early: Callable[..., None] | None  # None: the driver has no cuLaunchKernelEx
    current_context: Callable[[], int]
    synchronize: Callable[[int], None]
    stream_done: Callable[[Any], bool] | None = None  # None: the driver has no cuStreamQuery
    event_done: Callable[[Any], bool] | None = None  # None: the driver has no cuEventQuery
    event_record: Callable[[Any, int], None] | None = None  # None: no cuEventRecord


DRIVER_CALLS = (
    "cuLaunchKernel",
    "cuCtxGetCurrent",
    "cuStreamSynchronize",
    "cuLaunchKernelEx",
    "cuStreamQuery",
    "cuEventQuery",
    "cuEventRecord",
)


def available() -> bool:
    """Whether the compiled launcher is built and not switched off."""
    return _launch is not None and os.environ.get("CUTILE_NATIVE_LAUNCH", "1") != "0"


def bind_driver(
    address_of: Callable[[str], int | None], on_error: Callable[[int, str], Any]
) -> NativeDriver | None:
    """Bind the compiled calls to the driver functions `address_of(name)` finds (an address,
    or None where it has none); `on_error(CUresult, call)` raises for a failing call."""
    if not available():
        return None
    addresses = [address_of(name) for name in DRIVER_CALLS]
    if not all(addresses[:3]):
        return None
    _launch.bind(*(address or 0 for address in addresses), on_error)
    early, stream_done, event_done, event_record = (
        call if address else None
        for call, address in zip(
            (_launch.launch_early, _launch.stream_done, _launch.event_done, _launch.event_record),
            addresses[3:],
            strict=True,
        )
    )
    return NativeDriver(
        _launch.launch,
        early,
        _launch.current_context,
        _launch.synchronize,
        stream_done,
        event_done,
        event_record,
    )
