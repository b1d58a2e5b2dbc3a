//! The CUDA driver calls the host makes, through cudarc's raw bindings with dynamic loading:
//! `libcuda.so` is opened at run time, so nothing links against CUDA and the crate builds on a
//! machine without it. [`available`] says whether a driver and a device are there (the GPU
//! tests skip when not).
//!
//! cudarc's safe layer is not used for launches: it tracks every buffer with events, which
//! costs more than the launch itself; the contract's checks replace that bookkeeping here.

use std::ffi::{c_void, CStr, CString};
use std::sync::OnceLock;

use cudarc::driver::sys as cu;

use crate::errors::{Error, Result};

pub use cu::{CUcontext, CUdeviceptr, CUevent, CUfunction, CUgraphExec, CUstream};

/// `Err(Error::Cuda)` unless `result` is CUDA_SUCCESS.
pub fn check(result: cu::CUresult, call: &str) -> Result<()> {
    if result == cu::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut name: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: cuGetErrorName writes a static string pointer (or leaves it null).
    unsafe { cu::cuGetErrorName(result, &mut name) };
    let text = if name.is_null() {
        format!("{result:?}")
    } else {
        // SAFETY: the driver's error names are NUL-terminated static strings.
        unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned()
    };
    Err(Error::Cuda {
        call: call.to_string(),
        name: text,
        code: result as i32,
    })
}

/// Whether the driver library loads, initializes and reports at least one device.
pub fn available() -> bool {
    init().is_ok() && device_count().unwrap_or(0) > 0
}

/// Load the driver and `cuInit` it once.
pub fn init() -> Result<()> {
    static INIT: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    INIT.get_or_init(|| {
        // SAFETY: probing for the library has no preconditions.
        if !unsafe { cu::is_culib_present() } {
            return Err("no CUDA driver library (libcuda.so) on this machine".into());
        }
        // SAFETY: cuInit(0) is always valid to call.
        check(unsafe { cu::cuInit(0) }, "cuInit").map_err(|e| e.to_string())
    })
    .clone()
    .map_err(Error::NoDevice)
}

pub fn device_count() -> Result<i32> {
    init()?;
    let mut count = 0;
    // SAFETY: writes one int.
    check(
        unsafe { cu::cuDeviceGetCount(&mut count) },
        "cuDeviceGetCount",
    )?;
    Ok(count)
}

