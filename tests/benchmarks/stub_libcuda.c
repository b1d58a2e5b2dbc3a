/* A stand-in libcuda.so.1 for timing the host side of launches without a GPU: every driver
 * call the client makes succeeds at once, so what `tests.benchmarks.launch_host_cost --bindings`
 * times is the client plus cuda-python's bindings (argument conversion, result enums), the
 * part of a launch's host cost that is Python's. Never use it for anything else.
 *
 *   gcc -O2 -shared -fPIC -o /tmp/stubcuda/libcuda.so.1 tests/benchmarks/stub_libcuda.c -ldl
 *   LD_LIBRARY_PATH=/tmp/stubcuda PYTHONPATH=. python3 -m tests.benchmarks.launch_host_cost --bindings
 *
 * cuda-python resolves every entry point through cuGetProcAddress_v2; unknown ones resolve to
 * NULL (calling one raises in Python). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long u64;
enum { OK = 0, NOT_SUPPORTED = 801, NOT_FOUND = 500 };

/* Call counting, for the calls column of `launch_host_cost --bindings`: stub_count_start()
 * zeroes the counts and starts counting (off until then: one branch per call), stub_counts()
 * writes "name count" lines of the calls since. */
static const char *counted_names[64];
static long counted_calls[64];
static int counted_kinds, counting;

void stub_count_start(void) {
    for (int i = 0; i < counted_kinds; i++) counted_calls[i] = 0;
    counting = 1;
}

int stub_counts(char *out, int size) {
    int used = 0;
    for (int i = 0; i < counted_kinds && used < size; i++)
        if (counted_calls[i])
            used += snprintf(out + used, size - used, "%s %ld\n", counted_names[i], counted_calls[i]);
    return used;
}

static void counted(const char *name) {
    if (!counting) return;
    for (int i = 0; i < counted_kinds; i++)
        if (counted_names[i] == name) { counted_calls[i]++; return; }
    if (counted_kinds < 64) { counted_names[counted_kinds] = name; counted_calls[counted_kinds++] = 1; }
}

static int ctx_current = 0;
static u64 handles = 0x5000;
static u64 memory = 0x7f0000000000ULL;

CUresult cuInit(unsigned flags) { counted(__func__); return OK; }
CUresult cuDriverGetVersion(int *version) { counted(__func__); *version = 13000; return OK; }
CUresult cuDeviceGetCount(int *count) { counted(__func__); *count = 1; return OK; }
CUresult cuDeviceGet(int *device, int ordinal) { counted(__func__); *device = ordinal; return OK; }
CUresult cuDeviceGetAttribute(int *value, int attribute, int device) { counted(__func__);
    *value = attribute == 75 ? 9 : 0; /* compute capability 9.0 */
    return OK;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int device) { counted(__func__); *ctx = (void *)0x1000; return OK; }
