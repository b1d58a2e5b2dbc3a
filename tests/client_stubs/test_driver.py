"""client_stubs.driver: the parameter-layout check reads no parameter past the last one; the
context helpers take one driver call when our primary context is current; event queries."""

from __future__ import annotations

import enum
from types import SimpleNamespace

import pytest

from client_stubs import driver
from client_stubs.errors import ContractError


class _Status(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_NOT_SUPPORTED = 801


_PARAMS = [(0, 8), (8, 4), (12, 4)]


@pytest.fixture(autouse=True)
def bindings_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here talks to its fake bindings: a GPU run of the suite may have bound the
    compiled calls (test_native covers them) in the functions' place."""
    monkeypatch.setattr(driver, "current_context_handle", driver._PYTHON_CURRENT_CONTEXT_HANDLE)
    monkeypatch.setattr(driver, "launch_params", driver._BINDINGS_LAUNCH_PARAMS)
    monkeypatch.setattr(driver, "launch_early", driver._BINDINGS_LAUNCH_EARLY)
    monkeypatch.setitem(driver._state, "synchronize", None)


def _fake_driver(with_count: bool) -> tuple[SimpleNamespace, list[int]]:
    probed: list[int] = []

    def info(function: object, index: int) -> tuple[_Status, int, int]:
        probed.append(index)
        if index < len(_PARAMS):
            return (_Status.CUDA_SUCCESS, *_PARAMS[index])
        return (_Status.CUDA_ERROR_INVALID_VALUE, 0, 0)

    fake = SimpleNamespace(cuFuncGetParamInfo=info)
    if with_count:
        fake.cuFuncGetParamCount = lambda function: (_Status.CUDA_SUCCESS, len(_PARAMS))
    return fake, probed


@pytest.mark.parametrize("with_count", [True, False])
def test_param_layout_reads_every_parameter(
    monkeypatch: pytest.MonkeyPatch, with_count: bool
) -> None:
    fake, probed = _fake_driver(with_count)
    monkeypatch.setitem(driver._state, "cu", fake)
    layout = driver.param_layout(object(), len(_PARAMS))
    assert [(p.offset, p.size) for p in layout or []] == _PARAMS
    # no query runs past the last parameter (a failing driver call, an error under memcheck)
    assert probed == [0, 1, 2]


@pytest.mark.parametrize("with_count", [True, False])
@pytest.mark.parametrize("expected", [_PARAMS[:2], [*_PARAMS, (16, 8)]])
def test_a_contract_with_other_parameters_is_refused(
    monkeypatch: pytest.MonkeyPatch, with_count: bool, expected: list[tuple[int, int]]
) -> None:
    fake, _ = _fake_driver(with_count)
    monkeypatch.setitem(driver._state, "cu", fake)
    if expected == _PARAMS[:2] and not with_count:
        # without a count, only the contract's parameters are read: the prefix matches
        driver.verify_param_layout(object(), expected, "k")
        return
    with pytest.raises(ContractError, match="parameter layout"):
        driver.verify_param_layout(object(), expected, "k")


class _Context(int):
    """A CUcontext stand-in (the bindings' handles convert with int())."""


def _context_driver(current: int, device_of: dict[int, int]) -> tuple[SimpleNamespace, list[str]]:
    calls: list[str] = []
    state = {"current": current}

    def record(name: str, value: object) -> object:
        calls.append(name)
        return value

    fake = SimpleNamespace(
        cuCtxGetCurrent=lambda: record("get", (_Status.CUDA_SUCCESS, _Context(state["current"]))),
        cuCtxGetDevice=lambda: record(
            "device", (_Status.CUDA_SUCCESS, device_of.get(state["current"], 0))
        ),
        cuCtxSetCurrent=lambda ctx: (
            record("set", state.update(current=int(ctx))) or (_Status.CUDA_SUCCESS,)
        ),
    )
    return fake, calls


@pytest.fixture
def contexts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(driver._state, "initialized", True)
    monkeypatch.setattr(driver, "_primary", {0: _Context(100), 1: _Context(200)})


@pytest.mark.usefixtures("contexts")
def test_our_current_primary_context_costs_one_call(monkeypatch: pytest.MonkeyPatch) -> None:
    fake, calls = _context_driver(100, {100: 0, 200: 1})
    monkeypatch.setitem(driver._state, "cu", fake)
    assert int(driver.ensure_context(0)) == 100 and calls == ["get"]
    calls.clear()
    assert driver.current_device() == 0 and calls == ["get"]


@pytest.mark.usefixtures("contexts")
def test_another_devices_context_is_replaced_by_the_primary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake, calls = _context_driver(200, {100: 0, 200: 1})
    monkeypatch.setitem(driver._state, "cu", fake)
    assert int(driver.ensure_context(0)) == 100
    assert calls == ["get", "get", "device", "set"]
    assert driver.current_device() == 0


@pytest.mark.usefixtures("contexts")
def test_a_foreign_context_on_the_device_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    fake, calls = _context_driver(300, {300: 1})  # e.g. a library's own context on device 1
    monkeypatch.setitem(driver._state, "cu", fake)
    assert int(driver.ensure_context(1)) == 300 and "set" not in calls
    calls.clear()
    assert driver.current_device() == 1 and calls == ["get", "device"]


@pytest.mark.parametrize("active", [True, False], ids=["primary", "own-context"])
def test_a_current_primary_context_made_by_another_library_is_adopted(
    monkeypatch: pytest.MonkeyPatch, active: bool
) -> None:
    """torch made the primary context current: the first launch retains it as ours, and from
    then on the launch path's check is one cuCtxGetCurrent. A device whose primary context
    is not active (the current one is a library's own) gets no primary context made."""
    monkeypatch.setitem(driver._state, "initialized", True)
    monkeypatch.setattr(driver, "_primary", {})
    monkeypatch.setattr(driver, "primary_handles", {})
    monkeypatch.setattr(driver, "_foreign_contexts", set())
    fake, calls = _context_driver(500, {500: 0})
    fake.cuDeviceGet = lambda ordinal: calls.append("device_get") or (_Status.CUDA_SUCCESS, 0)
    fake.cuDevicePrimaryCtxGetState = lambda device: (
        calls.append("state") or (_Status.CUDA_SUCCESS, 0, active)
    )
    fake.cuDevicePrimaryCtxRetain = lambda device: (
        calls.append("retain") or (_Status.CUDA_SUCCESS, _Context(500))
    )
    monkeypatch.setitem(driver._state, "cu", fake)
    assert driver.context_handle(0) == 500
    assert ("retain" in calls) is active and "set" not in calls
    calls.clear()
    assert driver.context_handle(0) == 500
    # adopted: one query; not adopted: the device is asked again, but never the state
    assert calls == (["get"] if active else ["get", "device"])


@pytest.mark.parametrize(
    ("status", "done"), [(_Status.CUDA_SUCCESS, True), (600, False)], ids=["done", "not-ready"]
)
def test_event_done_reads_the_two_expected_answers(
    monkeypatch: pytest.MonkeyPatch, status: int, done: bool
) -> None:
    monkeypatch.setitem(driver._state, "cu", SimpleNamespace(cuEventQuery=lambda e: (status,)))
    assert driver.event_done(object()) is done


def test_event_done_raises_on_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    failing = SimpleNamespace(cuEventQuery=lambda e: (_Status.CUDA_ERROR_INVALID_VALUE,))
    monkeypatch.setitem(driver._state, "cu", failing)
    with pytest.raises(driver.CudaError, match="cuEventQuery"):
        driver.event_done(object())


@pytest.mark.usefixtures("contexts")
def test_context_handle_is_one_query_when_our_primary_context_is_current(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake, calls = _context_driver(100, {100: 0, 200: 1})
    monkeypatch.setitem(driver._state, "cu", fake)
    monkeypatch.setattr(driver, "primary_handles", {0: 100, 1: 200})
    assert driver.context_handle(0) == 100 and calls == ["get"]
    calls.clear()
    assert driver.context_handle(1) == 200  # another device's: ensure_context makes it current
    assert calls[-2:] == ["device", "set"]


class _Stream:
    """A CUstream stand-in that counts how often one is made."""

    made: list[int] = []

    def __init__(self, handle: int) -> None:
        self.handle = handle
        _Stream.made.append(handle)


def test_stream_arguments_are_made_once_per_handle(monkeypatch: pytest.MonkeyPatch) -> None:
    launched: list[object] = []
    fake = SimpleNamespace(
        CUstream=_Stream,
        cuLaunchKernel=lambda *a: launched.append(a[8]) or (_Status.CUDA_SUCCESS,),
        cuEventRecord=lambda event, stream: launched.append(stream) or (_Status.CUDA_SUCCESS,),
        cuStreamSynchronize=lambda stream: (_Status.CUDA_SUCCESS,),
    )
    monkeypatch.setattr(driver, "_state", {"cu": fake})
    monkeypatch.setattr(driver, "_stream_objects", {})
    _Stream.made = []
    for _ in range(3):
        driver.launch_params("F", (1, 1, 1), (1, 1, 1), 0, 7, 0)
        driver.event_record("E", 7)
        driver.synchronize(7)
    assert _Stream.made == [7] and {s.handle for s in launched} == {7}  # type: ignore[attr-defined]
    assert len({id(s) for s in launched}) == 1


def test_an_early_launch_through_the_bindings_sets_one_attribute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the compiled launcher, `launch_early` builds the bindings' CUlaunchConfig:
    the launch's grid, block, shared memory and stream, and programmatic stream
    serialization allowed (its only attribute)."""
    bindings = pytest.importorskip("cuda.bindings.driver")
    launched: list[tuple[object, ...]] = []

    def launch_ex(config: object, function: object, params: object, extra: object) -> tuple:
        launched.append((config, function, params, extra))
        return (_Status.CUDA_SUCCESS,)

    fake = SimpleNamespace(
        CUlaunchConfig=bindings.CUlaunchConfig,
        CUlaunchAttribute=bindings.CUlaunchAttribute,
        CUlaunchAttributeID=bindings.CUlaunchAttributeID,
        CUstream=bindings.CUstream,
        cuLaunchKernelEx=launch_ex,
    )
    monkeypatch.setattr(driver, "_state", {"cu": fake})
    monkeypatch.setattr(driver, "_stream_objects", {})
    driver.launch_early("F", (4, 2, 1), (128, 1, 1), 256, 9, 0x1000)
    ((config, function, params, extra),) = launched
    assert (function, params, extra) == ("F", 0x1000, 0)
    assert (config.gridDimX, config.gridDimY, config.gridDimZ) == (4, 2, 1)
    assert (config.blockDimX, config.sharedMemBytes, int(config.hStream)) == (128, 256, 9)
    (attribute,) = config.attrs
    assert config.numAttrs == 1
    ids = bindings.CUlaunchAttributeID
    assert attribute.id == ids.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    assert attribute.value.programmaticStreamSerializationAllowed == 1


@pytest.mark.parametrize(
    ("status", "idle"), [(_Status.CUDA_SUCCESS, True), (600, False)], ids=["idle", "busy"]
)
def test_stream_done_reads_the_two_expected_answers(
    monkeypatch: pytest.MonkeyPatch, status: int, idle: bool
) -> None:
    fake = SimpleNamespace(CUstream=_Stream, cuStreamQuery=lambda s: (status,))
    monkeypatch.setitem(driver._state, "cu", fake)
    assert driver.stream_done(3) is idle
    failing = SimpleNamespace(CUstream=_Stream, cuStreamQuery=lambda s: (_Status(1),))
    monkeypatch.setitem(driver._state, "cu", failing)
    with pytest.raises(driver.CudaError, match="cuStreamQuery"):
        driver.stream_done(3)