/// The device's compute capability as the contract spells it ("sm_90").
pub fn device_sm(ordinal: i32) -> Result<String> {
    init()?;
    let attribute = |which: cu::CUdevice_attribute| -> Result<i32> {
        let mut value = 0;
        // SAFETY: writes one int for a valid device ordinal (checked by the driver).
        check(
            unsafe { cu::cuDeviceGetAttribute(&mut value, which, ordinal) },
            "cuDeviceGetAttribute",
        )?;
        Ok(value)
    };
    let major = attribute(cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
    let minor = attribute(cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
    Ok(format!("sm_{major}{minor}"))
}

/// The primary context of device `ordinal`, retained once for the life of the process.
pub(crate) fn primary_context(ordinal: i32) -> Result<CUcontext> {
    init()?;
    static RETAINED: std::sync::Mutex<Vec<(i32, usize)>> = std::sync::Mutex::new(Vec::new());
    let mut retained = RETAINED.lock().expect("not poisoned");
    if let Some(&(_, ctx)) = retained.iter().find(|(d, _)| *d == ordinal) {
        return Ok(ctx as CUcontext);
    }
    let mut device = 0;
    // SAFETY: writes one device handle; the ordinal is checked by the driver.
    check(
        unsafe { cu::cuDeviceGet(&mut device, ordinal) },
        "cuDeviceGet",
    )?;
    let mut ctx: CUcontext = std::ptr::null_mut();
    // SAFETY: retains (never releases) the device's primary context.
    check(
        unsafe { cu::cuDevicePrimaryCtxRetain(&mut ctx, device) },
        "cuDevicePrimaryCtxRetain",
    )?;
    retained.push((ordinal, ctx as usize));
    Ok(ctx)
}

/// Make `ctx` current on this thread unless it already is (one cheap query when it is).
pub(crate) fn make_current(ctx: CUcontext) -> Result<()> {
    let mut current: CUcontext = std::ptr::null_mut();
    // SAFETY: writes one handle.
    check(
        unsafe { cu::cuCtxGetCurrent(&mut current) },
        "cuCtxGetCurrent",
    )?;
    if current != ctx {
        // SAFETY: `ctx` is a retained primary context.
        check(unsafe { cu::cuCtxSetCurrent(ctx) }, "cuCtxSetCurrent")?;
    }
    Ok(())
}

/// A loaded module's function, or the driver's error.
pub(crate) fn load_function(cubin: &[u8], symbol: &str) -> Result<(cu::CUmodule, CUfunction)> {
    let mut module: cu::CUmodule = std::ptr::null_mut();
    // SAFETY: the driver reads the cubin image during the call.
    check(
        unsafe { cu::cuModuleLoadData(&mut module, cubin.as_ptr() as *const c_void) },
        "cuModuleLoadData",
    )?;
    let name =
        CString::new(symbol).map_err(|_| Error::Contract(format!("entry symbol {symbol:?}")))?;
    let mut function: CUfunction = std::ptr::null_mut();
    // SAFETY: `module` was just loaded; `name` is NUL-terminated.
    check(
        unsafe { cu::cuModuleGetFunction(&mut function, module, name.as_ptr()) },
        &format!("cuModuleGetFunction({symbol})"),
    )?;
    Ok((module, function))
}

type ParamInfoFn = unsafe extern "C" fn(CUfunction, usize, *mut usize, *mut usize) -> cu::CUresult;
type ParamCountFn = unsafe extern "C" fn(CUfunction, *mut usize) -> cu::CUresult;

fn symbol<F: Copy>(name: &[u8]) -> Option<F> {
    // SAFETY: the library is loaded (init succeeded); the type matches the driver's header.
    unsafe { cu::culib().get::<F>(name).ok().map(|s| *s) }
}

/// The kernel's parameter (offset, size) list (cuFuncGetParamInfo), or None where the driver
/// cannot tell. With cuFuncGetParamCount every parameter is read; without it, the first
/// `expected` (probing past the last one is a failing call, which compute-sanitizer flags).
pub(crate) fn param_layout(function: CUfunction, expected: usize) -> Option<Vec<(usize, usize)>> {
    let info: ParamInfoFn = symbol(b"cuFuncGetParamInfo\0")?;
    let count = symbol::<ParamCountFn>(b"cuFuncGetParamCount\0").and_then(|f| {
        let mut n = 0usize;
        // SAFETY: writes one size.
        (unsafe { f(function, &mut n) } == cu::CUresult::CUDA_SUCCESS).then_some(n)
    });
    let mut layout = Vec::new();
    for index in 0..count.unwrap_or(expected) {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: writes two sizes for a loaded function.
        let result = unsafe { info(function, index, &mut offset, &mut size) };
        if result != cu::CUresult::CUDA_SUCCESS {
            if index == 0 && result == cu::CUresult::CUDA_ERROR_NOT_SUPPORTED {
                return None;
            }
            break;
        }
        layout.push((offset, size));
    }
    Some(layout)
}

/// `cuLaunchKernel` with one pointer per ABI slot in `params`.
///
/// # Safety
/// `params` must point at the kernel's parameters, laid out as its cubin declares them.
pub unsafe fn launch(
    function: CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared_mem_bytes: u32,
    stream: CUstream,
    params: *mut *mut c_void,
) -> Result<()> {
    check(
        cu::cuLaunchKernel(
            function,
            grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            shared_mem_bytes,
            stream,
            params,
            std::ptr::null_mut(),
        ),
        "cuLaunchKernel",
    )
}

/// [`launch`] through `cuLaunchKernelEx` with programmatic stream serialization allowed:
/// the kernel may start while the kernel before it on `stream` drains.
///
/// # Safety
/// As for [`launch`]; and the kernel must wait for prior grids before it touches memory
/// (its contract's `waits_for_prior_grids`).
pub unsafe fn launch_early(
    function: CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared_mem_bytes: u32,
    stream: CUstream,
    params: *mut *mut c_void,
) -> Result<()> {
    let mut early = cu::CUlaunchAttribute {
        id: cu::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value: cu::CUlaunchAttributeValue { pad: [0; 64] },
    };
    early.value.programmaticStreamSerializationAllowed = 1;
    let config = cu::CUlaunchConfig {
        gridDimX: grid[0],
        gridDimY: grid[1],
        gridDimZ: grid[2],
        blockDimX: block[0],
        blockDimY: block[1],
        blockDimZ: block[2],
        sharedMemBytes: shared_mem_bytes,
        hStream: stream,
        attrs: &mut early,
        numAttrs: 1,
    };
    check(
        cu::cuLaunchKernelEx(&config, function, params, std::ptr::null_mut()),
        "cuLaunchKernelEx",
    )
}

/// Whether kernels that wait for prior grids are launched early (CUTILE_EARLY_LAUNCH=0: no).
pub fn early_launch_allowed() -> bool {
    static ALLOWED: OnceLock<bool> = OnceLock::new();
    *ALLOWED.get_or_init(|| std::env::var("CUTILE_EARLY_LAUNCH").map_or(true, |v| v != "0"))
}

pub(crate) fn mem_alloc(bytes: usize) -> Result<CUdeviceptr> {
    let mut ptr: CUdeviceptr = 0;
    // SAFETY: writes one device pointer; a zero-byte request is rounded up.
    check(
        unsafe { cu::cuMemAlloc_v2(&mut ptr, bytes.max(1)) },
        "cuMemAlloc",
    )?;
    Ok(ptr)
}

/// # Safety
/// `ptr` came from [`mem_alloc`] and no work that uses it is pending.
pub(crate) unsafe fn mem_free(ptr: CUdeviceptr) -> Result<()> {
    check(cu::cuMemFree_v2(ptr), "cuMemFree")
}

/// Synchronous host-to-device copy (ordered after work on blocking streams).
///
/// # Safety
/// `dst` holds at least `src.len()` bytes of device memory.
pub(crate) unsafe fn memcpy_htod(dst: CUdeviceptr, src: &[u8]) -> Result<()> {
    check(
        cu::cuMemcpyHtoD_v2(dst, src.as_ptr() as *const c_void, src.len()),
        "cuMemcpyHtoD",
    )
}

/// Synchronous device-to-host copy (ordered after work on blocking streams).
///
/// # Safety
/// `src` holds at least `dst.len()` bytes of device memory.
pub(crate) unsafe fn memcpy_dtoh(dst: &mut [u8], src: CUdeviceptr) -> Result<()> {
    check(
        cu::cuMemcpyDtoH_v2(dst.as_mut_ptr() as *mut c_void, src, dst.len()),
        "cuMemcpyDtoH",
    )
}

/// # Safety
/// `dst` holds at least `bytes` bytes of device memory.
pub(crate) unsafe fn memset_d8(dst: CUdeviceptr, value: u8, bytes: usize) -> Result<()> {
    check(cu::cuMemsetD8_v2(dst, value, bytes), "cuMemsetD8")
}

/// A new stream; `blocking` streams order after the legacy default stream, which the
/// synchronous copies use (a host read waits for the kernels that write).
pub(crate) fn create_stream(blocking: bool) -> Result<CUstream> {
    let mut stream: CUstream = std::ptr::null_mut();
    let flags = if blocking { 0 } else { 1 }; // CU_STREAM_NON_BLOCKING = 1
                                              // SAFETY: writes one handle.
    check(
        unsafe { cu::cuStreamCreate(&mut stream, flags) },
        "cuStreamCreate",
    )?;
    Ok(stream)
}

/// # Safety
/// `stream` is a stream this process created and no longer uses.
pub(crate) unsafe fn destroy_stream(stream: CUstream) -> Result<()> {
    check(cu::cuStreamDestroy_v2(stream), "cuStreamDestroy")
}

pub(crate) fn synchronize(stream: CUstream) -> Result<()> {
    // SAFETY: waits for a valid stream (or the legacy one, null).
    check(
        unsafe { cu::cuStreamSynchronize(stream) },
        "cuStreamSynchronize",
    )
}

/// Whether every operation queued on `stream` has finished.
pub(crate) fn stream_done(stream: CUstream) -> Result<bool> {
    // SAFETY: queries a valid stream.
    let result = unsafe { cu::cuStreamQuery(stream) };
    if result == cu::CUresult::CUDA_ERROR_NOT_READY {
        return Ok(false);
    }
    check(result, "cuStreamQuery").map(|_| true)
}

/// Enqueue `callback(user_data)` behind the work on `stream` (it runs on the driver's thread
/// and must make no CUDA call).
///
/// # Safety
/// `user_data` stays valid until the callback runs, and the callback frees it.
pub(crate) unsafe fn launch_host_func(
    stream: CUstream,
    callback: unsafe extern "C" fn(*mut c_void),
    user_data: *mut c_void,
) -> Result<()> {
    check(
        cu::cuLaunchHostFunc(stream, Some(callback), user_data),
        "cuLaunchHostFunc",
    )
}

pub(crate) fn begin_capture(stream: CUstream) -> Result<()> {
    // SAFETY: a valid stream; relaxed mode lets other threads make unsafe calls meanwhile.
    check(
        unsafe {
            cu::cuStreamBeginCapture_v2(
                stream,
                cu::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED,
            )
        },
        "cuStreamBeginCapture",
    )
}

pub(crate) fn end_capture(stream: CUstream) -> Result<cu::CUgraph> {
    let mut graph: cu::CUgraph = std::ptr::null_mut();
    // SAFETY: writes one handle for a capturing stream.
    check(
        unsafe { cu::cuStreamEndCapture(stream, &mut graph) },
        "cuStreamEndCapture",
    )?;
    Ok(graph)
}

pub(crate) fn instantiate_graph(graph: cu::CUgraph) -> Result<CUgraphExec> {
    let mut exec: CUgraphExec = std::ptr::null_mut();
    // SAFETY: writes one handle for a captured graph.
    check(
        unsafe { cu::cuGraphInstantiateWithFlags(&mut exec, graph, 0) },
        "cuGraphInstantiate",
    )?;
    Ok(exec)
}

pub(crate) fn launch_graph(exec: CUgraphExec, stream: CUstream) -> Result<()> {
    // SAFETY: a valid executable graph and stream.
    check(unsafe { cu::cuGraphLaunch(exec, stream) }, "cuGraphLaunch")
}

/// # Safety
/// Neither handle is used afterwards and no replay is pending.
pub(crate) unsafe fn destroy_graph(graph: cu::CUgraph, exec: CUgraphExec) -> Result<()> {
    if !exec.is_null() {
        check(cu::cuGraphExecDestroy(exec), "cuGraphExecDestroy")?;
    }
    if !graph.is_null() {
        check(cu::cuGraphDestroy(graph), "cuGraphDestroy")?;
    }
    Ok(())
}