CUresult cuCtxGetCurrent(void **ctx) { counted(__func__); *ctx = ctx_current ? (void *)0x1000 : 0; return OK; }
CUresult cuCtxSetCurrent(void *ctx) { counted(__func__); ctx_current = ctx != 0; return OK; }
CUresult cuCtxGetDevice(int *device) { counted(__func__); *device = 0; return OK; }
CUresult cuModuleLoadData(void **module, const void *image) { counted(__func__); *module = (void *)0x2000; return OK; }
CUresult cuModuleGetFunction(void **function, void *module, const char *name) { counted(__func__);
    *function = (void *)0x3000;
    return OK;
}
CUresult cuFuncGetParamInfo(void *f, size_t i, size_t *offset, size_t *size) { counted(__func__); return NOT_SUPPORTED; }
CUresult cuFuncGetParamCount(void *f, size_t *count) { counted(__func__); return NOT_SUPPORTED; }
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned smem, void *stream, void **params, void **extra) { counted(__func__);
    return OK;
}
CUresult cuLaunchKernelEx(const void *config, void *f, void **params, void **extra) { counted(__func__); return OK; }
CUresult cuEventCreate(void **event, unsigned flags) { counted(__func__); *event = (void *)(handles += 16); return OK; }
CUresult cuEventRecord(void *event, void *stream) { counted(__func__); return OK; }
CUresult cuEventQuery(void *event) { counted(__func__); return OK; }
CUresult cuEventSynchronize(void *event) { counted(__func__); return OK; }
CUresult cuEventDestroy(void *event) { counted(__func__); return OK; }
CUresult cuEventElapsedTime(float *ms, void *start, void *end) { counted(__func__); *ms = 0.0f; return OK; }
CUresult cuStreamSynchronize(void *stream) { counted(__func__); return OK; }
CUresult cuStreamQuery(void *stream) { counted(__func__); return OK; }
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned flags) { counted(__func__); return OK; }
CUresult cuStreamCreate(void **stream, unsigned flags) { counted(__func__); *stream = (void *)(handles += 16); return OK; }
CUresult cuStreamDestroy(void *stream) { counted(__func__); return OK; }
CUresult cuMemAlloc(u64 *ptr, size_t bytes) { counted(__func__);
    *ptr = memory;
    memory += ((bytes + 0xfffff) & ~0xfffffULL) + 0x100000;
    return OK;
}
CUresult cuMemFree(u64 ptr) { counted(__func__); return OK; }
CUresult cuMemcpyHtoD(u64 dst, const void *src, size_t bytes) { counted(__func__); return OK; }
CUresult cuMemcpyDtoH(void *dst, u64 src, size_t bytes) { counted(__func__); memset(dst, 0, bytes); return OK; }
CUresult cuMemsetD8(u64 dst, unsigned char value, size_t bytes) { counted(__func__); return OK; }
CUresult cuStreamBeginCapture(void *stream, int mode) { counted(__func__); return OK; }
CUresult cuStreamEndCapture(void *stream, void **graph) { counted(__func__); *graph = (void *)(handles += 16); return OK; }
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, u64 flags) { counted(__func__);
    *exec = (void *)(handles += 16);
    return OK;
}
CUresult cuGraphInstantiate(void **exec, void *graph, u64 flags) { counted(__func__);
    return cuGraphInstantiateWithFlags(exec, graph, flags);
}
CUresult cuGraphLaunch(void *exec, void *stream) { counted(__func__); return OK; }
CUresult cuGraphExecDestroy(void *exec) { counted(__func__); return OK; }
CUresult cuGraphDestroy(void *graph) { counted(__func__); return OK; }
CUresult cuLaunchHostFunc(void *stream, void (*fn)(void *), void *data) { counted(__func__); fn(data); return OK; }
CUresult cuPointerGetAttribute(void *data, int attribute, u64 ptr) { counted(__func__); *(int *)data = 0; return OK; }
CUresult cuGetErrorName(CUresult error, const char **name) { *name = "CUDA_ERROR_STUB"; return OK; }
CUresult cuGetErrorString(CUresult error, const char **text) { *text = "stub"; return OK; }

/* `name`, else `name` without a version or stream suffix (cuMemAlloc_v2 -> cuMemAlloc) */
static void *lookup(const char *name) {
    static const char *suffixes[] = {"_v2", "_v3", "_ptsz", "_ptds"};
    if (!strcmp(name, "cuGetProcAddress")) {  /* 12.0+ asks for it by its bare name: the _v2 */
        name = "cuGetProcAddress_v2";
    }
    void *found = dlsym(RTLD_DEFAULT, name);
    char base[256];
    for (int i = 0; i < 4 && !found; i++) {
        size_t length = strlen(name), cut = strlen(suffixes[i]);
        if (length > cut && length < sizeof base && !strcmp(name + length - cut, suffixes[i])) {
            memcpy(base, name, length - cut);
            base[length - cut] = 0;
            found = dlsym(RTLD_DEFAULT, base);
        }
    }
    return found;
}

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, u64 flags, int *status) {
    *pfn = lookup(symbol);
    if (status) *status = *pfn ? 0 : 1;
    return *pfn ? OK : NOT_FOUND;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, u64 flags) {
    return cuGetProcAddress_v2(symbol, pfn, version, flags, 0);
}
