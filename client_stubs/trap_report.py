"""Name the kernel behind a trap: a failed in-kernel bounds check ends the launch, and the
driver reports only `CUDA_ERROR_LAUNCH_FAILED` (or ILLEGAL_INSTRUCTION, ASSERT...) at the next
synchronization, with no word of which kernel or why.

Every launch appends its prepared plan and stream to `RECENT` (a bounded deque: one append on
the hot path; it keeps the last `KEPT` launches' plans, and with them the owners of foreign
arguments, alive). When a driver call fails with one of `TRAP_ERRORS`, `driver.check` raises
`explain(error)`: a `KernelTrapError` (a `CudaError` of the same call, name and code) whose
message lists the launches the error may come from, most recent first, each with its
parameters (kind, element type, shape or tile, the bytes it was given) and the contract's
safety summary: how many bounds checks stayed in the kernel (in place or hoisted to a loop
preheader), where a failed one traps, against those discharged at compile time or checked on
the host before launch. The context is unusable after a trap; the message says so.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from client_stubs.errors import CudaError, KernelTrapError

KEPT = 4
RECENT: deque[tuple[Any, int]] = deque(maxlen=KEPT)  # (PreparedLaunch, stream)
TRAP_ERRORS = frozenset(
    {
        "CUDA_ERROR_LAUNCH_FAILED",
        "CUDA_ERROR_ILLEGAL_INSTRUCTION",
        "CUDA_ERROR_ASSERT",
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        "CUDA_ERROR_MISALIGNED_ADDRESS",
        "CUDA_ERROR_HARDWARE_STACK_ERROR",
        "CUDA_ERROR_INVALID_PC",
    }
)


def explain(error: CudaError) -> CudaError:
    """`error` with the recent launches it may come from, when it is a trap."""
    if error.name not in TRAP_ERRORS or not RECENT or isinstance(error, KernelTrapError):
        return error
    launches = list(reversed(RECENT))
    lines = [
        f"{error}: a kernel stopped on the GPU; a failed in-kernel bounds check traps like this",
        "the launches it may come from, most recent first:",
    ]
    for prepared, stream in launches:
        lines += describe_launch(prepared, stream)
    lines.append(
        "the CUDA context cannot be used after a trap: restart the process (the memory the "
        "kernel wrote before it stopped is kept)"
    )
    kernels = tuple(prepared.kernel.name for prepared, _ in launches)
    return KernelTrapError(error.call, error.name, error.code, "\n".join(lines), kernels)


def describe_launch(prepared: Any, stream: int) -> list[str]:
    kernel = prepared.kernel
    spec = kernel.spec
    generics = ", ".join(f"{n}={v}" for n, v in spec.generics)
    name = f"{spec.module}::{spec.function}" if spec.module else spec.function
    grid = tuple(prepared.grid) if prepared.grid is not None else ()
    lines = [f"  kernel `{name}<{generics}>` ({spec.sm}) on stream {stream:#x}, grid {grid}"]
    spans = {a.param: (a.lo, a.hi) for a in prepared.accesses}
    for param in spec.params:
        lines.append(f"    {_param(param, spans.get(param.name))}")
    lines.append(f"    in-kernel checks: {_safety(kernel.contract.safety)}")
    return lines


def _param(param: Any, span: tuple[int, int] | None) -> str:
    kind = {
        "TENSOR_IN": "&Tensor",
        "TENSOR_OUT": "&mut Tensor",
        "TENSOR_OUT_MAPPED": "&mut Tensor (mapped)",
        "SCALAR": "scalar",
        "POINTER": "raw pointer",
    }.get(param.kind, param.kind)
    shape = param.tile_shape if param.is_output else param.declared_shape
    text = f"`{param.name}`: {kind}<{param.dtype}>"
    if shape:
        text += f" {'tile' if param.is_output else 'shape'} {list(shape)}"
    if span is not None:
        text += f", bytes [{span[0]:#x}, {span[1]:#x}) ({span[1] - span[0]} B)"
    return text


def _safety(safety: Any) -> str:
    if safety.unchecked_accesses:
        return "none: compiled with unchecked accesses (`unsafe`), a bad index is not caught"
    in_kernel = safety.checks_in_place + safety.checks_hoisted_to_preheader
    if not in_kernel:
        summary = "none stay in the kernel"
    else:
        summary = (
            f"{in_kernel} stay in the kernel ({safety.checks_in_place} at the access, "
            f"{safety.checks_hoisted_to_preheader} hoisted to a loop preheader): a failed one "
            "traps"
        )
    return (
        f"{summary}; {safety.checks_discharged} proven at compile time, "
        f"{safety.checks_hoisted_to_host} checked on the host before the launch"
    )
