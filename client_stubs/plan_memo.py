"""Remember a kernel's last launch plans and reuse them when equal arguments come back.

Checks and packing are pure functions of the arguments' layout values (pointer, shape,
strides, dtype, device: `TensorLayout` minus its owner), partition tile shapes (and a
`MappedPartition`'s map and grid) and scalar values, so a launch whose arguments have the same
values as a remembered one (the typical loop, and a loop that wraps the same torch tensors in
new handles every step) can skip `plan_launch`. The contract's launch checks are functions of
the same inputs (every tensor's shape and the grid, from the outputs' shapes and tiles or a
`MappedPartition`'s num_tile_blocks), so a reused plan passed them; a plan is only stored
after `plan_launch` succeeded, so a failed check is re-evaluated (and fails) on every attempt.
A moved or consumed handle has no live layout and is never remembered or matched.

Keys hold values only, never a layout or its owner: the memo keeps no device memory alive.
The owners of a launch's memory ride along with its arguments (the caller tracks those until
the work completes). The launcher attaches its prepared kernelParams array to the entry
(`prepared`), so a hit launches without packing or allocating anything.

The memo keeps the last few plans (launches that alternate between argument sets, e.g. one
output per stream, all stay fast). The fast path (`hit`), for a loop that passes the very same
objects: the hash of the argument tuple (identity hashes: a few ns per argument, no tuple
built) finds an entry, no ownership move happened anywhere since (`Moves.count`), and the
arguments are the remembered objects themselves: one tuple comparison against weak proxies of
the tensor handles (a proxy whose handle died raises `ReferenceError`: a miss, so a reused id
can never match) and `_Same` wrappers of the scalars, which match only the very object (1,
1.0 and True, or 0.0 and -0.0, never share a plan). Anything else computes the arguments'
`value_key` and finds the entry stored under it, which rebinds the entry to the new objects.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import replace

from client_stubs.plan import LaunchPlan
from client_stubs.tensor import DeviceTensor, MappedPartition, Moves, Partition

_TENSOR_TYPES = (DeviceTensor, Partition, MappedPartition)


class _Same:
    """A remembered scalar argument that compares equal only to the very object it wraps."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return other is self.value

    __hash__ = None  # type: ignore[assignment]


class MemoEntry:
    """One remembered plan, filed under its arguments' `value_key` and bound to the objects
    it was last found for (`ident`: the hash of their tuple; `same`: what they compare equal
    to)."""

    __slots__ = ("ident", "key", "moves", "plan", "prepared", "same")

    def __init__(self, key: tuple[object, ...], plan: LaunchPlan) -> None:
        self.key = key
        self.plan = plan
        self.prepared: object = None
        self.ident = 0
        self.moves = -1
        self.same: tuple[object, ...] = ()

    def bind(self, args: tuple[object, ...]) -> None:
        """Remember these objects for the identity fast path."""
        self.same = tuple(
            weakref.proxy(a) if isinstance(a, _TENSOR_TYPES) else _Same(a) for a in args
        )
        self.ident = hash(args)
        self.moves = Moves.count

    def matches(self, args: tuple[object, ...]) -> bool:
        """Whether `args` are the very objects this entry is bound to, with nothing moved."""
        try:
            return self.moves == Moves.count and args == self.same
        except ReferenceError:  # a remembered handle died: these are other objects
            return False


class PlanMemo:
    """The last `size` plans of a kernel, by the hash of their argument objects (`entries`)
    and by their arguments' values (`by_value`, for new handles of equal layouts)."""

    def __init__(self, size: int = 32) -> None:
        self.size = size
        self.entries: dict[int, MemoEntry] = {}
        self.by_value: dict[tuple[object, ...], MemoEntry] = {}

    def hit(self, args: tuple[object, ...]) -> MemoEntry | None:
        """The entry bound to these very objects (the fast path; inlined in
        `Kernel.issue`), else None."""
        try:
            entry = self.entries.get(hash(args))
        except TypeError:  # an unhashable (foreign) argument: never remembered
            return None
        return entry if entry is not None and entry.matches(args) else None

    def find(self, args: tuple[object, ...]) -> MemoEntry | None:
        """The remembered entry for `args`: by object identity when nothing moved since,
        else the entry stored for equal values (which rebinds it to `args`)."""
        return self.hit(args) or self.rebound(args)

    def rebound(self, args: tuple[object, ...]) -> MemoEntry | None:
        """The entry stored for arguments of equal values, rebound to `args` (the launch
        path asks after its inlined `hit` missed), else None."""
        key = value_key(args)
        entry = None if key is None else self.by_value.get(key)
        if entry is not None:
            self._file(entry, args)
        return entry

    def lookup(self, args: tuple[object, ...]) -> LaunchPlan | None:
        """The remembered plan for `args` (with them as results and their owners), else None."""
        entry = self.find(args)
        if entry is None:
            return None
        return replace(entry.plan, results=args, keep_alive=owners(args))

    def store(self, args: tuple[object, ...], plan: LaunchPlan) -> MemoEntry | None:
        """Remember `plan` for `args` (nothing is remembered for foreign arguments)."""
        key = value_key(args)
        if key is None:
            return None
        entry = MemoEntry(key, replace(plan, results=(), keep_alive=()))
        old = self.by_value.get(key)
        if old is not None and self.entries.get(old.ident) is old:
            del self.entries[old.ident]
        self._file(entry, args)
        self.by_value[key] = entry
        return entry

    def _file(self, entry: MemoEntry, args: tuple[object, ...]) -> None:
        """(Re)bind `entry` to `args` and file it under their ids, dropping the oldest."""
        entries = self.entries
        if entries.get(entry.ident) is entry:
            del entries[entry.ident]
        entry.bind(args)
        entries.pop(entry.ident, None)  # an entry of other objects whose hash collides
        entries[entry.ident] = entry
        while len(entries) > self.size:
            oldest = entries.pop(next(iter(entries)))
            if self.by_value.get(oldest.key) is oldest:
                del self.by_value[oldest.key]


def value_key(args: tuple[object, ...]) -> tuple[object, ...] | None:
    """What a plan depends on, as values: each tensor's layout values and tiling, each
    scalar's type and value (and sign, which tells -0.0 from 0.0). None for foreign arguments
    or a moved handle, which are never remembered."""
    parts: list[object] = []
    for arg in args:
        if isinstance(arg, _TENSOR_TYPES):
            layout, tiles = arg.plan_key()
            if layout is None:
                return None
            parts.append((layout.values, tiles))
        elif type(arg) is float:
            parts.append((float, arg, math.copysign(1.0, arg)))
        elif type(arg) in (int, bool):
            parts.append((type(arg), arg))
        else:
            return None
    return tuple(parts)


def owners(args: tuple[object, ...]) -> tuple[object, ...]:
    """The owners of the memory behind `args`' tensors (kept alive with a launch)."""
    found = []
    for arg in args:
        if isinstance(arg, _TENSOR_TYPES):
            layout = arg.plan_key()[0]
            if layout is not None:
                found.append(layout.owner)
    return tuple(found)
