"""Safety at run time, on a GPU: a bounds check left in the kernel traps instead of touching
memory, a hoisted check refuses the launch on the host, and safe kernels run clean under
compute-sanitizer memcheck.

Needs a CUDA device and `CUTILE_GPU_ARTIFACTS` = a bundle built by
`python -m tests.gpu.build_artifacts` (it holds `gather_tiles`, whose tile index is read from
a tensor, so its check stays in the kernel, and `sum_leading_tiles`, whose check sits in a loop
preheader); skipped otherwise. The trapping launch kills its
CUDA context, so it runs in a subprocess (`tests.gpu.trap_launch`) that writes into this
process's buffer through CUDA IPC (cupy); this process then reads the buffer back. The
memcheck test needs the `compute-sanitizer` binary.
"""

from __future__ import annotations

import glob
import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from client_stubs import Bundle, DeviceTensor, Kernel, LaunchCheckError, driver
from tests.gpu.trap_launch import FAILED, SOURCE_TILES, TRAPPED

pytestmark = pytest.mark.gpu

ENV = "CUTILE_GPU_ARTIFACTS"
REPO = Path(__file__).resolve().parents[2]
TILES = 3
GUARD = 4096
SENTINEL = -7.0
# what the driver reports for a kernel stopped by a device-side assert or trap; an access
# that actually left the tensor would be CUDA_ERROR_ILLEGAL_ADDRESS instead
TRAP_ERRORS = ("CUDA_ERROR_ASSERT", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_LAUNCH_FAILED")


@pytest.fixture(scope="module")
def bundle_root() -> str:
    root = os.environ.get(ENV)
    if not root:
        pytest.skip(f"{ENV} is not set")
    if driver.device_count() == 0:
        pytest.skip("no CUDA device")
    driver.ensure_context(0)
    return root


@pytest.fixture(scope="module")
def gather(bundle_root: str) -> Kernel:
    return Bundle.open(bundle_root).kernel("gather_tiles")


def _tile(kernel: Kernel) -> int:
    (tile,) = next(p for p in kernel.spec.params if p.name == "z").tile_shape
    return tile


def _guarded(tile: int) -> tuple[DeviceTensor, DeviceTensor]:
    """A buffer of TILES tiles + GUARD elements, all SENTINEL, and a view of its tiles."""
    full = DeviceTensor.from_numpy(np.full(TILES * tile + GUARD, SENTINEL, dtype=np.float32))
    return full, full.narrow(0, 0, TILES * tile)


def _source(tile: int) -> np.ndarray:
    return np.arange(SOURCE_TILES * tile, dtype=np.float32)


def test_in_bounds_gather_keeps_its_check_and_is_correct(gather: Kernel) -> None:
    tile = _tile(gather)
    assert gather.contract.safety.checks_in_place > 0
    full, z = _guarded(tile)
    order = np.array([3, 0, 2], dtype=np.int32)
    x = _source(tile)
    gather(
        z.partition((tile,)),
        DeviceTensor.from_numpy(x),
        DeviceTensor.from_numpy(order),
        sync=True,
    )
    host = full.to_numpy()
    expected = np.concatenate([x[i * tile : (i + 1) * tile] for i in order])
    np.testing.assert_array_equal(host[: TILES * tile], expected)
    assert np.all(host[TILES * tile :] == SENTINEL)


def test_a_hoisted_check_refuses_the_launch_before_the_gpu(gather: Kernel) -> None:
    """The tile_index load at the block id is checked on the host: grid <= its length."""
    tile = _tile(gather)
    full, z = _guarded(tile)
    too_few = DeviceTensor.from_numpy(np.array([0, 1], dtype=np.int32))
    refusal = r"dim\(tile_index, 0\) / 1\) = 2 must be >= grid axis 0 = 3"
    with pytest.raises(LaunchCheckError, match=refusal):
        gather(z.partition((tile,)), DeviceTensor.from_numpy(_source(tile)), too_few, sync=True)
    assert np.all(full.to_numpy() == SENTINEL)


def _launch_elsewhere(
    root: str, full: DeviceTensor, argument: str, entry: str = "gather_tiles"
) -> subprocess.CompletedProcess[str]:
    cupy = pytest.importorskip("cupy")
    handle = cupy.cuda.runtime.ipcGetMemHandle(full.ptr).hex()
    command = [
        *(sys.executable, "-m", "tests.gpu.trap_launch"),
        *(root, handle, str(TILES), entry, argument),
    ]
    return subprocess.run(
        command,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_out_of_bounds_tile_index_traps_and_leaves_memory_alone(
    bundle_root: str, gather: Kernel
) -> None:
    tile = _tile(gather)
    full, _ = _guarded(tile)
    # the same launch in bounds first: the subprocess and the shared buffer work
    control = _launch_elsewhere(bundle_root, full, "2,0,3")
    assert control.returncode == 0, control.stderr
    x = _source(tile)
    np.testing.assert_array_equal(
        full.to_numpy()[: TILES * tile],
        np.concatenate([x[2 * tile : 3 * tile], x[:tile], x[3 * tile :]]),
    )

    full, _ = _guarded(tile)
    trapped = _launch_elsewhere(bundle_root, full, f"2,0,{SOURCE_TILES}")  # one past the end
    assert trapped.returncode == TRAPPED, (trapped.returncode, trapped.stdout, trapped.stderr)
    error = trapped.stderr.strip().splitlines()[-1].removeprefix(FAILED)
    assert error in TRAP_ERRORS, (trapped.stderr, trapped.stdout)  # stdout: device printf
    # the error names the kernel, its parameters and its in-kernel checks (trap_report)
    assert "kernel `kernel::gather_tiles" in trapped.stderr, trapped.stderr
    assert "stay in the kernel (" in trapped.stderr and "a failed one traps" in trapped.stderr
    host = full.to_numpy()
    assert np.all(host[2 * tile : 3 * tile] == SENTINEL), "the trapped block wrote its tile"
    assert np.all(host[TILES * tile :] == SENTINEL), "the guard region after z was written"


def test_a_preheader_check_traps_before_the_loop_runs(bundle_root: str) -> None:
    kernel = Bundle.open(bundle_root).kernel("sum_leading_tiles")
    assert kernel.contract.safety.checks_hoisted_to_preheader == 1
    assert kernel.contract.safety.checks_in_place == 0
    tile = _tile(kernel)
    x = _source(tile).reshape(SOURCE_TILES, tile)
    full, _ = _guarded(tile)
    control = _launch_elsewhere(bundle_root, full, str(SOURCE_TILES), "sum_leading_tiles")
    assert control.returncode == 0, control.stderr
    np.testing.assert_array_equal(full.to_numpy()[: TILES * tile], np.tile(x.sum(axis=0), TILES))

    full, _ = _guarded(tile)
    trapped = _launch_elsewhere(bundle_root, full, str(SOURCE_TILES + 1), "sum_leading_tiles")
    assert trapped.returncode == TRAPPED, (trapped.returncode, trapped.stdout, trapped.stderr)
    error = trapped.stderr.strip().splitlines()[-1].removeprefix(FAILED)
    assert error in TRAP_ERRORS, (trapped.stderr, trapped.stdout)
    assert "1 hoisted to a loop preheader): a failed one traps" in trapped.stderr
    assert np.all(full.to_numpy() == SENTINEL), "a block stored although its loop would overrun"


# ---- compute-sanitizer ------------------------------------------------------------------

SANITIZER = "compute-sanitizer"


def find_sanitizer() -> str | None:
    """compute-sanitizer on PATH, in a CUDA toolkit, or in an NVIDIA pip wheel."""
    found = shutil.which(SANITIZER)
    if found:
        return found
    toolkits = ["/usr/local/cuda", *sorted(glob.glob("/usr/local/cuda-*"), reverse=True)]
    wheels = [os.path.join(p, "nvidia") for p in [*site.getsitepackages(), *sys.path] if p]
    candidates = [
        *(os.path.join(t, sub, SANITIZER) for t in toolkits for sub in ("bin", SANITIZER)),
        *(
            os.path.join(w, sub, SANITIZER)
            for w in wheels
            for sub in ("cu13/bin", "cuda_nvcc/bin", "cuda_sanitizer_api/compute-sanitizer")
        ),
    ]
    return next((c for c in candidates if os.access(c, os.X_OK)), None)


def test_safe_kernels_run_clean_under_memcheck(bundle_root: str) -> None:
    sanitizer = find_sanitizer()
    if sanitizer is None:
        pytest.skip("no compute-sanitizer binary")
    command = [
        sanitizer,
        "--tool",
        "memcheck",
        "--error-exitcode",
        "1",
        sys.executable,
        "-m",
        "tests.gpu.sanitized_workload",
        bundle_root,
    ]
    run = subprocess.run(
        command,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = run.stdout + run.stderr
    if "Device not supported" in output:
        pytest.skip(f"{sanitizer} does not support this device (gVisor?): {output[-500:]}")
    assert run.returncode == 0, output[-4000:]
    assert "workload ok" in run.stdout, output[-4000:]
    assert "ERROR SUMMARY: 0 errors" in output, output[-4000:]
