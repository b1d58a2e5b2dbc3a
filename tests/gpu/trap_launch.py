"""Launch one kernel once, into an output buffer another process owns, and report how the
launch ended. A device-side trap kills this process's CUDA context, so the GPU safety test
runs this in a subprocess and then inspects the buffer from its own, healthy context.

    python -m tests.gpu.trap_launch BUNDLE HANDLE_HEX TILES gather_tiles INDEX[,INDEX...]
    python -m tests.gpu.trap_launch BUNDLE HANDLE_HEX TILES sum_leading_tiles COUNT

BUNDLE holds the kernel (B-element tiles); HANDLE_HEX is a CUDA IPC handle
(cudaIpcGetMemHandle) of the owner's f32 buffer, whose first TILES * B elements are the output;
`x` holds 4 tiles of 0, 1, 2, ... `gather_tiles`: tile block b copies tile INDEX[b] of `x`
(the check stays at the access). `sum_leading_tiles`: every output tile is the sum of the first
COUNT tiles of `x` (the check is hoisted to the loop preheader). Exit status: 0 when the
launch finished; TRAPPED, with a last stderr line `launch failed: CUDA_ERROR_...`, when the
driver reported an error. Needs cupy (for the IPC handle).
"""

from __future__ import annotations

import ctypes
import os
import sys

import numpy as np

from client_stubs import Bundle, CudaError, DeviceTensor, driver

TRAPPED = 3
FAILED = "launch failed: "
SOURCE_TILES = 4


def main(argv: list[str]) -> int:
    import cupy  # only here: the test module imports this one's constants without cupy

    bundle, handle, tiles, entry, argument = argv
    kernel = Bundle.open(bundle).kernel(entry)
    (tile,) = next(p for p in kernel.spec.params if p.name == "z").tile_shape
    driver.ensure_context(0)
    pointer = cupy.cuda.runtime.ipcOpenMemHandle(bytes.fromhex(handle))
    output = DeviceTensor(pointer, (int(tiles) * tile,), dtype="f32")
    x = DeviceTensor.from_numpy(np.arange(SOURCE_TILES * tile, dtype=np.float32))
    if entry == "gather_tiles":
        indices = [int(i) for i in argument.split(",")]
        last: object = DeviceTensor.from_numpy(np.array(indices, dtype=np.int32))
    else:
        last = int(argument)
    try:
        kernel(output.partition((tile,)), x, last, sync=True)
    except CudaError as exc:
        print(exc, file=sys.stderr)
        print(f"{FAILED}{exc.name}", file=sys.stderr)
        sys.stdout.flush()
        sys.stderr.flush()
        ctypes.CDLL(None).fflush(None)  # the device printf of the failed check, if any
        os._exit(TRAPPED)  # no teardown: the context is dead, its cleanup could only fail
    cupy.cuda.runtime.ipcCloseMemHandle(pointer)
    print("launch finished")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
