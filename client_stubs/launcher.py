"""`Kernel`: a cubin plus its launch contract, launched safely through the CUDA driver.

All argument checking and packing happens in `plan.plan_launch` (pure Python); `Kernel.launch`
adds the target checks, loads the module once per context, verifies the cubin's parameter
layout against the contract on first use, and calls `cuLaunchKernel` with
block (1,1,1) and the contract's shared memory on the caller's stream. The grid comes from the
plan: from the partitioned outputs, or (num_tile_blocks, 1, 1) for a persistent kernel.

The launch path is built for host overhead: a repeated launch with the same argument layouts
reuses the checked plan and its prebuilt kernelParams array (packed once per argument layout),
so it costs a few identity checks, one `cuCtxGetCurrent` and one `cuLaunchKernel`; an eager
launch on a default stream is tracked without an event of its own (`PendingWork.note`; on a
stream its owner may destroy, an event per launch, which outlives the stream). `kernel.op(...)`
is the same launch as a lazy `DeviceOp` (chain with `.then`, run with `.sync()`, `await`, or
capture in a graph). Subclasses choose among several cubins per argument layout (`_checked`):
the prepared launch names the kernel whose function runs (`variants.Variants`,
`served.Served`).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
from typing import Any

from client_stubs import driver
from client_stubs.contract import ContractSpec, validate_contract
from client_stubs.device_op import LaunchOp
from client_stubs.errors import (
    ContractError,
    DeviceMismatchError,
    IntegrityError,
    LaunchGridError,
    PendingWorkError,
    TargetMismatchError,
)
from client_stubs.pending import PENDING, register_for_wait, synchronize_handle
from client_stubs.plan import LaunchPlan, plan_launch
from client_stubs.plan_memo import PlanMemo
from client_stubs.tensor import Moves
from client_stubs.trap_report import RECENT as RECENT_LAUNCHES
from protos.generated.cutile.compile.v1 import contract_pb2

_HOST_ARCH_ALIASES = {
    "amd64": "x86_64",
    "x86_64": "x86_64",
    "arm64": "aarch64",
    "aarch64": "aarch64",
}


# Launch kernels that wait for prior grids early (programmatic dependent launch): they may
# start while the kernel before them drains. CUTILE_EARLY_LAUNCH=0 launches every kernel
# plainly (to measure what early launches gain, or to rule them out).
EARLY_LAUNCH = os.environ.get("CUTILE_EARLY_LAUNCH", "1") != "0"


def host_arch() -> str:
    """This machine's architecture as the contract spells it ("x86_64" or "aarch64")."""
    machine = platform.machine().lower()
    return _HOST_ARCH_ALIASES.get(machine, machine)


