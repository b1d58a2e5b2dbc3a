/* The launch hot path's driver calls, without the bindings' per-call argument handling.
 *
 * `cuda.bindings.driver.cuLaunchKernel` wraps every argument in a Python object, checks
 * it and unwraps it again: about 0.4 µs a call before the driver runs, and `cuCtxGetCurrent`
 * (asked once a launch, to find the context's loaded function) as much again. This module
 * calls them, `cuStreamSynchronize` (op.sync's wait), `cuEventRecord` (tracked work's
 * completion event) and the completion queries an `await` spins on (`cuStreamQuery`,
 * `cuEventQuery`), through function pointers bound once, taken from the bindings' own driver with `cuGetProcAddress` so both talk to the same
 * libcuda; a launch passes the kernelParams array the launch plan already built. A failing
 * call calls back into Python (`on_error` raises the client's own error). `launch_early` is
 * the same launch through `cuLaunchKernelEx` with programmatic stream serialization allowed
 * (PDL: the kernel may start while the one before it on the stream drains; only for kernels
 * that wait for prior grids before touching memory). It links nothing
 * but Python's stable ABI (one build serves every CPython >= 3.10); its only state is what
 * `bind` set.
 */
#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef int (*launch_kernel_fn)(void *function, unsigned grid_x, unsigned grid_y,
                                unsigned grid_z, unsigned block_x, unsigned block_y,
                                unsigned block_z, unsigned shared_mem_bytes, void *stream,
                                void **kernel_params, void **extra);

/* CUlaunchAttribute: an id, padding to 8 bytes, a 64-byte value union */
typedef struct {
    int id;
    char pad[4];
    union {
        char bytes[64];
        void *align;
        int programmatic_stream_serialization_allowed;
    } value;
} launch_attribute;

/* CUlaunchConfig */
typedef struct {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem_bytes;
    void *stream;
    launch_attribute *attrs;
    unsigned num_attrs;
} launch_config;

#define LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION 6 /* CUlaunchAttributeID */

typedef int (*launch_kernel_ex_fn)(const launch_config *config, void *function,
                                   void **kernel_params, void **extra);
typedef int (*ctx_get_current_fn)(void **context);
typedef int (*stream_synchronize_fn)(void *stream);
typedef int (*query_fn)(void *handle); /* cuStreamQuery, cuEventQuery */
typedef int (*event_record_fn)(void *event, void *stream);

#define CUDA_ERROR_NOT_READY 600

static launch_kernel_fn launch_kernel = NULL;
static launch_kernel_ex_fn launch_kernel_ex = NULL;
static ctx_get_current_fn ctx_get_current = NULL;
static stream_synchronize_fn stream_synchronize = NULL;
static query_fn stream_query = NULL;
static query_fn event_query = NULL;
static event_record_fn event_record_call = NULL;
static PyObject *on_error = NULL; /* on_error(CUresult, call name) raises */

/* Hand a failing call's CUresult to on_error; NULL when it raised (it should). */
static PyObject *failed(int result, const char *call) {
    if (on_error == NULL) { /* unbound meanwhile (by an argument's __index__) */
        PyErr_Format(PyExc_RuntimeError, "%s failed with CUresult %d", call, result);
        return NULL;
    }
    PyObject *raised = PyObject_CallFunction(on_error, "is", result, call);
    if (raised == NULL) {
        return NULL;
    }
    Py_DECREF(raised);
    Py_RETURN_NONE;
}

/* An unsigned 64-bit value of an int or of an object with __index__ (the bindings' handles). */
static int as_u64(PyObject *value, unsigned long long *out) {
    PyObject *index = PyNumber_Index(value);
    if (index == NULL) {
        return -1;
    }
    *out = PyLong_AsUnsignedLongLong(index);
    Py_DECREF(index);
    return (*out == (unsigned long long)-1 && PyErr_Occurred()) ? -1 : 0;
}

