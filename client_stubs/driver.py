"""A thin, lazy wrapper over `cuda.bindings.driver` (the CUDA driver API).

Nothing here imports CUDA until first use, so the rest of the client works on machines without
a driver. Every failing call raises `CudaError` carrying the driver's error name. Modules are
loaded once per (context, cubin sha256) and functions looked up once per symbol.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from client_stubs import native, trap_report
from client_stubs.errors import ClientError, ContractError, CudaError, NoDeviceError

_lock = threading.RLock()
_state: dict[str, Any] = {}
_primary: dict[int, Any] = {}  # device ordinal -> retained primary CUcontext
# device ordinal -> the int handle of its retained primary context: what the launch path
# compares the current context with (`context_handle`, `Kernel.issue`)
primary_handles: dict[int, int] = {}
_foreign_contexts: set[int] = set()  # handles of current contexts `_adopt_primary` looked at
_stream_objects: dict[int, Any] = {}  # raw stream handle -> its CUstream (see cu_stream)
_modules: dict[tuple[int, str], Any] = {}  # (context handle, cubin sha256) -> CUmodule
_functions: dict[tuple[int, str, str], Any] = {}  # (context, sha256, symbol) -> CUfunction
_CUDA_ERROR_NOT_READY = 600


def cu() -> Any:
    """`cuda.bindings.driver` (older cuda-python: `cuda.cuda`); `NoDeviceError` if absent."""
    module = _state.get("cu")
    if module is None:
        try:
            from cuda.bindings import driver as module
        except ImportError:
            try:
                from cuda import cuda as module  # type: ignore[no-redef]
            except ImportError as exc:
                raise NoDeviceError(f"cuda-python is not installed: {exc}") from exc
        _state["cu"] = module
    return module


def check(result: Any, call: str = "CUDA call") -> Any:
    """Unwrap a cuda-python result: raise `CudaError` on failure, return the payload otherwise.

    `result` is a bare `CUresult` or a tuple `(CUresult, value...)`; the payload is None, the
    single value, or the tuple of values.
    """
    err = result[0] if isinstance(result, tuple) else result
    if int(err) != 0:
        name = getattr(err, "name", str(err))
        raise trap_report.explain(CudaError(call, name, int(err)))  # a trap names its kernel
    if not isinstance(result, tuple) or len(result) == 1:
        return None
    return result[1] if len(result) == 2 else result[1:]


def init() -> None:
    """`cuInit(0)`, once per process; `NoDeviceError` when there is no usable driver."""
    if _state.get("initialized"):
        return
    with _lock:
        if _state.get("initialized"):
            return
        driver = cu()
        try:
            check(driver.cuInit(0), "cuInit")
        except CudaError as exc:
            raise NoDeviceError(f"CUDA driver unavailable: {exc}") from exc
        except Exception as exc:  # the driver library itself is missing
            raise NoDeviceError(f"CUDA driver unavailable: {exc}") from exc
        _bind_native()
        _state["initialized"] = True


def device_count() -> int:
    """Number of CUDA devices; 0 when there is no driver or no device."""
    try:
        init()
        return int(check(cu().cuDeviceGetCount(), "cuDeviceGetCount"))
    except (NoDeviceError, CudaError):
        return 0


def device_sm(ordinal: int) -> str:
    """The device's architecture as a target name, e.g. "sm_90"."""
    init()
    driver = cu()
    device = check(driver.cuDeviceGet(ordinal), "cuDeviceGet")
    attr = driver.CUdevice_attribute
    major = check(
        driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
        "cuDeviceGetAttribute",
    )
    minor = check(
        driver.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
        "cuDeviceGetAttribute",
    )
    return f"sm_{major}{minor}"


def current_context() -> Any | None:
    """The context bound to this thread, or None."""
    init()
    ctx = check(cu().cuCtxGetCurrent(), "cuCtxGetCurrent")
    return ctx if ctx is not None and int(ctx) != 0 else None


def current_device() -> int:
    """Ordinal of the current context's device (0 when no context is current); one driver
    call when it is a primary context we retained."""
    ctx = current_context()
    if ctx is None:
        return 0
    handle = int(ctx)
    for ordinal, primary in _primary.items():
        if int(primary) == handle:
            return ordinal
    return int(check(cu().cuCtxGetDevice(), "cuCtxGetDevice"))


