"""Raw pointers (`parser.prelude.pointers`): pointer tiles, offsets, and the unsafe
`load_ptr_tko` / `store_ptr_tko`."""

from __future__ import annotations

import pytest

from parser import codes
from parser.types import Elem, PointerTileTy, PointerTy, TileTy
from tests.parser.prelude_support import lets, the_error

SIG = "y: *mut f32, x: *const f32, n: i32"
IDX = "let idx: Tile<i32, { [64] }> = iota(const_shape![64]);"
UNSAFE = {"sig": SIG, "prelude": IDX, "qualifier": "unsafe "}


def test_pointer_tiles_and_offsets_have_the_offsets_shape() -> None:
    types = lets(
        "let base = pointer_to_tile(y);\n"
        "let ptrs = base.offset_tile(idx);\n"
        "let moved = ptrs.offset(n);\n"
        "let wide = base.broadcast(const_shape![64]);\n"
        "let back = tile_to_pointer(pointer_to_tile(x));",
        **UNSAFE,
    )
    assert types["base"] == PointerTileTy(Elem.F32, ())
    assert types["ptrs"] == PointerTileTy(Elem.F32, (64,))
    assert types["moved"] == PointerTileTy(Elem.F32, (64,))
    assert types["wide"] == PointerTileTy(Elem.F32, (64,))
    assert types["back"] == PointerTy(Elem.F32, mutable=False)


def test_raw_loads_and_stores_inside_an_unsafe_fn() -> None:
    types = lets(
        "let inside = lt_tile(idx, n.broadcast(const_shape![64]));\n"
        "let v = load_ptr_tko(pointer_to_tile(x).offset_tile(idx), ordering::Weak, "
        "Some(inside), Some(0.0f32));\n"
        "let w = load_ptr_tko(pointer_to_tile(x).offset_tile(idx), ordering::Weak, None, None);\n"
        "store_ptr_tko(pointer_to_tile(y).offset_tile(idx), v + w, ordering::Weak, Some(inside));"
        "\nstore_ptr_tko(pointer_to_tile(y).offset_tile(idx), v, ordering::Weak, None);",
        **UNSAFE,
    )
    assert types["v"] == TileTy(Elem.F32, (64,)) == types["w"]


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            "let t = pointer_to_tile(n);",
            codes.MISMATCHED_TYPES,
            "mismatched types: `pointer_to_tile` expects a raw pointer, found `i32`",
        ),
        (
            "let short: Tile<i32, { [32] }> = iota(const_shape![32]);\n"
            "let t = pointer_to_tile(y).offset_tile(idx).offset_tile(short);",
            codes.MISMATCHED_TYPES,
            "`offset_tile`: the pointer tile has shape [64], the offsets [32]",
        ),
        (
            "let f: Tile<f32, { [64] }> = constant(1.0f32, const_shape![64]);\n"
            "let t = pointer_to_tile(y).offset_tile(f);",
            codes.MISMATCHED_TYPES,
            "mismatched types: `offset_tile` expects a `Tile<i32, S>`, found `Tile<f32, {[64]}>`",
        ),
        (
            "let v = load_ptr_tko(y, ordering::Weak, None, None);",
            codes.MISMATCHED_TYPES,
            "mismatched types: `load_ptr_tko` expects a `PointerTile<*mut E, S>`, found `*mut f32`",
        ),
        (
            "let v = load_ptr_tko(pointer_to_tile(x).offset_tile(idx), ordering::Acquire, "
            "None, None);",
            codes.UNSUPPORTED_TYPE,
            "`load_ptr_tko` does not support `ordering::Acquire` (raw-pointer accesses are "
            "`ordering::Weak`: ordered within this tile block)",
        ),
        (
            "let v = load_ptr_tko(pointer_to_tile(x).offset_tile(idx), ordering::Weak, "
            "Some(idx), None);",
            codes.MISMATCHED_TYPES,
            "mismatched types: the mask of `load_ptr_tko` must be `Tile<bool, {[64]}>`, "
            "found `Tile<i32, {[64]}>`",
        ),
        (
            "let v = load_ptr_tko(pointer_to_tile(x).offset_tile(idx), ordering::Weak, "
            "None, 0.0f32);",
            codes.MISMATCHED_TYPES,
            "mismatched types: the padding of `load_ptr_tko` is an `Option<f32>`",
        ),
        (
            "let v = load_ptr_tko(pointer_to_tile(x).offset_tile(idx), ordering::Weak, "
            "None, Some(0.0f32));",
            codes.MISMATCHED_TYPES,
            "`load_ptr_tko`: a padding value needs a mask",
        ),
        (
            "store_ptr_tko(pointer_to_tile(x).offset_tile(idx), "
            "constant(1.0f32, const_shape![64]), ordering::Weak, None);",
            codes.MUTATE_SHARED,
            "cannot store through `PointerTile<*const f32, {[64]}>`: it points to `const` data",
        ),
        (
            "store_ptr_tko(pointer_to_tile(y).offset_tile(idx), idx, ordering::Weak, None);",
            codes.MISMATCHED_TYPES,
            "mismatched types: `store_ptr_tko` stores a `Tile<f32, {[64]}>` through "
            "`PointerTile<*mut f32, {[64]}>`, found `Tile<i32, {[64]}>`",
        ),
    ],
)
def test_pointer_misuse_is_reported(body: str, code: object, message: str) -> None:
    diagnostic = the_error(body, **UNSAFE)
    assert diagnostic.code is code
    assert diagnostic.message == message
