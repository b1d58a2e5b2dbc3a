"""Remember a kernel's last launch plan and reuse it when the same arguments come back.

Checks and packing are pure functions of the arguments' immutable `TensorLayout`s, partition
tile shapes (and a `MappedPartition`'s map and grid) and scalar values, so a repeated launch
with the same `DeviceTensor`/`Partition`/`MappedPartition` objects and equal scalars (the
typical loop) can skip `plan_launch`. The contract's launch checks are functions of the same
inputs (every tensor's shape, from its immutable layout, and the grid, from the outputs' shapes
and tiles or a `MappedPartition`'s num_tile_blocks), so a reused plan passed them; a plan is
only stored after `plan_launch` succeeded, so a failed check is re-evaluated (and fails) on
every attempt. Layouts are held weakly:
the memo never keeps device memory alive, and a freed layout can never match again.
"""

from __future__ import annotations

import struct
import weakref
from dataclasses import dataclass, replace

from client_stubs.plan import LaunchPlan
from client_stubs.tensor import DeviceTensor, MappedPartition, Partition, TensorLayout

_SCALAR_TYPES = (int, float, bool)


@dataclass(frozen=True)
class _TensorKey:
    layout: weakref.ref[TensorLayout]
    tile_shape: object  # a Partition's tiles, a MappedPartition's (tiles, map, grid), or None


@dataclass(frozen=True)
class _ScalarKey:
    kind: type
    value: int | bytes  # floats by their bits: -0.0 and 0.0 must not match


def _key(args: tuple[object, ...]) -> tuple[list[TensorLayout | None], list[object]] | None:
    """Per argument: its live layout (None for scalars) and a comparable key part."""
    layouts: list[TensorLayout | None] = []
    parts: list[object] = []
    for arg in args:
        if isinstance(arg, (Partition, MappedPartition, DeviceTensor)):
            if arg.moved:
                return None
            tiles: object = None
            if isinstance(arg, Partition):
                tiles = arg.tile_shape
            elif isinstance(arg, MappedPartition):  # the map and grid are part of the plan
                tiles = ("mapped", arg.tile_shape, arg.map_shape, arg.num_tile_blocks)
            layouts.append(arg.layout)
            parts.append(tiles)
        elif type(arg) in _SCALAR_TYPES:
            layouts.append(None)
            value = struct.pack("<d", arg) if isinstance(arg, float) else int(arg)  # type: ignore[arg-type]
            parts.append(_ScalarKey(type(arg), value))
        else:
            return None
    return layouts, parts


class PlanMemo:
    """One remembered plan (the last one) per kernel."""

    def __init__(self) -> None:
        self._key: tuple[object, ...] | None = None
        self._plan: LaunchPlan | None = None

    def lookup(self, args: tuple[object, ...]) -> LaunchPlan | None:
        """The remembered plan if `args` are the same as when it was stored, else None."""
        stored, plan = self._key, self._plan
        found = _key(args)
        if stored is None or plan is None or found is None or len(stored) != len(args):
            return None
        layouts, parts = found
        for layout, part, old in zip(layouts, parts, stored, strict=True):
            if layout is None:
                if not isinstance(old, _ScalarKey) or old != part:
                    return None
            elif not (
                isinstance(old, _TensorKey) and old.layout() is layout and old.tile_shape == part
            ):
                return None
        owners = tuple(layout.owner for layout in layouts if layout is not None)
        return replace(plan, results=args, keep_alive=owners)

    def store(self, args: tuple[object, ...], plan: LaunchPlan) -> None:
        """Remember `plan` for `args` (nothing is remembered for foreign arguments)."""
        found = _key(args)
        if found is None:
            self._key = self._plan = None
            return
        layouts, parts = found
        self._key = tuple(
            part if layout is None else _TensorKey(weakref.ref(layout), part)  # type: ignore[arg-type]
            for layout, part in zip(layouts, parts, strict=True)
        )
        self._plan = replace(plan, results=(), keep_alive=())
