"""cutile-serve's Python client: compile through the service, load bundles, launch safely.

Needs only numpy, protobuf, grpcio and cuda-python; grpc and CUDA are imported on first use,
so this package imports on machines that have neither a GPU nor a server.

    from client_stubs import Bundle, DeviceTensor
    add = Bundle.open("build/").kernel("add", {"B": "1024"})
    z = DeviceTensor.empty(n, "f32").partition([1024])
    add(z, DeviceTensor.from_numpy(x), DeviceTensor.from_numpy(y), sync=True)
    result = z.unpartition().to_numpy()

An entry `cutile-compile` built in variants (by default, the general kernel and the one for
extents and strides divisible by 16) loads as one `Variants` kernel that runs, per launch, the
most specialized variant the arguments meet; `CompileClient.kernel(...)` gets specializations
from the service per argument layout (`client_stubs.served`).

Launches are also lazy operations, run synchronously, under asyncio, or as CUDA graphs:

    op = add.op(z, x, y).then(lambda r: add.op(w, r[1], r[2]))
    op.sync()                         # or: await op / Graph.capture(op).replay(sync=True)

A persistent kernel (a `MappedPartitionMut` output) takes a `MappedPartition` and launches
(num_tile_blocks, 1, 1) blocks:

    z = DeviceTensor.empty((m, n), "f32").partition([64, 64]).map([4, 1], 132)
    copy_persistent(z, DeviceTensor.from_numpy(x), sync=True)
    result = z.unpartition().to_numpy()

Every name here loads its module on first use (`__getattr__`): the compiler imports
`client_stubs.element_table` without the host's numpy, CUDA or gRPC, and a host that only
launches bundles never imports the service protocol.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the names below are, for type checkers and editors
    from client_stubs.aio_client import AsyncCompileClient
    from client_stubs.artifacts import Bundle, BundleEntry
    from client_stubs.cache import ArtifactCache, default_cache_dir
    from client_stubs.client import CompileClient, request_key
    from client_stubs.contract import ContractSpec, validate_contract
    from client_stubs.device_op import DeviceOp, Pending
    from client_stubs.errors import (
        AmbiguousKernelError,
        ArgumentKindError,
        ArityError,
        AssumptionError,
        BundleError,
        ClientError,
        CompileError,
        ContractError,
        CudaError,
        DeviceMismatchError,
        DTypeMismatchError,
        EmptyOutputError,
        ExportedMemoryError,
        GraphCapturedError,
        GridLimitError,
        GridMismatchError,
        HostArgumentError,
        HostArrayError,
        IntegrityError,
        KernelNotFoundError,
        KernelTrapError,
        LaunchCheckError,
        LaunchError,
        LaunchGridError,
        MapShapeMismatchError,
        MovedArgumentError,
        MovedTensorError,
        NegativeStrideError,
        NoDeviceError,
        NumTileBlocksError,
        OutputRankError,
        OverlapError,
        PendingWorkError,
        RankMismatchError,
        ScalarValueError,
        SelfOverlapError,
        ServiceError,
        ShapeMismatchError,
        SlotValueError,
        TargetMismatchError,
        TileShapeMismatchError,
    )
    from client_stubs.graph import Graph
    from client_stubs.launcher import Kernel
    from client_stubs.pending import synchronize
    from client_stubs.plan import LaunchPlan, plan_launch
    from client_stubs.tensor import DeviceTensor, MappedPartition, Partition, TensorLayout
    from client_stubs.variants import Variants

_EXPORTS = {  # name -> the module that defines it
    "AsyncCompileClient": "client_stubs.aio_client",
    "Bundle": "client_stubs.artifacts",
    "BundleEntry": "client_stubs.artifacts",
    "ArtifactCache": "client_stubs.cache",
    "default_cache_dir": "client_stubs.cache",
    "CompileClient": "client_stubs.client",
    "request_key": "client_stubs.client",
    "ContractSpec": "client_stubs.contract",
    "validate_contract": "client_stubs.contract",
    "DeviceOp": "client_stubs.device_op",
    "Pending": "client_stubs.device_op",
    "AmbiguousKernelError": "client_stubs.errors",
    "ArgumentKindError": "client_stubs.errors",
    "ArityError": "client_stubs.errors",
    "AssumptionError": "client_stubs.errors",
    "BundleError": "client_stubs.errors",
    "ClientError": "client_stubs.errors",
    "CompileError": "client_stubs.errors",
    "ContractError": "client_stubs.errors",
    "CudaError": "client_stubs.errors",
    "DeviceMismatchError": "client_stubs.errors",
    "DTypeMismatchError": "client_stubs.errors",
    "EmptyOutputError": "client_stubs.errors",
    "ExportedMemoryError": "client_stubs.errors",
    "GraphCapturedError": "client_stubs.errors",
    "GridLimitError": "client_stubs.errors",
    "GridMismatchError": "client_stubs.errors",
    "HostArgumentError": "client_stubs.errors",
    "HostArrayError": "client_stubs.errors",
    "IntegrityError": "client_stubs.errors",
    "KernelNotFoundError": "client_stubs.errors",
    "KernelTrapError": "client_stubs.errors",
    "LaunchCheckError": "client_stubs.errors",
    "LaunchError": "client_stubs.errors",
    "LaunchGridError": "client_stubs.errors",
    "MapShapeMismatchError": "client_stubs.errors",
    "MovedArgumentError": "client_stubs.errors",
    "MovedTensorError": "client_stubs.errors",
    "NegativeStrideError": "client_stubs.errors",
    "NoDeviceError": "client_stubs.errors",
    "NumTileBlocksError": "client_stubs.errors",
    "OutputRankError": "client_stubs.errors",
    "OverlapError": "client_stubs.errors",
    "PendingWorkError": "client_stubs.errors",
    "RankMismatchError": "client_stubs.errors",
    "ScalarValueError": "client_stubs.errors",
    "SelfOverlapError": "client_stubs.errors",
    "ServiceError": "client_stubs.errors",
    "ShapeMismatchError": "client_stubs.errors",
    "SlotValueError": "client_stubs.errors",
    "TargetMismatchError": "client_stubs.errors",
    "TileShapeMismatchError": "client_stubs.errors",
    "Graph": "client_stubs.graph",
    "Kernel": "client_stubs.launcher",
    "synchronize": "client_stubs.pending",
    "LaunchPlan": "client_stubs.plan",
    "plan_launch": "client_stubs.plan",
    "DeviceTensor": "client_stubs.tensor",
    "MappedPartition": "client_stubs.tensor",
    "Partition": "client_stubs.tensor",
    "TensorLayout": "client_stubs.tensor",
    "Variants": "client_stubs.variants",
}

__all__ = [
    "AmbiguousKernelError",
    "ArgumentKindError",
    "ArityError",
    "ArtifactCache",
    "AssumptionError",
    "AsyncCompileClient",
    "Bundle",
    "BundleEntry",
    "BundleError",
    "ClientError",
    "CompileClient",
    "CompileError",
    "ContractError",
    "ContractSpec",
    "CudaError",
    "DTypeMismatchError",
    "DeviceMismatchError",
    "DeviceOp",
    "DeviceTensor",
    "EmptyOutputError",
    "ExportedMemoryError",
    "Graph",
    "GraphCapturedError",
    "GridLimitError",
    "GridMismatchError",
    "HostArgumentError",
    "HostArrayError",
    "IntegrityError",
    "Kernel",
    "KernelNotFoundError",
    "KernelTrapError",
    "LaunchCheckError",
    "LaunchError",
    "LaunchGridError",
    "LaunchPlan",
    "MapShapeMismatchError",
    "MappedPartition",
    "MovedArgumentError",
    "MovedTensorError",
    "NegativeStrideError",
    "NoDeviceError",
    "NumTileBlocksError",
    "OutputRankError",
    "OverlapError",
    "Partition",
    "Pending",
    "PendingWorkError",
    "RankMismatchError",
    "ScalarValueError",
    "SelfOverlapError",
    "ServiceError",
    "ShapeMismatchError",
    "SlotValueError",
    "TargetMismatchError",
    "TensorLayout",
    "TileShapeMismatchError",
    "Variants",
    "default_cache_dir",
    "plan_launch",
    "request_key",
    "synchronize",
    "validate_contract",
]


def __getattr__(name: str) -> object:
    """Load the module of an exported name on first use, then keep the name here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'client_stubs' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
