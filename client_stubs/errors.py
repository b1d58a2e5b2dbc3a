"""Every error the client raises, in one hierarchy rooted at `ClientError`.

A rejected launch is always a `LaunchError` subclass naming the kernel, the parameter, what the
contract expected and what the caller gave; nothing reaches the GPU when one is raised.
"""

from __future__ import annotations

from collections.abc import Sequence


class ClientError(Exception):
    """Base class of every error raised by `client_stubs`."""


class CudaError(ClientError):
    """A CUDA driver call failed; `name` is the driver error name (CUDA_ERROR_INVALID_VALUE...)."""

    def __init__(self, call: str, name: str, code: int) -> None:
        super().__init__(f"{call} failed: {name} ({code})")
        self.call = call
        self.name = name
        self.code = code


class KernelTrapError(CudaError):
    """A kernel stopped on the GPU (a failed in-kernel bounds check traps): the driver's error,
    with the launches it may come from (`kernels`, most recent first) and their parameters
    and in-kernel checks in the message (`client_stubs.trap_report`)."""

    def __init__(
        self, call: str, name: str, code: int, message: str, kernels: tuple[str, ...]
    ) -> None:
        super().__init__(call, name, code)
        self.args = (message,)
        self.kernels = kernels


class NoDeviceError(ClientError):
    """No CUDA driver or no CUDA device is available on this machine."""


class ContractError(ClientError):
    """A launch contract is malformed, of an unknown schema, or asks for something unsupported."""


class MovedTensorError(ClientError):
    """A tensor handle was used after `partition()` moved it (until `unpartition()` returns it)."""


class HostArrayError(ClientError):
    """A host (CPU) array was given where device memory is required."""


class PendingWorkError(ClientError):
    """A tensor was read on the host, written, freed or moved while GPU work that uses it has
    not finished (the message names the tensor, the kernel, its parameter and the stream)."""


class ExportedMemoryError(ClientError):
    """Memory another library still holds through a DLPack export cannot be freed until that
    library lets go of it."""


class GraphCapturedError(PendingWorkError):
    """A tensor captured by a live CUDA graph was freed or moved; close the graph first."""


class LaunchError(ClientError):
    """A launch was rejected before anything reached the GPU."""

    what = "argument check"

    def __init__(
        self,
        kernel: str,
        param: str | None,
        expected: object,
        actual: object,
        detail: str = "",
    ) -> None:
        where = f"parameter `{param}`" if param is not None else "launch"
        message = (
            f"kernel `{kernel}`: {where}: {self.what} failed: expected {expected}, got {actual}"
        )
        if detail:
            message += f" ({detail})"
        super().__init__(message)
        self.kernel = kernel
        self.param = param
        self.expected = expected
        self.actual = actual
        self.detail = detail


class ArityError(LaunchError):
    what = "argument count"


class ArgumentKindError(LaunchError):
    what = "argument kind"


class HostArgumentError(LaunchError, HostArrayError):
    what = "device residency"


class MovedArgumentError(LaunchError, MovedTensorError):
    what = "ownership"


class DTypeMismatchError(LaunchError):
    what = "dtype"


class RankMismatchError(LaunchError):
    what = "rank"


class ShapeMismatchError(LaunchError):
    what = "shape"


class TileShapeMismatchError(LaunchError):
    what = "partition tile shape"


class MapShapeMismatchError(LaunchError):
    what = "mapped partition map shape"


class NumTileBlocksError(LaunchError):
    what = "persistent grid size"


class OutputRankError(LaunchError):
    what = "output rank"


class EmptyOutputError(LaunchError):
    what = "output extent"


class NegativeStrideError(LaunchError):
    what = "stride sign"


class DeviceMismatchError(LaunchError):
    what = "device"


class AssumptionError(LaunchError):
    what = "kernel assumption"


class OverlapError(LaunchError):
    what = "output exclusivity"


class SelfOverlapError(LaunchError):
    what = "output element disjointness"


class GridMismatchError(LaunchError):
    what = "grid agreement"


class GridLimitError(LaunchError):
    what = "grid limit"


class LaunchCheckError(LaunchError):
    """A launch check (a bounds obligation the compiler hoisted to the host, `lhs <= rhs`)
    failed for these arguments and grid; the kernel would have accessed out of bounds."""

    what = "launch check"

    def __init__(
        self,
        kernel: str,
        lhs: str,
        lhs_value: int,
        rhs: str,
        rhs_value: int,
        cause: str = "",
    ) -> None:
        expected = f"{lhs} = {lhs_value}" if lhs != str(lhs_value) else lhs
        actual = f"{rhs} = {rhs_value}" if rhs != str(rhs_value) else rhs
        message = f"kernel `{kernel}`: {self.what} failed: {actual} must be >= {expected}"
        if cause:
            message += f" ({cause})"
        Exception.__init__(self, message)
        self.kernel = kernel
        self.param = None
        self.expected = expected
        self.actual = actual
        self.detail = cause
        self.lhs, self.lhs_value = lhs, lhs_value
        self.rhs, self.rhs_value = rhs, rhs_value
        self.cause = cause


class ScalarValueError(LaunchError):
    what = "scalar value"


class SlotValueError(LaunchError):
    what = "ABI slot range"


class TargetMismatchError(LaunchError):
    what = "target"


class BundleError(ClientError):
    """An artifact bundle (manifest + cubins + contracts) is missing, malformed or corrupt."""


class IntegrityError(BundleError):
    """A cubin's sha256 does not match the digest recorded beside it."""


class KernelNotFoundError(BundleError):
    """No artifact matches the requested function, generics and target."""


class AmbiguousKernelError(BundleError):
    """Several artifacts match the request; give more generics or the target."""


class ServiceError(ClientError):
    """The compile service failed the RPC (transport or status error, after retries)."""

    def __init__(self, code: str, details: str) -> None:
        super().__init__(f"compile service error {code}: {details}")
        self.code = code
        self.details = details


class CompileError(ClientError):
    """The service compiled the request and reported errors (`CompileResponse.ok == false`)."""

    def __init__(self, entry: str, rendered: Sequence[str], diagnostics: Sequence[object]) -> None:
        text = "\n".join(rendered) if rendered else "(no diagnostics)"
        super().__init__(f"compiling `{entry}` failed:\n{text}")
        self.entry = entry
        self.rendered = tuple(rendered)
        self.diagnostics = tuple(diagnostics)


class LaunchGridError(LaunchError):
    """A raw-pointer kernel (no output defines its grid) was launched without a valid
    `grid=(x, y, z)`, or another kernel was given one."""

    what = "launch grid"