class Kernel:
    """A launchable kernel. `kernel(*args, stream=None)` checks, packs and launches."""

    def __init__(
        self,
        cubin: bytes,
        contract: contract_pb2.LaunchContract,
        *,
        cubin_sha256: str | None = None,
        allow_unchecked: bool = False,
    ) -> None:
        self.cubin = bytes(cubin)
        self.sha256 = hashlib.sha256(self.cubin).hexdigest()
        if cubin_sha256 is not None and cubin_sha256.lower() != self.sha256:
            raise IntegrityError(
                f"cubin sha256 {self.sha256} differs from the expected {cubin_sha256}"
            )
        self.contract = contract
        self.spec: ContractSpec = validate_contract(contract)
        if self.spec.unchecked_accesses and not allow_unchecked:
            raise ContractError(
                f"kernel `{self.name}` was compiled with unchecked accesses; pass "
                "allow_unchecked=True to launch it"
            )
        if self.spec.raw_pointers and not allow_unchecked:
            names = ", ".join(f"`{n}`" for n in self.spec.raw_pointers)
            raise ContractError(
                f"kernel `{self.name}` takes raw pointers ({names}) whose accesses are not "
                "bounds-checked; pass allow_unchecked=True to launch it"
            )
        self._verified: set[int] = set()
        self._memo = PlanMemo()
        self._device_sm: dict[int, str] = {}
        self._functions: dict[int, Any] = {}  # context handle -> verified CUfunction

    @property
    def name(self) -> str:
        return self.spec.function or self.spec.entry_symbol

    @property
    def entry_symbol(self) -> str:
        return self.spec.entry_symbol

    @property
    def sm(self) -> str:
        return self.spec.sm

    @property
    def generics(self) -> dict[str, str]:
        return dict(self.spec.generics)

    @property
    def persistent(self) -> bool:
        """Whether outputs are `MappedPartitionMut`s: pass `partition.map(map_shape, n)`."""
        return self.spec.persistent

    def map_shape(self, param: str | int) -> tuple[int, ...]:
        """The MAP a mapped output was compiled for (what `partition.map` must be given)."""
        for p in self.spec.params:
            if param in (p.name, p.index):
                if not p.map_shape:
                    raise ValueError(f"`{p.name}` of `{self.name}` is not a mapped output")
                return p.map_shape
        raise KeyError(f"`{self.name}` has no parameter {param!r}")

    def plan(
        self, *args: object, stream: object = None, grid: tuple[int, int, int] | None = None
    ) -> LaunchPlan:
        """Check and pack without launching (no GPU needed). `grid`: only for a kernel whose
        grid no output defines (raw pointers; see `host_grid`)."""
        handle = driver.stream_handle(stream)
        if self.spec.host_grid or grid is not None:
            return self._checked(args, handle, grid)[1]
        plan = self._memo.lookup(args)
        if plan is None:
            plan = self._checked(args, handle)[1]
            self._memo.store(args, plan)
        return plan

    def op(self, *args: object, grid: tuple[int, int, int] | None = None) -> LaunchOp:
        """This launch as a lazy `DeviceOp`: nothing is checked or launched until it runs
        (`.sync()`, `await`, `.start()`, or a graph capture); it then gives the arguments back,
        in parameter order, once the GPU work is complete. `grid`: as for `launch`, only for
        a kernel whose grid no output defines."""
        return LaunchOp(self, args, grid)

    @property
    def host_grid(self) -> bool:
        """No output defines the grid (a raw-pointer kernel): launch with `grid=(x, y, z)`."""
        return self.spec.host_grid

    def launch(
        self,
        *args: object,
        stream: object = None,
        sync: bool = False,
        packed: bool = False,
        grid: tuple[int, int, int] | None = None,
    ) -> tuple[object, ...]:
        """Launch on `stream` (None: the legacy default stream) and return the arguments back
        (outputs as their `Partition` / `MappedPartition` objects; a persistent kernel's grid is
        (num_tile_blocks, 1, 1) from its `MappedPartition`). `sync` waits for completion;
        otherwise the arguments are in use by pending work until it completes (reading,
        freeing or unpartitioning them raises `PendingWorkError` meanwhile). `packed` passes
        the parameters through `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER) instead of
        kernelParams. `grid` is the launch grid of a kernel whose grid no output defines
        (`host_grid`), and refused for any other."""
        handle = 0 if stream is None else driver.stream_handle(stream)
        if grid is not None and not self.spec.host_grid:
            raise LaunchGridError(
                self.name, None, "no grid argument", tuple(grid), "its outputs define the grid"
            )
        prepared = self.issue(args, handle, None, False, packed, grid)
        device = prepared.launched_on
        if sync:
            register_for_wait(handle, prepared.accesses, (args, prepared.keep_alive), device)
            synchronize_handle(handle, device)
        else:
            PENDING.track(handle, prepared.accesses, (args, prepared.keep_alive), device=device)
        return args

    __call__ = launch

    def issue(
        self,
        args: tuple[object, ...],
        stream: int,
        contexts: dict[int, int] | None = None,
        capturing: bool = False,
        packed: bool = False,
        grid: tuple[int, int, int] | None = None,
    ) -> PreparedLaunch:
        """Check (or reuse the checked plan), order after conflicting work on other streams,
        and call `cuLaunchKernel` on `stream`. `contexts` maps device ordinals to the context
        already made current in this run (filled on first use; None: ask the driver). Tracking
        the work is the caller's job. This is the hot path: keep it free of allocations and
        extra calls."""
        remembered = args if grid is None else (*args, *grid)  # a host grid is an input too
        try:  # PlanMemo.hit, inlined
            entry = self._memo.entries.get(hash(remembered))
            hit = (
                entry is not None
                and entry.moves == Moves.count
                and remembered == entry.same
                and entry.prepared is not None
            )
        except (TypeError, ReferenceError):  # a foreign argument; a remembered handle died
            hit = False
        if hit:
            prepared: PreparedLaunch = entry.prepared  # type: ignore[union-attr,assignment]
        else:
            prepared = self._prepare(args, stream, grid)
        device = prepared.device
        if device is None:
            device = prepared.launched_on = driver.current_device()
        if contexts is None:  # driver.context_handle, its common case inlined
            ctx = driver.primary_handles.get(device)
            if ctx is None or driver.current_context_handle() != ctx:
                ctx = driver.context_handle(device)
        else:
            ctx = _run_context(self.name, device, stream, contexts)
        kernel = prepared.kernel  # the variant chosen for these arguments (or self)
        function = kernel._functions.get(ctx)
        if function is None:
            function = kernel._load(device, ctx)
        streams = PENDING._streams  # PENDING.others_pending(stream, device), inlined
        if streams and (
            len(streams) > 1 or (stream if stream > 1 else -2 - 2 * device - stream) not in streams
        ):
            _order_after_other_streams(stream, prepared, capturing)
        if packed:
            plan = prepared.plan
            driver.launch_packed(
                function, plan.grid, plan.block, plan.shared_mem_bytes, stream, plan.param_buffer
            )
        elif prepared.early:
            driver.launch_early(
                function, prepared.grid, prepared.block, prepared.smem, stream, prepared.address
            )
        else:
            driver.launch_params(
                function, prepared.grid, prepared.block, prepared.smem, stream, prepared.address
            )
        RECENT_LAUNCHES.append((prepared, stream))  # a trap names it (`trap_report`)
        return prepared

    def _prepare(
        self, args: tuple[object, ...], stream: int, grid: tuple[int, int, int] | None = None
    ) -> PreparedLaunch:
        """The checked plan with its kernelParams array, reused while the arguments (and a
        host-grid kernel's grid, remembered as three more scalars) repeat."""
        remembered = args if grid is None else (*args, *grid)
        memo = self._memo  # read once: a `Served` kernel may replace it from another thread
        entry = memo.rebound(remembered)  # `issue` tried the identity hit already
        if entry is not None and entry.prepared is not None:
            return entry.prepared  # type: ignore[return-value]
        kernel, plan = self._checked(args, stream, grid)
        entry = memo.store(remembered, plan)
        if entry is None:  # foreign arguments: their owners ride along with this launch
            return PreparedLaunch(plan, plan.keep_alive, kernel)
        prepared = PreparedLaunch(entry.plan, (), kernel)
        entry.prepared = prepared
        return prepared

    def _checked(
        self, args: tuple[object, ...], stream: int | None, grid: tuple[int, int, int] | None = None
    ) -> tuple[Kernel, LaunchPlan]:
        """Every check of a launch with `args`: the kernel that launches them and its plan
        (`Variants` chooses among its kernels here)."""
        return self, plan_launch(self.spec, args, stream=stream, grid=grid)

    def _check_target(self, device: int) -> None:
        arch = host_arch()
        if self.spec.host_arch and self.spec.host_arch != arch:
            raise TargetMismatchError(
                self.name,
                None,
                f"host arch {self.spec.host_arch}",
                f"host arch {arch}",
                f"the cubin embeds host code; compile with host_arch={arch!r}",
            )
        sm = self._device_sm.get(device)
        if sm is None:
            sm = self._device_sm[device] = driver.device_sm(device)
        if self.spec.sm and self.spec.sm != sm:
            raise TargetMismatchError(self.name, None, self.spec.sm, f"{sm} (device {device})")

    def _load(self, device: int, ctx: int) -> Any:
        """Check the target, load the module into `ctx` and verify its parameter layout once."""
        self._check_target(device)
        function = driver.load_function(self.cubin, self.sha256, self.spec.entry_symbol, ctx)
        if ctx not in self._verified:
            driver.verify_param_layout(
                function, [(s.offset, s.size) for s in self.spec.slots], self.name
            )
            self._verified.add(ctx)
        self._functions[ctx] = function
        return function

    def __repr__(self) -> str:
        generics = ", ".join(f"{k}={v}" for k, v in self.spec.generics)
        return f"Kernel({self.name}<{generics}>, {self.spec.sm}, sha256={self.sha256[:12]})"


