"""client_stubs.native: the compiled launcher calls the bound driver functions with exactly
the arguments it was given, hands failures to `on_error`, refuses bad input with Python
errors, and `client_stubs.driver` routes its hot path through it once cuInit succeeded.

The "driver" here is seven C-callable Python functions (ctypes callbacks) that record what
they receive: no GPU and no libcuda needed."""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from client_stubs import driver, native
from client_stubs.errors import CudaError

_launch = pytest.importorskip("client_stubs.native._launch", reason="the C launcher is not built")

LAUNCH = ctypes.CFUNCTYPE(
    ctypes.c_int, *([ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3)
)
CTX_GET_CURRENT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p))
STREAM_SYNCHRONIZE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
LAUNCH_EX = ctypes.CFUNCTYPE(ctypes.c_int, *([ctypes.c_void_p] * 4))
QUERY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
EVENT_RECORD = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
NOT_READY = 600


class LaunchAttribute(ctypes.Structure):
    """CUlaunchAttribute: an id, padding, a 64-byte value union (here its first int)."""

    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", ctypes.c_int * 16)]


class LaunchConfig(ctypes.Structure):
    """CUlaunchConfig, as cuda.h lays it out."""

    _fields_ = [
        *((name, ctypes.c_uint) for name in ("gx", "gy", "gz", "bx", "by", "bz", "smem")),
        ("stream", ctypes.c_void_p),
        ("attrs", ctypes.POINTER(LaunchAttribute)),
        ("num_attrs", ctypes.c_uint),
    ]


class FakeDriver:
    """Seven driver functions as C callbacks; `result` is what each returns."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.result = 0
        self.context = 0xC0FFEE
        self.launch = LAUNCH(self._launch)
        self.ctx_get_current = CTX_GET_CURRENT(self._ctx_get_current)
        self.stream_synchronize = STREAM_SYNCHRONIZE(self._synchronize)
        self.launch_ex = LAUNCH_EX(self._launch_ex)
        self.stream_query = QUERY(self._stream_query)
        self.event_query = QUERY(self._event_query)
        self.event_record = EVENT_RECORD(self._event_record)

    def _launch(self, *args: Any) -> int:
        self.calls.append(("launch", args))
        return self.result

    def _launch_ex(self, config: int, function: int, params: int, extra: int | None) -> int:
        """Record the config as cuLaunchKernelEx would read it (copied: it lives on the C
        stack only for the call)."""
        c = LaunchConfig.from_address(config)
        attrs = [(c.attrs[i].id, c.attrs[i].value[0]) for i in range(c.num_attrs)]
        grid, block = (c.gx, c.gy, c.gz), (c.bx, c.by, c.bz)
        self.calls.append(("launch_ex", (function, grid, block, c.smem, c.stream, params, extra)))
        self.calls.append(("attrs", tuple(attrs)))
        return self.result

    def _ctx_get_current(self, out: Any) -> int:
        self.calls.append(("ctx", ()))
        out[0] = self.context
        return self.result

    def _synchronize(self, stream: Any) -> int:
        self.calls.append(("sync", (stream,)))
        return self.result

    def _stream_query(self, stream: Any) -> int:
        self.calls.append(("stream_query", (stream,)))
        return self.result

    def _event_query(self, event: Any) -> int:
        self.calls.append(("event_query", (event,)))
        return self.result

    def _event_record(self, event: Any, stream: Any) -> int:
        self.calls.append(("event_record", (event, stream)))
        return self.result

    def address(self, name: str) -> int | None:
        callback = {
            "cuLaunchKernel": self.launch,
            "cuCtxGetCurrent": self.ctx_get_current,
            "cuStreamSynchronize": self.stream_synchronize,
            "cuLaunchKernelEx": self.launch_ex,
            "cuStreamQuery": self.stream_query,
            "cuEventQuery": self.event_query,
            "cuEventRecord": self.event_record,
        }.get(name)
        return ctypes.cast(callback, ctypes.c_void_p).value if callback else None


def _raise(code: int, call: str) -> None:
    raise CudaError(call, f"CODE_{code}", code)


@pytest.fixture
def fake() -> Iterator[FakeDriver]:
    """A bound fake driver; the module's previous binding is put back afterwards (a GPU run
    of the suite has the real driver bound)."""
    fake = FakeDriver()
    previous = _launch.bind(*(fake.address(name) for name in native.DRIVER_CALLS), _raise)
    try:
        yield fake
    finally:
        if previous[0] is None:
            _launch.unbind()
        else:
            _launch.bind(*previous)


def test_launch_passes_every_argument_through(fake: FakeDriver) -> None:
    function = 0x7F00_0000_1234
    assert _launch.launch(function, (4, 5, 6), (128, 2, 1), 4096, 0xABC, 0xDEAD_BEEF) is None
    ((name, args),) = fake.calls
    assert name == "launch"
    assert args == (function, 4, 5, 6, 128, 2, 1, 4096, 0xABC, 0xDEAD_BEEF, None)


def test_an_early_launch_allows_programmatic_stream_serialization(fake: FakeDriver) -> None:
    """launch_early: cuLaunchKernelEx with the same launch in its config and one attribute,
    CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (6) set to 1."""
    function = 0x7F00_0000_5678
    _launch.launch_early(function, (40, 2, 1), (128, 1, 1), 512, 0xABC, 0xDEAD_BEEF)
    assert fake.calls == [
        ("launch_ex", (function, (40, 2, 1), (128, 1, 1), 512, 0xABC, 0xDEAD_BEEF, None)),
        ("attrs", ((6, 1),)),
    ]
    fake.result = 801
    with pytest.raises(CudaError, match="cuLaunchKernelEx") as raised:
        _launch.launch_early(function, (1, 1, 1), (1, 1, 1), 0, 0, 0)
    assert raised.value.code == 801


def test_handles_may_be_index_objects(fake: FakeDriver) -> None:
    """The bindings' CUfunction and CUstream are not ints but have __index__."""

    class Handle:
        def __init__(self, value: int) -> None:
            self.value = value

        def __index__(self) -> int:
            return self.value

    _launch.launch(Handle(77), (1, 1, 1), (32, 1, 1), 0, Handle(9), 5)
    assert fake.calls[0][1][0] == 77 and fake.calls[0][1][8] == 9


