"""`Variants`: one entry compiled in several variants, launched as one kernel that picks, per
launch, the best variant the arguments meet.

`cutile-compile` builds, next to each general kernel, variants that assume more of their tensor
arguments (every extent and stride divisible by 16, by default; a relaxed base alignment or
last stride with `--facts`). `Bundle.kernel(...)` returns the whole family as a `Variants`,
ordered best first: least relaxed, then most specialized. A launch takes the first variant
whose contract the arguments meet in full (`plan_launch`: every check a plain `Kernel` makes,
assumptions included); the general kernel serves the rest, and arguments no variant takes raise
the general kernel's error. An occupancy variant (`lowering.default_occupancy`) ranks first and
serves only launches of at least its contract's `min_tile_blocks`.

The choice costs nothing on a repeated launch: it is part of the memoized plan (`PlanMemo`,
keyed on the arguments' identity and immutable layouts), whose prepared launch names the chosen
variant. A launch with new argument objects is fully checked again, but the choice is
remembered per layout class (every tensor's shape, strides, base address modulo the largest
alignment any variant assumes and tiling; each scalar's type): the variant a class chose is
checked first, and the others only when it no longer fits.
"""

from __future__ import annotations

from collections.abc import Sequence

from client_stubs import driver
from client_stubs.errors import LaunchError
from client_stubs.launcher import Kernel
from client_stubs.occupancy import tile_blocks
from client_stubs.plan import LaunchPlan, plan_launch
from client_stubs.plan_memo import PlanMemo
from client_stubs.tensor import DeviceTensor, MappedPartition, Partition

_TENSORS = (DeviceTensor, Partition, MappedPartition)
_SCALARS = (int, float, bool)
_CLASSES = 256  # remembered layout classes per kernel
DEFAULT_BASE_ALIGN = 16

LayoutClass = tuple[object, ...]


class Variants(Kernel):
    """Variants of one kernel, best first; `general` is the one without facts (or the last).
    Metadata (`spec`, `contract`, `cubin`, `name`...) is the general kernel's."""

    def __init__(self, variants: Sequence[Kernel], general: int | None = None) -> None:
        if not variants:
            raise ValueError("Variants needs at least one kernel")
        self.variants: tuple[Kernel, ...] = tuple(variants)
        self._general = len(self.variants) - 1 if general is None else general
        base = self.variants[self._general]
        self.cubin, self.sha256 = base.cubin, base.sha256
        self.contract, self.spec = base.contract, base.spec
        self._verified: set[int] = set()
        self._memo = PlanMemo()
        self._device_sm: dict[int, str] = {}
        self._functions = base._functions
        self._classes: dict[LayoutClass, int] = {}
        self._align = max(
            [DEFAULT_BASE_ALIGN]
            + [a.value for k in self.variants for a in k.spec.assumptions if a.kind == "BASE_ALIGN"]
        )

    @property
    def general(self) -> Kernel:
        return self.variants[self._general]

    def choose(
        self, *args: object, stream: object = None, grid: tuple[int, int, int] | None = None
    ) -> Kernel:
        """The variant a launch with `args` runs (checking them as the launch would)."""
        return self._checked(args, driver.stream_handle(stream), grid)[0]

    def _checked(
        self, args: tuple[object, ...], stream: int | None, grid: tuple[int, int, int] | None = None
    ) -> tuple[Kernel, LaunchPlan]:
        key = layout_class(args, self._align, grid)
        if key is not None:
            index = self._classes.get(key)
            if index is not None:
                kernel = self.variants[index]
                try:  # the class (its host grid included) fixes the launch's size
                    return kernel, plan_launch(kernel.spec, args, stream=stream, grid=grid)
                except LaunchError:
                    pass  # the class no longer fits it (a scalar, say): choose again
        index, plan = self._choose(args, stream, grid)
        if key is not None:
            if len(self._classes) >= _CLASSES:
                self._classes.clear()
            self._classes[key] = index
        return self.variants[index], plan

    def _choose(
        self, args: tuple[object, ...], stream: int | None, grid: tuple[int, int, int] | None
    ) -> tuple[int, LaunchPlan]:
        """The first variant `args` meet in full and whose launches it serves, with its plan;
        else the general's error."""
        general_error: LaunchError | None = None
        for index, kernel in enumerate(self.variants):
            try:
                plan = plan_launch(kernel.spec, args, stream=stream, grid=grid)
            except LaunchError as exc:
                if index == self._general:
                    general_error = exc
                continue
            if index == self._general or _serves(kernel, plan):  # the general serves any size
                return index, plan
        assert general_error is not None  # the general kernel returned above otherwise
        raise general_error

    def __repr__(self) -> str:
        generics = ", ".join(f"{k}={v}" for k, v in self.spec.generics)
        return f"Variants({self.name}<{generics}>, {self.spec.sm}, {len(self.variants)} variants)"


def _serves(kernel: Kernel, plan: LaunchPlan) -> bool:
    """Whether the variant takes a launch of this plan's size: an occupancy variant only one
    of at least its `min_tile_blocks` (`lowering.default_occupancy`)."""
    return tile_blocks(plan.grid, kernel.spec.cluster_blocks) >= kernel.spec.min_tile_blocks


def layout_class(
    args: Sequence[object], align: int, grid: tuple[int, int, int] | None = None
) -> LayoutClass | None:
    """What the choice of a variant depends on: per tensor its shape, strides, base address
    modulo `align` and tiling; per scalar its type; and a host grid (the size of the launch,
    which occupancy variants depend on). None for arguments that are not our tensors or plain
    scalars, or a moved handle: those are checked in full each time. The rest (dtype, device,
    aliasing) is the same for every variant, and the variant a class chose is checked in full
    anyway."""
    parts: list[object] = [grid]
    append = parts.append
    for arg in args:
        if isinstance(arg, _TENSORS):
            layout, tiling = arg.plan_key()
            if layout is None:
                return None
            append(layout.shape)
            append(layout.strides)
            append(layout.ptr % align)
            append(tiling)
        elif type(arg) in _SCALARS:
            append(type(arg))
        else:
            return None
    return tuple(parts)