/* A 32-bit launch dimension: an int in [0, 2^32). */
static int as_u32(PyObject *value, unsigned *out) {
    unsigned long long wide;
    if (as_u64(value, &wide) < 0) {
        return -1;
    }
    if (wide > 0xFFFFFFFFull) {
        PyErr_SetString(PyExc_OverflowError, "a launch dimension does not fit in 32 bits");
        return -1;
    }
    *out = (unsigned)wide;
    return 0;
}

/* Three dimensions from a tuple of three ints. */
static int as_dim3(PyObject *value, unsigned out[3]) {
    if (!PyTuple_Check(value) || PyTuple_Size(value) != 3) {
        PyErr_SetString(PyExc_TypeError, "grid and block are tuples of three ints");
        return -1;
    }
    for (Py_ssize_t i = 0; i < 3; i++) {
        if (as_u32(PyTuple_GetItem(value, i), &out[i]) < 0) {
            return -1;
        }
    }
    return 0;
}

static PyObject *address_or_none(void *pointer) {
    if (pointer == NULL) {
        Py_RETURN_NONE;
    }
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)pointer);
}

/* bind(cuLaunchKernel, cuCtxGetCurrent, cuStreamSynchronize, cuLaunchKernelEx,
 * cuStreamQuery, cuEventQuery, cuEventRecord addresses, on_error) -> the previous binding, in
 * the same form (None for what was unbound); the last four addresses may be 0 or None (a
 * driver without cuLaunchKernelEx: launch_early refuses; without another: its call refuses) */
#define BOUND_CALLS 7
#define REQUIRED_CALLS 3
static PyObject *bind(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    unsigned long long addresses[BOUND_CALLS];
    if (nargs != BOUND_CALLS + 1) {
        PyErr_SetString(PyExc_TypeError, "bind(cuLaunchKernel, cuCtxGetCurrent, "
                                         "cuStreamSynchronize, cuLaunchKernelEx, cuStreamQuery, "
                                         "cuEventQuery, cuEventRecord, on_error)");
        return NULL;
    }
    for (int i = 0; i < BOUND_CALLS; i++) {
        if (i >= REQUIRED_CALLS && args[i] == Py_None) { /* as a previous binding gives it */
            addresses[i] = 0;
            continue;
        }
        if (as_u64(args[i], &addresses[i]) < 0) {
            return NULL;
        }
        if (addresses[i] == 0 && i < REQUIRED_CALLS) {
            PyErr_SetString(PyExc_ValueError, "a driver function's address is null");
            return NULL;
        }
    }
    if (!PyCallable_Check(args[BOUND_CALLS])) {
        PyErr_SetString(PyExc_TypeError, "on_error must be callable");
        return NULL;
    }
    PyObject *previous = Py_BuildValue(
        "(NNNNNNNO)", address_or_none((void *)launch_kernel),
        address_or_none((void *)ctx_get_current), address_or_none((void *)stream_synchronize),
        address_or_none((void *)launch_kernel_ex), address_or_none((void *)stream_query),
        address_or_none((void *)event_query), address_or_none((void *)event_record_call),
        on_error ? on_error : Py_None);
    if (previous == NULL) {
        return NULL;
    }
    PyObject *replaced = on_error;
    Py_INCREF(args[BOUND_CALLS]);
    on_error = args[BOUND_CALLS];
    Py_XDECREF(replaced);
    launch_kernel = (launch_kernel_fn)(uintptr_t)addresses[0];
    ctx_get_current = (ctx_get_current_fn)(uintptr_t)addresses[1];
    stream_synchronize = (stream_synchronize_fn)(uintptr_t)addresses[2];
    launch_kernel_ex = (launch_kernel_ex_fn)(uintptr_t)addresses[3];
    stream_query = (query_fn)(uintptr_t)addresses[4];
    event_query = (query_fn)(uintptr_t)addresses[5];
    event_record_call = (event_record_fn)(uintptr_t)addresses[6];
    return previous;
}

static PyObject *unbind(PyObject *module, PyObject *unused) {
    launch_kernel = NULL;
    launch_kernel_ex = NULL;
    ctx_get_current = NULL;
    stream_synchronize = NULL;
    stream_query = NULL;
    event_query = NULL;
    event_record_call = NULL;
    Py_CLEAR(on_error);
    Py_RETURN_NONE;
}

