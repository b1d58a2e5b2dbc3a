"""Raw pointers (`parser.prelude.pointers`): pointer tiles, offsets, reshapes, conversions,
and `load_ptr_tko` / `store_ptr_tko` with cuTile Rust's arguments: accepted in safe code
(a CT0302 warning marks the access) and in `unsafe` code (no warning)."""

from __future__ import annotations

import pytest

from parser import codes
from parser.diagnostics import Severity
from parser.types import TOKEN, Elem, PointerTileTy, PointerTy, TileTy, TupleTy
from tests.parser.prelude_support import compile_body, lets, the_error

SIG = "y: *mut f32, x: *const f32, n: i32"
IDX = "let idx: Tile<i32, { [64] }> = iota(const_shape![64]);"
UNSAFE = {"sig": SIG, "prelude": IDX, "qualifier": "unsafe "}
# a safe entry with an output, making pointers with `int_to_ptr`, as cuTile Rust's tests do
SAFE = {
    "sig": "z: &mut Tensor<f32, { [64] }>",
    "prelude": "let seed: Tile<i64, { [64] }> = constant(0i64, const_shape![64]);\n"
    "let ints: PointerTile<*mut i64, { [64] }> = int_to_ptr(seed);\n"
    "let p: PointerTile<*mut f32, { [64] }> = ptr_to_ptr(ints);",
}


P64 = "pointer_to_tile(x).offset_tile(idx)"


def load(ptrs: str, rest: str = "None, None, None") -> str:
    return f"load_ptr_tko({ptrs}, ordering::Weak, None::<scope::TileBlock>, {rest}, Latency::<0>)"


def store(ptrs: str, values: str, rest: str = "None, None") -> str:
    return (
        f"store_ptr_tko({ptrs}, {values}, ordering::Weak, None::<scope::TileBlock>, {rest}, "
        "Latency::<0>)"
    )


def test_pointer_tiles_offsets_and_reshapes_have_their_shapes() -> None:
    types = lets(
        "let base = pointer_to_tile(y);\n"
        "let ptrs = base.offset_tile(idx);\n"
        "let moved = ptrs.offset(n);\n"
        "let wide = base.broadcast(const_shape![64]);\n"
        "let one: PointerTile<*mut f32, { [1] }> = base.reshape(const_shape![1]);\n"
        "let grid = ptrs.reshape(const_shape![8, 8]);\n"
        "let back = tile_to_pointer(pointer_to_tile(x));",
        **UNSAFE,
    )
    assert types["base"] == PointerTileTy(Elem.F32, ())
    assert types["ptrs"] == types["moved"] == types["wide"] == PointerTileTy(Elem.F32, (64,))
    assert types["one"] == PointerTileTy(Elem.F32, (1,))
    assert types["grid"] == PointerTileTy(Elem.F32, (8, 8))
    assert types["back"] == PointerTy(Elem.F32, mutable=False)


def test_conversions_take_the_pointee_from_the_context_or_the_turbofish() -> None:
    types = lets(
        "let q = ptr_to_ptr::<i64, i32, _>(ints);\nlet addresses = ptr_to_int(p);",
        **SAFE,
    )
    assert types["ints"] == PointerTileTy(Elem.I64, (64,))
    assert types["p"] == PointerTileTy(Elem.F32, (64,))
    assert types["q"] == PointerTileTy(Elem.I32, (64,))
    assert types["addresses"] == TileTy(Elem.I64, (64,))


def test_raw_accesses_return_tokens_and_take_optional_operands() -> None:
    types = lets(
        "let inside = lt_tile(idx, n.broadcast(const_shape![64]));\n"
        "let tok = new_token_unordered();\n"
        f"let (v, t) = {load(P64, 'Some(inside), Some(0.0f32), Some(tok)')};\n"
        "let ys = pointer_to_tile(y).offset_tile(idx);\n"
        "let s = store_ptr_tko(ys, v, ordering::Release, Some(scope::Device), Some(inside), "
        "Some(t), Latency::<4>);\n"
        "let mask: Option<Tile<bool, { [64] }>> = None;\n"
        "let no_scope: Option<scope::System> = None;\n"
        f"let w = {store('ys', 'v', 'mask, None')};\n"
        "let r = load_ptr_tko(ys, ordering::Weak, no_scope, mask, None, None, Latency::<0>);",
        **UNSAFE,
    )
    assert types["v"] == TileTy(Elem.F32, (64,))
    assert types["t"] == types["s"] == types["w"] == TOKEN
    assert types["r"] == TupleTy((TileTy(Elem.F32, (64,)), TOKEN))


