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
"""

from client_stubs.artifacts import Bundle, BundleEntry
from client_stubs.cache import ArtifactCache, default_cache_dir
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
    """`CompileClient`, `AsyncCompileClient` and `request_key` load the service protocol (and
    its googleapis dependency) on first use, so hosts that only launch bundles never import
    it."""
    if name in ("CompileClient", "request_key"):
        from client_stubs import client

        return getattr(client, name)
    if name == "AsyncCompileClient":
        from client_stubs import aio_client

        return aio_client.AsyncCompileClient
    raise AttributeError(f"module 'client_stubs' has no attribute {name!r}")
