"""Launch `gather_tiles` once, into an output buffer another process owns, and report how the
launch ended. A device-side trap kills this process's CUDA context, so the GPU safety test
runs this in a subprocess and then inspects the buffer from its own, healthy context.

    python -m tests.gpu.trap_launch BUNDLE HANDLE_HEX TILES INDEX[,INDEX...]

BUNDLE holds `gather_tiles<B>`; HANDLE_HEX is a CUDA IPC handle (cudaIpcGetMemHandle) of the
owner's f32 buffer, whose first TILES * B elements are the output; `x` holds 4 tiles of
0, 1, 2, ... and tile block b copies tile INDEX[b] of it. Exit status: 0 when the launch
finished; TRAPPED, with a last stderr line `launch failed: CUDA_ERROR_...`, when the driver
reported an error. Needs cupy (for the IPC handle).
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

    bundle, handle, tiles, indices = argv
    kernel = Bundle.open(bundle).kernel("gather_tiles")
    (tile,) = next(p for p in kernel.spec.params if p.name == "z").tile_shape
    driver.ensure_context(0)
    pointer = cupy.cuda.runtime.ipcOpenMemHandle(bytes.fromhex(handle))
    output = DeviceTensor(pointer, (int(tiles) * tile,), dtype="f32")
    x = DeviceTensor.from_numpy(np.arange(SOURCE_TILES * tile, dtype=np.float32))
    tile_index = DeviceTensor.from_numpy(
        np.array([int(i) for i in indices.split(",")], dtype=np.int32)
    )
    try:
        kernel(output.partition((tile,)), x, tile_index, sync=True)
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
