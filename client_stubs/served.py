"""`Served`: a kernel the service specializes for the arguments it is launched with.

`CompileClient.kernel(source, entry, generics)` compiles the general kernel (through the local
cache) and returns it as a `Served` kernel. The first launch with a new argument layout measures
the tensor arguments (`specialization.facts_for`: per axis the largest power of two up to 16
dividing each extent and stride, the base alignment, whether the last stride is 1: what cuTile
Rust's JIT infers at launch) and asks the service once for the kernel specialized to those facts
(later processes find it in the local cache); a launch of MIN_TILE_BLOCKS tile blocks or more
asks for the occupancy variant with those facts, where the general kernel's contract says the
entry takes one (`LaunchConfig.takes_occupancy_variant`, `lowering.default_occupancy`).
Arguments whose facts say nothing beyond the defaults, in a smaller launch (or of an entry
that takes no occupancy variant), run the general kernel, without a request. Every launch is
checked against the contract of the kernel it runs, like any launch; the choice is part of the
memoized plan and remembered per layout class (`variants.layout_class`), so a repeated launch
pays nothing for it.

By default the first launch of a new layout waits for its specialization. With non-blocking
behaviour (`CompileClient.kernel(..., non_blocking=True)`) it starts the compile in the
background and launches the general kernel meanwhile, provided the arguments meet the general
kernel's assumptions (a misaligned view, which only its specialization takes, waits); launches
after the specialization arrived run it. A specialization that fails to compile leaves its
layouts on the general kernel (`errors` keeps why); `wait()` waits for the compiles in flight.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from concurrent.futures import wait as wait_all

from google.protobuf.message import DecodeError

from client_stubs import driver
from client_stubs.errors import AssumptionError, ClientError, LaunchError
from client_stubs.launcher import Kernel
from client_stubs.occupancy import MIN_TILE_BLOCKS, VARIANT_OCCUPANCY, tile_blocks
from client_stubs.plan import LaunchPlan, plan_launch
from client_stubs.plan_memo import PlanMemo
from client_stubs.specialization import DEFAULT_BASE_ALIGN, facts_for
from client_stubs.variants import LayoutClass, layout_class
from protos.generated.cutile.compile.v1 import compile_pb2

Facts = list[compile_pb2.TensorFacts]
CompileFor = Callable[[Facts, int], Kernel]  # (facts, occupancy variant: 0 or the hint)
_CLASSES = 256  # remembered layout classes


class Served(Kernel):
    """The general kernel plus its specializations per measured facts; metadata (`spec`,
    `contract`, `cubin`, `name`...) is the general kernel's."""

    def __init__(
        self, general: Kernel, compile_for: CompileFor, *, executor: Executor | None = None
    ) -> None:
        self.general = general
        self.cubin, self.sha256 = general.cubin, general.sha256
        self.contract, self.spec = general.contract, general.spec
        self._verified: set[int] = set()
        self._memo = PlanMemo()
        self._device_sm: dict[int, str] = {}
        self._functions = general._functions
        self._compile_for = compile_for
        self._executor = executor  # None: the first launch of a layout waits for its kernel
        self._lock = threading.Lock()
        self._classes: dict[LayoutClass, Kernel] = {}
        self._by_facts: dict[bytes, Kernel] = {}
        self._pending: dict[bytes, Future[Kernel]] = {}
        self.errors: list[Exception] = []

    @property
    def specializations(self) -> tuple[Kernel, ...]:
        """The specialized kernels compiled so far."""
        with self._lock:
            return tuple(k for k in self._by_facts.values() if k is not self.general)

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the specializations being compiled in the background."""
        with self._lock:
            pending = list(self._pending.values())
        wait_all(pending, timeout)

    def choose(self, *args: object, stream: object = None) -> Kernel:
        """The kernel a launch with `args` runs now (checking them as the launch would)."""
        return self._checked(args, driver.stream_handle(stream))[0]

    def _checked(
        self, args: tuple[object, ...], stream: int | None, grid: tuple[int, int, int] | None = None
    ) -> tuple[Kernel, LaunchPlan]:
        key = layout_class(args, DEFAULT_BASE_ALIGN, grid)
        kernel = self._classes.get(key) if key is not None else None
        pending: Future[Kernel] | None = None
        if kernel is None:
            kernel, pending = self._kernel_for(args, grid)
            if kernel is not None and key is not None:
                if len(self._classes) >= _CLASSES:
                    self._classes.clear()
                self._classes[key] = kernel
        if kernel is not None and kernel is not self.general:
            try:
                return kernel, plan_launch(kernel.spec, args, stream=stream, grid=grid)
            except LaunchError:
                pass  # measured facts it does not meet (cannot happen), or a scalar: in full
        try:
            return self.general, plan_launch(self.general.spec, args, stream=stream, grid=grid)
        except AssumptionError:
            if pending is None:
                raise
        kernel = pending.result()  # only the specialization takes these arguments: wait
        return kernel, plan_launch(kernel.spec, args, stream=stream, grid=grid)

    def _kernel_for(
        self, args: Sequence[object], grid: tuple[int, int, int] | None = None
    ) -> tuple[Kernel | None, Future[Kernel] | None]:
        """The kernel for the measured facts of `args` (and the occupancy variant for a
        launch of many tile blocks), compiling it on first sight; (None, its compile) while it
        compiles in the background."""
        params = self.general.spec.params
        if len(args) != len(params):
            return self.general, None  # its checks say what is wrong
        tensors = {p.name: a for p, a in zip(params, args, strict=True) if p.kind.startswith("T")}
        try:
            facts = facts_for(tensors)
        except (ClientError, TypeError, ValueError, BufferError, AttributeError):
            return self.general, None  # moved, host or foreign arguments: its checks report
        occupancy = self._occupancy_for(args, grid)
        if not facts and not occupancy:
            return self.general, None
        key = bytes([occupancy]) + b"".join(f.SerializeToString(deterministic=True) for f in facts)
        with self._lock:
            known = self._by_facts.get(key)
            if known is not None:
                return known, None
            pending = self._pending.get(key)
            if pending is not None:
                return None, pending
            if self._executor is not None:
                try:
                    pending = self._executor.submit(self._compile_for, facts, occupancy)
                except RuntimeError:  # the client was closed: compile now, in this thread
                    pending = None
                else:
                    self._pending[key] = pending
        if pending is not None:
            pending.add_done_callback(lambda done: self._arrived(key, done))
            return None, pending
        kernel = self._compiled(facts, occupancy)
        with self._lock:
            self._by_facts[key] = kernel
        return kernel, None

    def _occupancy_for(self, args: Sequence[object], grid: tuple[int, int, int] | None) -> int:
        """The occupancy variant's hint for a launch of at least MIN_TILE_BLOCKS tile blocks
        (as the general kernel plans it) of an entry that takes it, else 0."""
        if not self.general.spec.takes_occupancy_variant:
            return 0
        try:
            plan = plan_launch(self.general.spec, tuple(args), grid=grid)
        except LaunchError:  # a launch only a specialization takes: no occupancy variant
            return 0
        blocks = tile_blocks(plan.grid, self.general.spec.cluster_blocks)
        return VARIANT_OCCUPANCY if blocks >= MIN_TILE_BLOCKS else 0

    def _compiled(self, facts: Facts, occupancy: int) -> Kernel:
        """The specialization for `facts` (and `occupancy`); the general kernel when it cannot
        be had (it does not compile, the service fails or answers something unusable), as in
        the background."""
        try:
            return self._compile_for(facts, occupancy)
        except (ClientError, DecodeError) as exc:  # CompileError is a ClientError
            self.errors.append(exc)
            return self.general

    def _arrived(self, key: bytes, done: Future[Kernel]) -> None:
        """A background compile finished: its layouts choose again at their next launch."""
        try:
            kernel = done.result()
        except Exception as exc:  # a failed request leaves its layouts on the general kernel
            self.errors.append(exc)
            kernel = self.general
        with self._lock:
            self._by_facts[key] = kernel
            self._pending.pop(key, None)
        self._memo = PlanMemo()  # one assignment: a launch in flight keeps the memo it read

    def __repr__(self) -> str:
        generics = ", ".join(f"{k}={v}" for k, v in self.spec.generics)
        count = len(self.specializations)
        return f"Served({self.name}<{generics}>, {self.spec.sm}, {count} specializations)"