def test_raw_accesses_in_safe_code_compile_with_a_warning() -> None:
    result = compile_body(f"let (v, _t) = {load('p')};\nz.store(v);", **SAFE)
    assert result.ok, [d.message for d in result.diagnostics]
    (warning,) = [d for d in result.diagnostics if d.code is codes.RAW_MEMORY_ACCESS]
    assert warning.severity is Severity.WARNING
    assert warning.message == "`load_ptr_tko` accesses memory that no bounds check covers"
    assert warning.primary_span.text.startswith("load_ptr_tko(")  # type: ignore[union-attr]


def test_raw_accesses_in_unsafe_code_do_not_warn() -> None:
    body = f"let (v, _t) = unsafe {{ {load('p')} }};\nz.store(v);"
    result = compile_body(body, **SAFE)
    assert result.ok and not result.diagnostics, [d.message for d in result.diagnostics]
    inside = compile_body(f"let (v, t) = {load('pointer_to_tile(x).offset_tile(idx)')};", **UNSAFE)
    assert inside.ok and not inside.diagnostics


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
            "let t = pointer_to_tile(y).offset_tile(idx).reshape(const_shape![32]);",
            codes.MISMATCHED_TYPES,
            "cannot reshape `PointerTile<*mut f32, {[64]}>` (64 elements) to shape [32] "
            "(32 elements)",
        ),
        (
            "let t = int_to_ptr(idx);",
            codes.MISMATCHED_TYPES,
            "mismatched types: `int_to_ptr` converts `i64` addresses, found `Tile<i32, {[64]}>`",
        ),
        (
            "let t = ptr_to_ptr(pointer_to_tile(y));",
            codes.TYPE_ANNOTATION_NEEDED,
            "type annotations needed for `ptr_to_ptr`: cannot infer the pointee type",
        ),
        (
            f"let v = {load('y')};",
            codes.MISMATCHED_TYPES,
            "mismatched types: `load_ptr_tko` expects a `PointerTile<*mut E, S>`, found `*mut f32`",
        ),
        (
            f"let v = load_ptr_tko({P64}, ordering::Release, None::<scope::TileBlock>, None, "
            "None, None, Latency::<0>);",
            codes.UNSUPPORTED_TYPE,
            "`load_ptr_tko` does not support `ordering::Release` (loads take `ordering::Weak`, "
            "`Relaxed` or `Acquire`)",
        ),
        (
            f"let v = load_ptr_tko({P64}, ordering::Acquire, None::<scope::TileBlock>, None, "
            "None, None, Latency::<0>);",
            codes.MISMATCHED_TYPES,
            "`load_ptr_tko` with `ordering::Acquire` needs a memory scope",
        ),
        (
            f"let v = load_ptr_tko({P64}, ordering::Weak, Some(n), None, None, None, "
            "Latency::<0>);",
            codes.MISMATCHED_TYPES,
            "mismatched types: the scope of `load_ptr_tko` is an `Option<scope::Mode>`, found "
            "`Option<i32>`",
        ),
        (
            f"let v = {load(P64, 'Some(idx), None, None')};",
            codes.MISMATCHED_TYPES,
            "mismatched types: the mask of `load_ptr_tko` must be `Tile<bool, {[64]}>`, "
            "found `Tile<i32, {[64]}>`",
        ),
        (
            f"let v = {load(P64, 'None, 0.0f32, None')};",
            codes.MISMATCHED_TYPES,
            "mismatched types: the padding of `load_ptr_tko` is an `Option<f32>`, found `f32`",
        ),
        (
            f"let v = {load(P64, 'None, Some(0.0f32), None')};",
            codes.MISMATCHED_TYPES,
            "`load_ptr_tko`: a padding value needs a mask",
        ),
        (
            f"let v = load_ptr_tko({P64}, ordering::Weak, None::<scope::TileBlock>, None, None, "
            "None, 3i32);",
            codes.MISMATCHED_TYPES,
            "mismatched types: the latency of `load_ptr_tko` is a `Latency::<N>`, found `i32`",
        ),
        (
            f"let v = load_ptr_tko({P64}, ordering::Weak, None::<scope::TileBlock>, None, None, "
            "None, Latency::<11>);",
            codes.GENERIC_ARGUMENT,
            "the latency hint must be in 0..=10, found 11",
        ),
        (
            f"let v = {store(P64, 'constant(1.0f32, const_shape![64])')};",
            codes.MUTATE_SHARED,
            "cannot write through `PointerTile<*const f32, {[64]}>` with `store_ptr_tko`: it "
            "points to `const` data",
        ),
        (
            f"let v = {store('pointer_to_tile(y).offset_tile(idx)', 'idx')};",
            codes.MISMATCHED_TYPES,
            "mismatched types: `store_ptr_tko` needs a `Tile<f32, {[64]}>` for "
            "`PointerTile<*mut f32, {[64]}>`, found `Tile<i32, {[64]}>`",
        ),
    ],
)
def test_pointer_misuse_is_reported(body: str, code: object, message: str) -> None:
    diagnostic = the_error(body, **UNSAFE)
    assert diagnostic.code is code
    assert diagnostic.message == message
