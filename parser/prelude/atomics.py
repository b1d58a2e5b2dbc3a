"""Atomics and module globals: `atomic_rmw_tko`, `atomic_cas_tko` through a tile of
pointers, `atomic_red_view_tko` into a `PartitionMut`, and the methods of a `static`
`Global<E, {[]}>`: `G.load(ordering, scope)`, `G.store(v, ordering, scope)`,
`G.atomic_add(v, ordering, scope)`.

Safety, per function: `atomic_rmw_tko` / `atomic_cas_tko` write through raw pointers no
bounds check covers; cuTile Rust calls them in safe code, so they are `raw_access` (a
warning outside `unsafe`, the kernel's contract marked unchecked). `atomic_red_view_tko`
is an `unsafe fn` in cuTile Rust (`cutile::tileir`) and here. A `Global`'s methods are
safe: the global is one scalar, always in bounds, and its ordered accesses do not race
(a weak one may: lowering marks such a kernel unchecked).
"""

from __future__ import annotations

from parser import messages
from parser.prelude.common import marker_arg
from parser.prelude.pointers import LOAD_ORDERINGS, STORE_ORDERINGS, values_arg, writable
from parser.prelude.spec import CallTyper, Intrinsic, Receiver
from parser.prelude.tensors import index_arg, partition_arg
from parser.prelude.tokens import option_of
from parser.types import (
    MARKER_KINDS,
    TOKEN,
    Elem,
    GlobalTy,
    PointerTileTy,
    SemType,
    TileTy,
    TupleTy,
)

ATOMIC_ORDERINGS = ("Relaxed", "Acquire", "Release", "AcqRel")  # `ordering::AtomicMode`
_ATOMIC_WHY = " (atomics take `ordering::Relaxed`, `Acquire`, `Release` or `AcqRel`)"
FLOAT_MODES = ("AddF", "Xchg")
INT_MODES = tuple(m for m in MARKER_KINDS["atomic"] if m != "AddF")


def _pointers(call: CallTyper, fn: str) -> PointerTileTy | None:
    ty = call.arg(0)
    if ty is None or isinstance(ty, PointerTileTy):
        return ty
    call.report(messages.NOT_A_POINTER_TILE.at(call.args[0].span, fn=fn, found=ty))
    return None


def atomic_mode(call: CallTyper, index: int, elem: Elem, fn: str) -> str | None:
    """`atomic::X`: floats have `AddF` and `Xchg`, integers every mode but `AddF`."""
    if elem.is_float:
        why = f" on `{elem}` (float atomics are `atomic::AddF` and `atomic::Xchg`)"
        return marker_arg(call, index, "atomic", fn, FLOAT_MODES, why)
    why = f" on `{elem}` (`atomic::AddF` is for floats; use `atomic::Add`)"
    return marker_arg(call, index, "atomic", fn, INT_MODES, why)


def _ordering_and_scope(call: CallTyper, index: int, fn: str) -> bool:
    ordering = marker_arg(call, index, "ordering", fn, ATOMIC_ORDERINGS, _ATOMIC_WHY)
    return ordering is not None and marker_arg(call, index + 1, "scope", fn) is not None


def _masked_tail(call: CallTyper, index: int, ptrs: PointerTileTy, fn: str) -> bool:
    """`mask: Option<Tile<bool, S>>, token: Option<Token>` at `index`, `index + 1`."""
    mask = option_of(call, index, fn, "mask", TileTy(Elem.BOOL, ptrs.shape))
    token = option_of(call, index + 1, fn, "token", TOKEN)
    return mask is not None and token is not None


def _atomic_rmw_tko(call: CallTyper) -> SemType | None:
    fn = "atomic_rmw_tko"
    ptrs = _pointers(call, fn)
    if ptrs is None or not values_arg(call, 1, ptrs, fn):
        return None
    if atomic_mode(call, 2, ptrs.elem, fn) is None or not _ordering_and_scope(call, 3, fn):
        return None
    if not _masked_tail(call, 5, ptrs, fn) or not writable(call, ptrs, fn):
        return None
    return TupleTy((TileTy(ptrs.elem, ptrs.shape), TOKEN))


def _atomic_cas_tko(call: CallTyper) -> SemType | None:
    fn = "atomic_cas_tko"
    ptrs = _pointers(call, fn)
    if ptrs is None or not (values_arg(call, 1, ptrs, fn) and values_arg(call, 2, ptrs, fn)):
        return None
    if not _ordering_and_scope(call, 3, fn) or not _masked_tail(call, 5, ptrs, fn):
        return None
    if not writable(call, ptrs, fn):
        return None
    return TupleTy((TileTy(ptrs.elem, ptrs.shape), TOKEN))