def primary_context(ordinal: int) -> Any:
    """Retain (once) the primary context of device `ordinal`."""
    init()
    with _lock:
        ctx = _primary.get(ordinal)
        if ctx is None:
            driver = cu()
            device = check(driver.cuDeviceGet(ordinal), "cuDeviceGet")
            ctx = check(driver.cuDevicePrimaryCtxRetain(device), "cuDevicePrimaryCtxRetain")
            _primary[ordinal] = ctx
            primary_handles[ordinal] = int(ctx)
        return ctx


def ensure_context(ordinal: int) -> Any:
    """A context for device `ordinal`, current on this thread.

    Keeps the caller's current context when it is on that device (torch and cupy use the
    primary context, so this is usually the same one); otherwise makes the primary context current.
    The common case, our retained primary context already current, costs one driver call
    (`cuCtxGetCurrent`): a retained primary context is never destroyed, so its handle cannot
    come to name a context of another device.
    """
    primary = _primary.get(ordinal)
    if primary is not None:
        current = check(cu().cuCtxGetCurrent(), "cuCtxGetCurrent")
        if current is not None and int(current) == int(primary):
            return current
    ctx = current_context()
    if ctx is not None and int(check(cu().cuCtxGetDevice(), "cuCtxGetDevice")) == ordinal:
        _adopt_primary(ordinal, ctx)
        return ctx
    ctx = primary_context(ordinal)
    check(cu().cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    return ctx


def _adopt_primary(ordinal: int, ctx: Any) -> None:
    """The caller's current context `ctx` is on device `ordinal`: when the device's primary
    context is active (torch's and cupy's context is the primary one), retain it as ours, so
    that `context_handle` recognizes it in one call from then on instead of asking the device
    of a foreign context on every launch. Asked once per context handle; an inactive primary
    context is never created here."""
    handle = int(ctx)
    if ordinal in _primary or handle in _foreign_contexts:
        return
    if len(_foreign_contexts) >= 64:
        _foreign_contexts.clear()
    _foreign_contexts.add(handle)
    driver = cu()
    device = check(driver.cuDeviceGet(ordinal), "cuDeviceGet")
    _flags, active = check(driver.cuDevicePrimaryCtxGetState(device), "cuDevicePrimaryCtxGetState")
    if active:
        primary_context(ordinal)


def current_context_handle() -> int:
    """The current context as an int (0: none). After cuInit, where `client_stubs.native` is
    built, the compiled `cuCtxGetCurrent` takes this function's place (`_bind_native`)."""
    ctx = _state["cu"].cuCtxGetCurrent()[1]
    return int(ctx) if ctx is not None else 0


_PYTHON_CURRENT_CONTEXT_HANDLE = current_context_handle


def context_handle(ordinal: int) -> int:
    """`ensure_context(ordinal)` as an int handle, for the launch path: when our retained
    primary context is current (the common case) one `cuCtxGetCurrent`."""
    primary = primary_handles.get(ordinal)
    if primary is not None and current_context_handle() == primary:
        return primary
    return int(ensure_context(ordinal))


@dataclass(frozen=True)
class ParamInfo:
    """Offset and size of one kernel parameter as the cubin declares it."""

    offset: int
    size: int


def load_function(cubin: bytes, sha256: str, symbol: str, ctx: Any) -> Any:
    """The CUfunction `symbol` of `cubin` in `ctx`, loading the module once per (ctx, sha256)."""
    ctx_key = int(ctx)
    key = (ctx_key, sha256, symbol)
    function = _functions.get(key)
    if function is not None:
        return function
    with _lock:
        function = _functions.get(key)
        if function is None:
            driver = cu()
            module = _modules.get((ctx_key, sha256))
            if module is None:
                module = check(driver.cuModuleLoadData(cubin), "cuModuleLoadData")
                _modules[(ctx_key, sha256)] = module
            function = check(
                driver.cuModuleGetFunction(module, symbol.encode()),
                f"cuModuleGetFunction({symbol})",
            )
            _functions[key] = function
        return function


def param_layout(function: Any, expected_count: int) -> list[ParamInfo] | None:
    """The kernel's parameter offsets and sizes (cuFuncGetParamInfo), or None if unsupported.

    With cuFuncGetParamCount (newer drivers) every parameter is read. Without it, the first
    `expected_count` are: probing past the last parameter is a failing driver call, which
    compute-sanitizer counts as an error in every launch of a clean program. A cubin with
    more parameters than its contract then goes unnoticed here, but the contract already
    names the cubin by its SHA-256, so only a tampered bundle could have one."""
    driver = cu()
    query = getattr(driver, "cuFuncGetParamInfo", None)
    if query is None:
        return None
    count = _param_count(function)
    layout: list[ParamInfo] = []
    for index in range(expected_count if count is None else count):
        result = query(function, index)
        if int(result[0]) != 0:
            if index == 0 and result[0].name == "CUDA_ERROR_NOT_SUPPORTED":
                return None
            break
        layout.append(ParamInfo(int(result[1]), int(result[2])))
    return layout


def _param_count(function: Any) -> int | None:
    """cuFuncGetParamCount where the bindings and the driver have it, else None."""
    query = getattr(cu(), "cuFuncGetParamCount", None)
    if query is None:
        return None
    try:
        result = query(function)
    except Exception:  # a binding without the driver symbol
        return None
    return int(result[1]) if int(result[0]) == 0 else None


def verify_param_layout(function: Any, expected: Sequence[tuple[int, int]], kernel: str) -> None:
    """Raise `ContractError` when the cubin's parameters differ from the contract's ABI slots."""
    layout = param_layout(function, len(expected))
    if layout is None:
        return
    actual = [(p.offset, p.size) for p in layout]
    if actual != list(expected):
        raise ContractError(
            f"kernel `{kernel}`: the cubin's parameter layout {actual} does not match the "
            f"contract's ABI {list(expected)}"
        )


def launch_packed(
    function: Any,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_mem_bytes: int,
    stream: int,
    param_buffer: bytes,
) -> None:
    """`cuLaunchKernel` with `extra` = CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE (the packed form)."""
    buffer = ctypes.create_string_buffer(param_buffer, max(len(param_buffer), 1))
    size = ctypes.c_size_t(len(param_buffer))
    # CU_LAUNCH_PARAM_BUFFER_POINTER = 1, CU_LAUNCH_PARAM_BUFFER_SIZE = 2, CU_LAUNCH_PARAM_END = 0
    extra = (ctypes.c_void_p * 5)(1, ctypes.addressof(buffer), 2, ctypes.addressof(size), 0)
    check(
        cu().cuLaunchKernel(
            function, *grid, *block, shared_mem_bytes, stream, 0, ctypes.addressof(extra)
        ),
        "cuLaunchKernel",
    )


PER_THREAD_STREAM = 2  # CU_STREAM_PER_THREAD: a different stream in every thread


def stream_handle(stream: object) -> int:
    """A raw CUstream handle from None (legacy default, 0), an int, a CUstream, or a stream
    object of torch (`cuda_stream`), cupy (`ptr`), cuda.core (`handle`) or `__cuda_stream__`.
    The per-thread default stream is refused: one handle for a stream of each thread, which
    the host, tracking work by handle, would take for one stream (two threads' writers of
    the same memory would then not wait for each other)."""
    if stream is None:
        return 0
    handle = stream if isinstance(stream, int) else _object_handle(stream)
    if handle == PER_THREAD_STREAM:
        raise ClientError(
            "the per-thread default stream (CU_STREAM_PER_THREAD) is a different stream in "
            "every thread, which the host cannot track by its handle: launch on a stream "
            "object (torch.cuda.Stream(), a cupy stream) or the legacy default stream"
        )
    return handle


def _object_handle(stream: object) -> int:
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        return int(protocol()[1])
    for attr in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attr, None)
        if value is not None:
            return int(value)
    return int(stream)  # type: ignore[call-overload]