class PreparedLaunch:
    """A checked plan and its kernelParams: one pointer per ABI slot into one packed buffer,
    built once per argument layout. `keep_alive` holds the owners of foreign arguments;
    `kernel` is the one whose cubin launches (a `Variants`' choice for these arguments);
    `early`: launch it with programmatic stream serialization (its contract says it waits for
    prior grids, and CUTILE_EARLY_LAUNCH is not 0)."""

    __slots__ = (
        "_buffer",
        "_params",
        "accesses",
        "address",
        "block",
        "device",
        "early",
        "grid",
        "keep_alive",
        "kernel",
        "launched_on",
        "plan",
        "smem",
    )

    def __init__(self, plan: LaunchPlan, keep_alive: tuple[object, ...], kernel: Kernel) -> None:
        self.plan = plan
        self.kernel = kernel
        self.keep_alive = keep_alive
        self.device = plan.device
        # the device the last launch ran on: the arguments', or (none) the current one then
        self.launched_on: int = 0 if plan.device is None else plan.device
        self.grid = plan.grid
        self.block = plan.block
        self.smem = plan.shared_mem_bytes
        self.accesses = plan.accesses
        self.early = kernel.spec.waits_for_prior_grids and EARLY_LAUNCH
        self._buffer = ctypes.create_string_buffer(
            plan.param_buffer, max(len(plan.param_buffer), 1)
        )
        base = ctypes.addressof(self._buffer)
        offsets = plan.slot_offsets
        self._params = (ctypes.c_void_p * max(len(offsets), 1))(*[base + o for o in offsets])
        self.address = ctypes.addressof(self._params)