def test_a_failing_launch_raises_through_on_error(fake: FakeDriver) -> None:
    fake.result = 719
    with pytest.raises(CudaError, match="cuLaunchKernel") as raised:
        _launch.launch(1, (1, 1, 1), (1, 1, 1), 0, 0, 0)
    assert raised.value.code == 719


def test_completion_queries_answer_done_or_not_ready(fake: FakeDriver) -> None:
    """stream_done / event_done: CUDA_SUCCESS is True, CUDA_ERROR_NOT_READY False, any
    other result raises through on_error naming the call; handles may be __index__ objects."""

    class Handle:
        def __index__(self) -> int:
            return 0xE7

    assert _launch.stream_done(0x55) is True
    assert _launch.event_done(Handle()) is True
    fake.result = NOT_READY
    assert _launch.stream_done(0x55) is False
    assert _launch.event_done(0xE7) is False
    assert fake.calls == [
        ("stream_query", (0x55,)),
        ("event_query", (0xE7,)),
        ("stream_query", (0x55,)),
        ("event_query", (0xE7,)),
    ]
    fake.result = 700
    with pytest.raises(CudaError, match="cuStreamQuery") as raised:
        _launch.stream_done(0x55)
    assert raised.value.code == 700
    with pytest.raises(CudaError, match="cuEventQuery"):
        _launch.event_done(0xE7)
    with pytest.raises(TypeError):
        _launch.stream_done("stream")


def test_event_record_passes_event_and_stream(fake: FakeDriver) -> None:
    class Handle:
        def __index__(self) -> int:
            return 0xE7

    _launch.event_record(Handle(), 0x55)
    assert fake.calls == [("event_record", (0xE7, 0x55))]
    fake.result = 400
    with pytest.raises(CudaError, match="cuEventRecord") as raised:
        _launch.event_record(0xE7, 0x55)
    assert raised.value.code == 400
    with pytest.raises(TypeError):
        _launch.event_record(0xE7)


def test_current_context_and_synchronize(fake: FakeDriver) -> None:
    assert _launch.current_context() == 0xC0FFEE
    _launch.synchronize(0x55)
    assert fake.calls == [("ctx", ()), ("sync", (0x55,))]
    fake.result = 700
    with pytest.raises(CudaError, match="cuStreamSynchronize"):
        _launch.synchronize(0x55)
    with pytest.raises(CudaError, match="cuCtxGetCurrent"):
        _launch.current_context()


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ((1, (1, 1), (1, 1, 1), 0, 0, 0), TypeError),  # grid of two
        ((1, [1, 1, 1], (1, 1, 1), 0, 0, 0), TypeError),  # grid not a tuple
        ((1, (1, 1, 1), (2**32, 1, 1), 0, 0, 0), OverflowError),  # block past 32 bits
        ((1, (1, 1, 1), (1, 1, 1), -1, 0, 0), OverflowError),  # negative shared memory
        ((1, (1, 1, 1), (1, 1, 1), 0, "stream", 0), TypeError),
        ((1, (1, 1, 1), (1, 1, 1), 0, 0), TypeError),  # five arguments
    ],
)
def test_bad_arguments_raise_and_launch_nothing(
    fake: FakeDriver, args: tuple[Any, ...], error: type[Exception]
) -> None:
    with pytest.raises(error):
        _launch.launch(*args)
    with pytest.raises(error):
        _launch.launch_early(*args)
    assert fake.calls == []