def synchronize(stream: object = None) -> None:
    """Wait for all work on `stream` (None: the legacy default stream)."""
    handle = stream if type(stream) is int else stream_handle(stream)
    wait = _state.get("synchronize")  # the compiled one, where bound
    if wait is not None:
        wait(handle)
        return
    cu_handle = _stream_objects.get(handle)
    if cu_handle is None:
        cu_handle = cu_stream(handle)
    result = _state["cu"].cuStreamSynchronize(cu_handle)
    if result[0]:
        check(result, "cuStreamSynchronize")


def synchronize_handle(handle: int) -> None:
    """`synchronize` of a raw stream handle (the round trip's hot path; the compiled
    `cuStreamSynchronize` takes this function's place where it is built: `_bind_native`)."""
    synchronize(handle)


_PYTHON_SYNCHRONIZE_HANDLE = synchronize_handle


def mem_alloc(nbytes: int) -> int:
    """`cuMemAlloc` in the current context; returns the device address."""
    return int(check(cu().cuMemAlloc(max(nbytes, 1)), "cuMemAlloc"))


def mem_free(ptr: int) -> None:
    check(cu().cuMemFree(ptr), "cuMemFree")


def memcpy_htod(dst: int, src_host: int, nbytes: int) -> None:
    if nbytes:
        check(cu().cuMemcpyHtoD(dst, src_host, nbytes), "cuMemcpyHtoD")