def _run_context(kernel: str, device: int, stream: int, contexts: dict[int, int]) -> int:
    """The context a launch of a run on `device` goes out in, current: the run's (`contexts`,
    filled on its first launch), made current again if a step made another one current (an
    allocation on another device); a second device is refused before anything runs."""
    ctx = contexts.get(device)
    if ctx is None:
        if contexts:  # an op's launches share one stream, hence one device
            raise _second_device(kernel, stream, next(iter(contexts)), device)
        ctx = contexts[device] = driver.context_handle(device)
    elif driver.current_context_handle() != ctx:
        ctx = contexts[device] = driver.context_handle(device)
    return ctx


def _second_device(kernel: str, stream: int, first: int, device: int) -> DeviceMismatchError:
    """An op's launches all run on its one stream; the legacy stream's handle names another
    stream on every device, so a launch on a second device is refused before it runs (run
    each device's work as an op of its own)."""
    return DeviceMismatchError(
        kernel,
        None,
        f"device {first}, as the op's earlier launches on stream {stream:#x}",
        f"device {device}",
        "an op runs on one device: run each device's work as its own op",
    )


def _order_after_other_streams(stream: int, prepared: PreparedLaunch, capturing: bool) -> None:
    """Work is pending on other streams: order this launch after what of it conflicts
    (`wait_for_conflicts`, minus its repeated `others_pending`), or refuse it in a capture."""
    if capturing:
        _refuse_pending_in_capture(stream, prepared.plan, prepared.launched_on)
        return
    for batch in PENDING.conflicts(stream, prepared.accesses, prepared.launched_on):
        event = PENDING.event_of(batch)
        if event is not None:  # None: it retired meanwhile
            driver.stream_wait_event(stream, event)


def _refuse_pending_in_capture(stream: int, plan: LaunchPlan, device: int) -> None:
    """A graph cannot wait for work outside it: refuse instead of capturing a race."""
    for batch in PENDING.conflicts(stream, plan.accesses, device):
        access = batch.accesses[0]
        raise PendingWorkError(
            f"kernel `{plan.kernel}` cannot be captured into a graph: its arguments are in use "
            f"by unfinished work on stream {batch.stream:#x} (kernel `{access.kernel}`); "
            "synchronize before capturing"
        )