static PyObject *bound(PyObject *module, PyObject *unused) {
    return PyBool_FromLong(launch_kernel != NULL);
}

/* current_context() -> the current CUcontext as an int (0: none) */
static PyObject *current_context(PyObject *module, PyObject *unused) {
    void *context = NULL;
    if (ctx_get_current == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "bind(...) first");
        return NULL;
    }
    int result = ctx_get_current(&context);
    if (result != 0) {
        return failed(result, "cuCtxGetCurrent");
    }
    return PyLong_FromUnsignedLongLong((unsigned long long)(uintptr_t)context);
}

/* synchronize(stream) -> None: cuStreamSynchronize, other Python threads running meanwhile */
static PyObject *synchronize(PyObject *module, PyObject *stream_handle) {
    unsigned long long stream;
    int result;
    if (as_u64(stream_handle, &stream) < 0) {
        return NULL;
    }
    /* read after the conversion: an __index__ may have unbound the module meanwhile */
    stream_synchronize_fn wait = stream_synchronize;
    if (wait == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "bind(...) first");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    result = wait((void *)(uintptr_t)stream);
    Py_END_ALLOW_THREADS
    if (result != 0) {
        return failed(result, "cuStreamSynchronize");
    }
    Py_RETURN_NONE;
}

/* A completion query's answer: True (CUDA_SUCCESS), False (CUDA_ERROR_NOT_READY); any other
 * result goes to on_error. The bound query is read after the handle's conversion (an
 * __index__ may have unbound the module meanwhile). */
static PyObject *query(PyObject *handle_object, int events, const char *call) {
    unsigned long long handle;
    if (as_u64(handle_object, &handle) < 0) {
        return NULL;
    }
    query_fn ask = events ? event_query : stream_query;
    if (ask == NULL) {
        PyErr_Format(PyExc_RuntimeError, "bind(...) first, with %s", call);
        return NULL;
    }
    int result = ask((void *)(uintptr_t)handle);
    if (result == 0) {
        Py_RETURN_TRUE;
    }
    if (result == CUDA_ERROR_NOT_READY) {
        Py_RETURN_FALSE;
    }
    return failed(result, call);
}

/* stream_done(stream) -> bool: cuStreamQuery (True: every piece of work queued on it completed) */
static PyObject *stream_done(PyObject *module, PyObject *stream) {
    return query(stream, 0, "cuStreamQuery");
}

/* event_done(event) -> bool: cuEventQuery (True: the work the event captured completed) */
static PyObject *event_done(PyObject *module, PyObject *event) {
    return query(event, 1, "cuEventQuery");
}

/* event_record(event, stream) -> None: cuEventRecord (the event fires once the work queued on
 * the stream so far completed); a failure goes to on_error */
static PyObject *event_record(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    unsigned long long event, stream;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "event_record(event, stream)");
        return NULL;
    }
    if (as_u64(args[0], &event) < 0 || as_u64(args[1], &stream) < 0) {
        return NULL;
    }
    event_record_fn record = event_record_call; /* read after the conversions */
    if (record == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "bind(...) first, with cuEventRecord");
        return NULL;
    }
    int result = record((void *)(uintptr_t)event, (void *)(uintptr_t)stream);
    if (result != 0) {
        return failed(result, "cuEventRecord");
    }
    Py_RETURN_NONE;
}

/* A launch's arguments: (function, grid, block, shared_mem_bytes, stream, kernel_params). */
typedef struct {
    unsigned long long function, stream, params;
    unsigned grid[3], block[3], shared;
} launch_args;

static int parse_launch(PyObject *const *args, Py_ssize_t nargs, const char *usage,
                        launch_args *out) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    if (as_u64(args[0], &out->function) < 0 || as_dim3(args[1], out->grid) < 0 ||
        as_dim3(args[2], out->block) < 0 || as_u32(args[3], &out->shared) < 0 ||
        as_u64(args[4], &out->stream) < 0 || as_u64(args[5], &out->params) < 0) {
        return -1;
    }
    return 0;
}