def memcpy_dtoh(dst_host: int, src: int, nbytes: int) -> None:
    if nbytes:
        check(cu().cuMemcpyDtoH(dst_host, src, nbytes), "cuMemcpyDtoH")


def memset_d8(dst: int, value: int, nbytes: int) -> None:
    if nbytes:
        check(cu().cuMemsetD8(dst, value, nbytes), "cuMemsetD8")


def pointer_device(ptr: int) -> int | None:
    """Device ordinal owning `ptr` (CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL), None if unknown."""
    try:
        init()
        driver = cu()
        attr = driver.CUpointer_attribute.CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
        return int(check(driver.cuPointerGetAttribute(attr, ptr), "cuPointerGetAttribute"))
    except (NoDeviceError, CudaError):
        return None


def event_done(event: Any) -> bool:
    """True once all work captured by `event` completed (cuEventQuery). On the hot path of
    `await` (the bounded spin), so the two expected answers are decided on the bare code; the
    compiled query takes this function's place where it is built (`_bind_native`)."""
    result = cu().cuEventQuery(event)
    err = result[0] if isinstance(result, tuple) else result
    if not err:  # CUDA_SUCCESS
        return True
    if int(err) == _CUDA_ERROR_NOT_READY:
        return False
    check(result, "cuEventQuery")
    return True


def stream_done(stream: int) -> bool:
    """True once all work queued on `stream` completed (cuStreamQuery; what an `await` on an
    idle loop spins on: the compiled query takes this function's place where it is built)."""
    handle = _stream_objects.get(stream)
    if handle is None:
        handle = cu_stream(stream)
    result = _state["cu"].cuStreamQuery(handle)
    err = result[0] if isinstance(result, tuple) else result
    if not err:
        return True
    if int(err) == _CUDA_ERROR_NOT_READY:
        return False
    check(result, "cuStreamQuery")
    return True


_PYTHON_EVENT_DONE = event_done
_PYTHON_STREAM_DONE = stream_done


def destroy_event(event: Any) -> None:
    check(cu().cuEventDestroy(event), "cuEventDestroy")


def push_context(ordinal: int) -> None:
    """Make the primary context of device `ordinal` current until `pop_context`."""
    check(cu().cuCtxPushCurrent(primary_context(ordinal)), "cuCtxPushCurrent")


def pop_context() -> None:
    """Restore the context current before the matching `push_context`."""
    check(cu().cuCtxPopCurrent(), "cuCtxPopCurrent")


def context_is_on(ordinal: int) -> bool:
    """Whether a context of device `ordinal` is current on this thread (one `cuCtxGetCurrent`
    when it is our retained primary context; False when no context is current)."""
    primary = primary_handles.get(ordinal)
    if primary is not None and current_context_handle() == primary:
        return True
    if current_context() is None:
        return False
    return int(check(cu().cuCtxGetDevice(), "cuCtxGetDevice")) == ordinal


@contextlib.contextmanager
def on_device(ordinal: int) -> Iterator[None]:
    """Run the block in a context of device `ordinal` and leave the thread's current context
    as it was: the current one when it is on that device, else its primary context pushed
    for the block (a free or a question the collector or a host check makes must not move the
    thread to another device between a launch and its tracking, and the thread may have none
    current at all)."""
    if context_is_on(ordinal):
        yield
        return
    push_context(ordinal)
    try:
        yield
    finally:
        pop_context()


def stream_done_on(stream: int, device: int) -> bool:
    """`stream_done` of the legacy stream handle `stream` of `device`, asked in that device's
    context (the handle names the current context's legacy stream)."""
    with on_device(device):
        return stream_done(stream)


def create_event() -> Any:
    """A timing-free event (cheaper to record than a timing one)."""
    driver = cu()
    return check(
        driver.cuEventCreate(driver.CUevent_flags.CU_EVENT_DISABLE_TIMING), "cuEventCreate"
    )


