"""`Kernel`: a cubin plus its launch contract, launched safely through the CUDA driver.

All argument checking and packing happens in `plan.plan_launch` (pure Python); `Kernel.launch`
adds the target checks, loads the module once per context, verifies the cubin's parameter
layout against the contract on first use, and calls `cuLaunchKernel` with
block (1,1,1) and the contract's shared memory on the caller's stream. The grid comes from the
plan: from the partitioned outputs, or (num_tile_blocks, 1, 1) for a persistent kernel.
"""

from __future__ import annotations

import hashlib
import platform
from typing import Any

from client_stubs import driver
from client_stubs.contract import ContractSpec, validate_contract
from client_stubs.errors import ContractError, IntegrityError, TargetMismatchError
from client_stubs.liveness import IN_FLIGHT
from client_stubs.plan import LaunchPlan, plan_launch
from client_stubs.plan_memo import PlanMemo
from protos.generated.cutile.compile.v1 import contract_pb2

_HOST_ARCH_ALIASES = {
    "amd64": "x86_64",
    "x86_64": "x86_64",
    "arm64": "aarch64",
    "aarch64": "aarch64",
}


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
        self._verified: set[int] = set()
        self._memo = PlanMemo()
        self._device_sm: dict[int, str] = {}

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

    def plan(self, *args: object, stream: object = None) -> LaunchPlan:
        """Check and pack without launching (no GPU needed)."""
        return self._plan(args, driver.stream_handle(stream))

    def _plan(self, args: tuple[object, ...], stream: int) -> LaunchPlan:
        """`plan_launch`, reusing the previous plan when the same arguments come back."""
        plan = self._memo.lookup(args)
        if plan is None:
            plan = plan_launch(self.spec, args, stream=stream)
            self._memo.store(args, plan)
        return plan

    def launch(
        self, *args: object, stream: object = None, sync: bool = False, packed: bool = False
    ) -> tuple[object, ...]:
        """Launch on `stream` (None: the legacy default stream) and return the arguments back
        (outputs as their `Partition` / `MappedPartition` objects; a persistent kernel's grid is
        (num_tile_blocks, 1, 1) from its `MappedPartition`). `sync` waits for completion;
        `packed` passes the parameters through `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER) instead
        of kernelParams."""
        handle = driver.stream_handle(stream)
        plan = self._plan(args, handle)
        device = driver.current_device() if plan.device is None else plan.device
        self._check_target(device)
        function = self._function(device)
        if packed:
            driver.launch_packed(
                function, plan.grid, plan.block, plan.shared_mem_bytes, handle, plan.param_buffer
            )
        else:
            driver.launch(
                function,
                plan.grid,
                plan.block,
                plan.shared_mem_bytes,
                handle,
                plan.param_buffer,
                plan.slot_offsets,
            )
        IN_FLIGHT.hold(handle, plan.keep_alive)
        if sync:
            driver.synchronize(handle)
        return plan.results

    __call__ = launch

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

    def _function(self, device: int) -> Any:
        ctx = driver.ensure_context(device)
        function = driver.load_function(self.cubin, self.sha256, self.spec.entry_symbol, ctx)
        if int(ctx) not in self._verified:
            driver.verify_param_layout(
                function, [(s.offset, s.size) for s in self.spec.slots], self.name
            )
            self._verified.add(int(ctx))
        return function

    def __repr__(self) -> str:
        generics = ", ".join(f"{k}={v}" for k, v in self.spec.generics)
        return f"Kernel({self.name}<{generics}>, {self.spec.sm}, sha256={self.sha256[:12]})"