/* launch(function, grid, block, shared_mem_bytes, stream, kernel_params) -> None */
static PyObject *launch(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    launch_args a;
    if (parse_launch(args, nargs,
                     "launch(function, grid, block, shared_mem_bytes, stream, kernel_params)",
                     &a) < 0) {
        return NULL;
    }
    /* read after the conversions: an __index__ may have unbound the module meanwhile */
    launch_kernel_fn call = launch_kernel;
    if (call == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "bind(...) first");
        return NULL;
    }
    int result = call((void *)(uintptr_t)a.function, a.grid[0], a.grid[1], a.grid[2],
                      a.block[0], a.block[1], a.block[2], a.shared,
                      (void *)(uintptr_t)a.stream, (void **)(uintptr_t)a.params, NULL);
    if (result != 0) {
        return failed(result, "cuLaunchKernel");
    }
    Py_RETURN_NONE;
}

/* launch_early(function, grid, block, shared_mem_bytes, stream, kernel_params) -> None:
 * cuLaunchKernelEx with programmatic stream serialization allowed */
static PyObject *launch_early(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    launch_args a;
    if (parse_launch(
            args, nargs,
            "launch_early(function, grid, block, shared_mem_bytes, stream, kernel_params)",
            &a) < 0) {
        return NULL;
    }
    launch_kernel_ex_fn call = launch_kernel_ex; /* read after the conversions */
    if (call == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "bind(...) first, with cuLaunchKernelEx");
        return NULL;
    }
    launch_attribute early = {0};
    early.id = LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    early.value.programmatic_stream_serialization_allowed = 1;
    launch_config config = {a.grid[0],  a.grid[1],  a.grid[2], a.block[0],
                            a.block[1], a.block[2], a.shared,  (void *)(uintptr_t)a.stream,
                            &early,     1};
    int result = call(&config, (void *)(uintptr_t)a.function, (void **)(uintptr_t)a.params, NULL);
    if (result != 0) {
        return failed(result, "cuLaunchKernelEx");
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"bind", (PyCFunction)(void (*)(void))bind, METH_FASTCALL,
     "bind(cuLaunchKernel, cuCtxGetCurrent, cuStreamSynchronize, cuLaunchKernelEx, "
     "cuStreamQuery, cuEventQuery, cuEventRecord addresses, on_error): call these from now "
     "on (on_error(CUresult, call name) raises); returns the previous binding."},
    {"unbind", unbind, METH_NOARGS, "Forget the binding (every call refuses until bind)."},
    {"bound", bound, METH_NOARGS, "Whether bind has been called."},
    {"current_context", current_context, METH_NOARGS,
     "cuCtxGetCurrent: the current context's handle as an int (0: none)."},
    {"stream_done", stream_done, METH_O,
     "cuStreamQuery(stream): True once its work completed, False while it runs (NOT_READY); "
     "another result goes to on_error."},
    {"event_done", event_done, METH_O,
     "cuEventQuery(event): True once the work it captured completed, False while it runs; "
     "another result goes to on_error."},
    {"event_record", (PyCFunction)(void (*)(void))event_record, METH_FASTCALL,
     "event_record(event, stream): cuEventRecord; a failure goes to on_error."},
    {"synchronize", synchronize, METH_O,
     "cuStreamSynchronize(stream), the GIL released while it waits."},
    {"launch", (PyCFunction)(void (*)(void))launch, METH_FASTCALL,
     "launch(function, grid, block, shared_mem_bytes, stream, kernel_params): cuLaunchKernel "
     "with extra = NULL; a failure goes to on_error."},
    {"launch_early", (PyCFunction)(void (*)(void))launch_early, METH_FASTCALL,
     "launch_early(function, grid, block, shared_mem_bytes, stream, kernel_params): "
     "cuLaunchKernelEx with programmatic stream serialization allowed (the kernel may start "
     "before the one ahead of it on the stream completes); a failure goes to on_error."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef definition = {
    PyModuleDef_HEAD_INIT, "client_stubs.native._launch",
    "cuLaunchKernel through a bound function pointer (the launch hot path).", -1, methods,
};

PyMODINIT_FUNC PyInit__launch(void) { return PyModule_Create(&definition); }