def event_record(event: Any, stream: int) -> None:
    """cuEventRecord of `event` on the stream handle `stream` (on every tracked launch: the
    compiled call takes this function's place where it is built, `_bind_native`)."""
    handle = _stream_objects.get(stream)
    if handle is None:
        handle = cu_stream(stream)
    result = _state["cu"].cuEventRecord(event, handle)
    if result[0]:  # on every tracked launch: no unwrapping on success
        check(result, "cuEventRecord")


_PYTHON_EVENT_RECORD = event_record


def event_synchronize(event: Any) -> None:
    check(cu().cuEventSynchronize(event), "cuEventSynchronize")


def stream_wait_event(stream: int, event: Any) -> None:
    """Make later work on `stream` wait for `event` (no host blocking)."""
    check(cu().cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent")


def create_stream(*, non_blocking: bool = False) -> int:
    """A new stream in the current context (its raw handle). A blocking stream orders after
    work on the legacy default stream; a non-blocking one does not."""
    driver = cu()
    kind = driver.CUstream_flags
    flags = kind.CU_STREAM_NON_BLOCKING if non_blocking else kind.CU_STREAM_DEFAULT
    return int(check(driver.cuStreamCreate(flags), "cuStreamCreate"))


def destroy_stream(stream: int) -> None:
    check(cu().cuStreamDestroy(stream), "cuStreamDestroy")


def launch_host_func(stream: int, function_address: int, token: int) -> None:
    """`cuLaunchHostFunc`: call the C function at `function_address` with `token` once the
    work queued on `stream` before it completes."""
    driver = cu()
    check(
        driver.cuLaunchHostFunc(stream, driver.CUhostFn(function_address), token),
        "cuLaunchHostFunc",
    )


def cu_stream(handle: int) -> Any:
    """The bindings' `CUstream` of a raw handle, made once per handle: the bindings convert
    an int stream argument into a new `CUstream` on every call, a cost on the launch path."""
    stream = _stream_objects.get(handle)
    if stream is None:
        if len(_stream_objects) >= 1024:
            _stream_objects.clear()
        stream = _stream_objects[handle] = cu().CUstream(handle)
    return stream


# the CUDA version whose ABI of a driver function the compiled launcher calls (4.0 unless
# the function is younger: cuLaunchKernelEx came with 12.0)
_ABI_VERSIONS = {"cuLaunchKernelEx": 12000}


def _driver_address(name: str) -> int | None:
    """The driver's `name` (legacy default stream, as the bindings call it), or None."""
    driver = cu()
    try:
        flags = driver.CUdriverProcAddress_flags.CU_GET_PROC_ADDRESS_LEGACY_STREAM
        result = driver.cuGetProcAddress(name.encode(), _ABI_VERSIONS.get(name, 4000), flags)
    except Exception:  # bindings or a driver without it: the bindings' path serves
        return None
    if int(result[0]) != 0:
        return None
    return int(result[1]) or None


def _raise_native_error(code: int, call: str) -> None:
    check((cu().CUresult(code),), call)


def _bind_native() -> None:
    """After cuInit, where `client_stubs.native` is built: its calls take the place of the
    hot path's functions (`launch_params`, `current_context_handle`, `synchronize_handle`,
    `event_done`, `stream_done`, `event_record`; a test's stand-in for one stays in place,
    and the Python functions route through the compiled calls too)."""
    bound = native.bind_driver(_driver_address, _raise_native_error)
    _state["native"] = bound
    if bound is None:
        return
    _state["synchronize"] = bound.synchronize
    replacements = (
        ("launch_params", _BINDINGS_LAUNCH_PARAMS, bound.launch),
        ("launch_early", _BINDINGS_LAUNCH_EARLY, bound.launch_early),
        ("current_context_handle", _PYTHON_CURRENT_CONTEXT_HANDLE, bound.current_context),
        ("synchronize_handle", _PYTHON_SYNCHRONIZE_HANDLE, bound.synchronize),
        ("event_done", _PYTHON_EVENT_DONE, bound.event_done),
        ("stream_done", _PYTHON_STREAM_DONE, bound.stream_done),
        ("event_record", _PYTHON_EVENT_RECORD, bound.event_record),
    )
    for name, python, compiled in replacements:
        if compiled is not None and globals()[name] is python:
            globals()[name] = compiled


def launch_params(
    function: Any,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_mem_bytes: int,
    stream: int,
    params_address: int,
) -> None:
    """`cuLaunchKernel` with a prebuilt kernelParams array (the hot path: no allocation;
    the compiled launcher takes this function's place where it is built: `_bind_native`)."""
    native_driver = _state.get("native")
    if native_driver is not None:
        native_driver.launch(function, grid, block, shared_mem_bytes, stream, params_address)
        return
    gx, gy, gz = grid
    bx, by, bz = block
    handle = _stream_objects.get(stream)
    if handle is None:
        handle = cu_stream(stream)
    result = _state["cu"].cuLaunchKernel(
        function, gx, gy, gz, bx, by, bz, shared_mem_bytes, handle, params_address, 0
    )
    if result[0]:  # CUDA_SUCCESS is 0
        check(result, "cuLaunchKernel")


_BINDINGS_LAUNCH_PARAMS = launch_params


def launch_early(
    function: Any,
    grid: tuple[int, int, int],
    block: tuple[int, int, int],
    shared_mem_bytes: int,
    stream: int,
    params_address: int,
) -> None:
    """`launch_params` through `cuLaunchKernelEx` with programmatic stream serialization
    allowed: the kernel may start while the kernel before it on `stream` drains (only for a
    kernel that waits for prior grids before touching memory: the contract's
    `waits_for_prior_grids`). The compiled launcher takes this function's place where it
    is built."""
    native_driver = _state.get("native")
    if native_driver is not None and native_driver.launch_early is not None:
        native_driver.launch_early(function, grid, block, shared_mem_bytes, stream, params_address)
        return
    driver = _state["cu"]
    config = driver.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid
    config.blockDimX, config.blockDimY, config.blockDimZ = block
    config.sharedMemBytes = shared_mem_bytes
    config.hStream = cu_stream(stream)
    early = driver.CUlaunchAttribute()
    early.id = driver.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    early.value.programmaticStreamSerializationAllowed = 1
    config.attrs = [early]
    config.numAttrs = 1
    check(driver.cuLaunchKernelEx(config, function, params_address, 0), "cuLaunchKernelEx")


_BINDINGS_LAUNCH_EARLY = launch_early


def begin_capture(stream: int) -> None:
    """Start capturing `stream` into a graph (relaxed mode: kernels may load meanwhile)."""
    driver = cu()
    mode = driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
    check(driver.cuStreamBeginCapture(stream, mode), "cuStreamBeginCapture")


def end_capture(stream: int) -> Any:
    """Stop capturing `stream`; returns the captured CUgraph."""
    return check(cu().cuStreamEndCapture(stream), "cuStreamEndCapture")


def instantiate_graph(graph: Any) -> Any:
    return check(cu().cuGraphInstantiate(graph, 0), "cuGraphInstantiate")


def launch_graph(graph_exec: Any, stream: int) -> None:
    check(cu().cuGraphLaunch(graph_exec, stream), "cuGraphLaunch")


def destroy_graph(graph: Any, graph_exec: Any | None) -> None:
    driver = cu()
    if graph_exec is not None:
        check(driver.cuGraphExecDestroy(graph_exec), "cuGraphExecDestroy")
    check(driver.cuGraphDestroy(graph), "cuGraphDestroy")


class DeviceAllocation:
    """Owned device memory from `cuMemAlloc`, freed by `DeviceTensor.free()` (checked: not
    under pending work, a live graph or a DLPack consumer) or when garbage collected (nothing
    can use it then: pending work and exports hold it). It has no `free()` of its own: one,
    reachable as `tensor.owner.free()`, once skipped every check."""

    __slots__ = ("__weakref__", "device", "nbytes", "ptr")

    def __init__(self, nbytes: int, device: int = 0) -> None:
        ensure_context(device)
        self.ptr = mem_alloc(nbytes)
        self.nbytes = nbytes
        self.device = device

    def _release(self) -> None:
        """Give the memory back, unchecked: for `DeviceTensor.free()` and the collector."""
        if self.ptr:
            ptr, self.ptr = self.ptr, 0
            with on_device(self.device):
                mem_free(ptr)

    def __del__(self) -> None:
        # At interpreter shutdown or with a dead context there is nothing left to do.
        with contextlib.suppress(Exception):
            self._release()

    def __repr__(self) -> str:
        return f"DeviceAllocation(ptr={self.ptr:#x}, nbytes={self.nbytes}, device={self.device})"