def test_bind_refuses_null_addresses_and_uncallable_handlers(fake: FakeDriver) -> None:
    with pytest.raises(ValueError, match="null"):
        _launch.bind(0, 1, 1, 1, 1, 1, 1, _raise)
    with pytest.raises(TypeError, match="callable"):
        _launch.bind(1, 1, 1, 1, 1, 1, 1, "not callable")
    with pytest.raises(TypeError):
        _launch.bind(1, 1, 1, 1, 1, 1, _raise)
    _launch.launch(1, (1, 1, 1), (1, 1, 1), 0, 0, 0)  # the earlier binding still holds
    assert [name for name, _ in fake.calls] == ["launch"]


def test_an_argument_that_unbinds_the_module_gets_an_error_not_a_crash(fake: FakeDriver) -> None:
    """Converting a handle may run Python (__index__): the call reads its driver function
    only afterwards, so unbinding from there refuses the call."""

    class Unbinding:
        def __index__(self) -> int:
            _launch.unbind()
            return 1

    with pytest.raises(RuntimeError, match="bind"):
        _launch.launch(Unbinding(), (1, 1, 1), (1, 1, 1), 0, 0, 0)
    _launch.bind(*(fake.address(name) for name in native.DRIVER_CALLS), _raise)
    with pytest.raises(RuntimeError, match="bind"):
        _launch.launch_early(Unbinding(), (1, 1, 1), (1, 1, 1), 0, 0, 0)
    _launch.bind(*(fake.address(name) for name in native.DRIVER_CALLS), _raise)
    with pytest.raises(RuntimeError, match="bind"):
        _launch.synchronize(Unbinding())
    _launch.bind(*(fake.address(name) for name in native.DRIVER_CALLS), _raise)
    with pytest.raises(RuntimeError, match="bind"):
        _launch.stream_done(Unbinding())
    _launch.bind(*(fake.address(name) for name in native.DRIVER_CALLS), _raise)
    with pytest.raises(RuntimeError, match="bind"):
        _launch.event_done(Unbinding())
    _launch.bind(*(fake.address(name) for name in native.DRIVER_CALLS), _raise)
    with pytest.raises(RuntimeError, match="bind"):
        _launch.event_record(Unbinding(), 0)
    assert fake.calls == []


def test_unbound_calls_refuse() -> None:
    previous = _launch.bind(1, 1, 1, 1, 1, 1, 1, _raise)
    _launch.unbind()
    try:
        assert not _launch.bound()
        with pytest.raises(RuntimeError, match="bind"):
            _launch.launch(1, (1, 1, 1), (1, 1, 1), 0, 0, 0)
        with pytest.raises(RuntimeError, match="bind"):
            _launch.launch_early(1, (1, 1, 1), (1, 1, 1), 0, 0, 0)
        with pytest.raises(RuntimeError, match="bind"):
            _launch.synchronize(0)
        with pytest.raises(RuntimeError, match="bind"):
            _launch.stream_done(0)
        with pytest.raises(RuntimeError, match="bind"):
            _launch.event_done(0)
        with pytest.raises(RuntimeError, match="bind"):
            _launch.event_record(0, 0)
    finally:
        if previous[0] is not None:
            _launch.bind(*previous)


def test_switched_off_by_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUTILE_NATIVE_LAUNCH", "0")
    assert not native.available()
    assert native.bind_driver(lambda name: 1, _raise) is None


def test_a_driver_without_an_address_keeps_the_bindings_path() -> None:
    assert native.bind_driver(lambda name: None, _raise) is None