def _atomic_red_view_tko(call: CallTyper) -> SemType | None:
    fn = "atomic_red_view_tko"
    part = partition_arg(call, 0)
    if part is None:
        return None
    if not part.mutable:
        call.report(messages.REDUCE_INTO_READ_ONLY.at(call.args[0].span, fn=fn, found=part))
        return None
    expected = TileTy(part.elem, part.tile)
    tile = call.arg(1, expected)
    if tile is not None and tile != expected:
        call.report(
            messages.REDUCED_TILE_MISMATCH.at(
                call.args[1].span, fn=fn, expected=expected, found=tile
            )
        )
        return None
    if tile is None or not index_arg(call, 2, part.rank):
        return None
    if atomic_mode(call, 3, part.elem, fn) is None:
        return None
    why = " (`atomic_red_view_tko` is `ordering::Relaxed`)"
    if marker_arg(call, 4, "ordering", fn, ("Relaxed",), why) is None:
        return None
    scope_why = " (the reduction is visible to this tile block or the device)"
    scope = marker_arg(call, 5, "scope", fn, ("TileBlock", "Device"), scope_why)
    return None if scope is None else TOKEN


def _global(call: CallTyper) -> GlobalTy:
    ty = call.arg(0)
    assert isinstance(ty, GlobalTy)
    return ty


def _scalar_value(call: CallTyper, index: int, glob: GlobalTy, fn: str) -> bool:
    expected = TileTy(glob.elem, ())
    ty = call.arg(index, expected)
    if ty is None or ty == expected:
        return ty is not None
    call.report(
        messages.GLOBAL_VALUE_MISMATCH.at(
            call.args[index].span, fn=fn, glob=glob, expected=expected, found=ty
        )
    )
    return False


def _global_load(call: CallTyper) -> SemType | None:
    glob = _global(call)
    why = " (loads take `ordering::Weak`, `Relaxed` or `Acquire`)"
    ordering = marker_arg(call, 1, "ordering", "load", LOAD_ORDERINGS, why)
    if ordering is None or marker_arg(call, 2, "scope", "load") is None:
        return None
    return TupleTy((TileTy(glob.elem, ()), TOKEN))


def _global_store(call: CallTyper) -> SemType | None:
    glob = _global(call)
    if not _scalar_value(call, 1, glob, "store"):
        return None
    why = " (stores take `ordering::Weak`, `Relaxed` or `Release`)"
    ordering = marker_arg(call, 2, "ordering", "store", STORE_ORDERINGS, why)
    if ordering is None or marker_arg(call, 3, "scope", "store") is None:
        return None
    return TOKEN


def _global_atomic_add(call: CallTyper) -> SemType | None:
    glob = _global(call)
    if glob.elem is Elem.BOOL:
        call.report(messages.ATOMIC_ADD_ON_BOOL.at(call.args[0].span, found=glob))
        return None
    if not _scalar_value(call, 1, glob, "atomic_add") or not _ordering_and_scope(
        call, 2, "atomic_add"
    ):
        return None
    return TupleTy((TileTy(glob.elem, ()), TOKEN))


ATOMIC_INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic(
        "atomic_rmw_tko",
        "fn atomic_rmw_tko<E, S>(pointers: PointerTile<*mut E, S>, arg: Tile<E, S>, "
        "mode: M, ordering: O, scope: Sc, mask: Option<Tile<bool, S>>, "
        "token: Option<Token>) -> (Tile<E, S>, Token)",
        (7,),
        _atomic_rmw_tko,
        functions=("atomic_rmw_tko",),
        raw_access=True,
    ),
    Intrinsic(
        "atomic_cas_tko",
        "fn atomic_cas_tko<E, S>(pointers: PointerTile<*mut E, S>, cmp: Tile<E, S>, "
        "val: Tile<E, S>, ordering: O, scope: Sc, mask: Option<Tile<bool, S>>, "
        "token: Option<Token>) -> (Tile<E, S>, Token)",
        (7,),
        _atomic_cas_tko,
        functions=("atomic_cas_tko",),
        raw_access=True,
    ),
    Intrinsic(
        "atomic_red_view_tko",
        "unsafe fn atomic_red_view_tko<E, R>(view: &mut PartitionMut<E, R>, value: Tile<E, R>, "
        "index: [i32; N], mode: M, ordering: ordering::Relaxed, scope: Sc) -> Token",
        (6,),
        _atomic_red_view_tko,
        functions=("atomic_red_view_tko",),
        unsafe=True,
    ),
    Intrinsic(
        "global_load",
        "fn load<E>(&self: &Global<E, {[]}>, ordering: O, scope: Sc) -> (Tile<E, {[]}>, Token)",
        (3,),
        _global_load,
        methods=("load",),
        receiver=Receiver.GLOBAL,
    ),
    Intrinsic(
        "global_store",
        "fn store<E>(&self: &Global<E, {[]}>, value: Tile<E, {[]}>, ordering: O, scope: Sc) "
        "-> Token",
        (4,),
        _global_store,
        methods=("store",),
        receiver=Receiver.GLOBAL,
    ),
    Intrinsic(
        "global_atomic_add",
        "fn atomic_add<E>(&self: &Global<E, {[]}>, value: Tile<E, {[]}>, ordering: O, "
        "scope: Sc) -> (Tile<E, {[]}>, Token)",
        (4,),
        _global_atomic_add,
        methods=("atomic_add",),
        receiver=Receiver.GLOBAL,
    ),
)