def test_a_driver_without_cuLaunchKernelEx_keeps_the_rest(fake: FakeDriver) -> None:
    """Only early launches need cuLaunchKernelEx: without it the other calls are bound and
    `launch_early` is None (the bindings' path serves it); the module refuses the call."""
    bound = native.bind_driver(
        lambda name: None if name == "cuLaunchKernelEx" else fake.address(name), _raise
    )
    assert bound is not None and bound.launch is _launch.launch and bound.launch_early is None
    with pytest.raises(RuntimeError, match="cuLaunchKernelEx"):
        _launch.launch_early(1, (1, 1, 1), (1, 1, 1), 0, 0, 0)
    bound.launch(1, (1, 1, 1), (1, 1, 1), 0, 0, 0)
    assert [name for name, _ in fake.calls] == ["launch"]
    previous = _launch.bind(1, 1, 1, 1, 1, 1, 1, _raise)
    assert previous[3] is None
    _launch.bind(*previous)  # a binding given back binds again
    with pytest.raises(RuntimeError, match="cuLaunchKernelEx"):
        _launch.launch_early(1, (1, 1, 1), (1, 1, 1), 0, 0, 0)


def test_a_driver_without_the_queries_keeps_the_bindings_path_for_them(fake: FakeDriver) -> None:
    """Without cuStreamQuery, cuEventQuery and cuEventRecord the launch calls are bound and
    those three are None (the bindings' functions serve); the module refuses them."""
    bound = native.bind_driver(
        lambda name: None if name.startswith(("cuEvent", "cuStreamQuery")) else fake.address(name),
        _raise,
    )
    assert bound is not None and bound.stream_done is None and bound.event_done is None
    assert bound.event_record is None
    with pytest.raises(RuntimeError, match="cuEventRecord"):
        _launch.event_record(0, 0)
    with pytest.raises(RuntimeError, match="cuStreamQuery"):
        _launch.stream_done(0)
    with pytest.raises(RuntimeError, match="cuEventQuery"):
        _launch.event_done(0)
    assert fake.calls == []


def test_driver_routes_its_hot_path_through_the_bound_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After `_bind_native`, `launch_params`, `synchronize_handle`, `current_context_handle`,
    `event_done` and `stream_done` are the compiled calls, and `synchronize` and `context_handle`
    go through them; a failure names the call and its CUresult."""
    monkeypatch.delenv("CUTILE_NATIVE_LAUNCH", raising=False)
    fake = FakeDriver()
    monkeypatch.setattr(driver, "_state", {"cu": SimpleNamespace(CUresult=_Result)})
    monkeypatch.setattr(driver, "launch_params", driver._BINDINGS_LAUNCH_PARAMS)
    monkeypatch.setattr(driver, "launch_early", driver._BINDINGS_LAUNCH_EARLY)
    monkeypatch.setattr(driver, "_driver_address", fake.address)
    monkeypatch.setattr(driver, "primary_handles", {0: 0xC0FFEE})
    monkeypatch.setattr(driver, "current_context_handle", driver.current_context_handle)
    monkeypatch.setattr(driver, "synchronize_handle", driver.synchronize_handle)
    monkeypatch.setattr(driver, "event_done", driver.event_done)
    monkeypatch.setattr(driver, "stream_done", driver.stream_done)
    monkeypatch.setattr(driver, "event_record", driver.event_record)
    saved = _launch.bind(1, 1, 1, 1, 1, 1, 1, _raise)  # only to learn the binding to put back
    try:
        driver._bind_native()
        assert driver.launch_params is _launch.launch
        assert driver.launch_early is _launch.launch_early
        assert driver.synchronize_handle is _launch.synchronize
        assert driver.current_context_handle is _launch.current_context
        assert driver.event_done is _launch.event_done
        assert driver.stream_done is _launch.stream_done
        assert driver.event_record is _launch.event_record
        driver.launch_params(3, (2, 1, 1), (64, 1, 1), 0, 11, 99)
        driver._BINDINGS_LAUNCH_PARAMS(3, (2, 1, 1), (64, 1, 1), 0, 11, 99)
        driver.synchronize(11)
        assert driver.context_handle(0) == 0xC0FFEE
        driver._BINDINGS_LAUNCH_EARLY(3, (2, 1, 1), (64, 1, 1), 0, 11, 99)
        assert [name for name, _ in fake.calls] == [
            *("launch", "launch", "sync", "ctx"),
            *("launch_ex", "attrs"),
        ]
        fake.result = 1
        with pytest.raises(CudaError, match=r"cuLaunchKernel.*E1"):
            driver.launch_params(3, (2, 1, 1), (64, 1, 1), 0, 11, 99)
    finally:
        if saved[0] is None:
            _launch.unbind()
        else:
            _launch.bind(*saved)


class _Result(int):
    """A CUresult stand-in: an int with a name."""

    @property
    def name(self) -> str:
        return f"E{int(self)}"
