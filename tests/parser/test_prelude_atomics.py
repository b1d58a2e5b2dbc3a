"""Atomics and module globals (`parser.prelude.atomics`, `parser.statics`): the pointer
atomics' modes and orderings per element type, `atomic_red_view_tko` (unsafe), and
`static NAME: Global<E, {[]}>` items with their `load` / `store` / `atomic_add`."""

from __future__ import annotations

import pytest

from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser import codes
from parser.spans import SourceFile
from parser.types import TOKEN, Elem, TileTy
from tests.parser.prelude_support import compile_body, lets, the_error

POINTERS = {
    "sig": "z: &mut Tensor<f32, { [64] }>",
    "prelude": "let seed: Tile<i64, { [64] }> = constant(0i64, const_shape![64]);\n"
    "let ip: PointerTile<*mut i64, { [64] }> = int_to_ptr(seed);\n"
    "let fp: PointerTile<*mut f32, { [64] }> = ptr_to_ptr(ip);\n"
    "let ones: Tile<f32, { [64] }> = constant(1.0f32, const_shape![64]);\n"
    "let big: Tile<i64, { [64] }> = constant(7i64, const_shape![64]);",
}


def rmw(
    ptrs: str, values: str, mode: str, ordering: str = "Relaxed", tail: str = "None, None"
) -> str:
    return (
        f"atomic_rmw_tko({ptrs}, {values}, atomic::{mode}, ordering::{ordering}, scope::Device, "
        f"{tail})"
    )


def test_atomics_return_the_old_values_and_a_token() -> None:
    mask = "let m: Tile<bool, { [64] }> = constant(true, const_shape![64]);"
    types = lets(
        f"{mask}\nlet tok = new_token_unordered();\n"
        f"let (old, t) = {rmw('fp', 'ones', 'AddF')};\n"
        f"let (swapped, u) = {rmw('fp', 'ones', 'Xchg', 'AcqRel', 'Some(m), Some(t)')};\n"
        f"let (ored, _v) = {rmw('ip', 'big', 'Or', 'Release')};\n"
        "let (was, w) = atomic_cas_tko(ip, big, big, ordering::Acquire, scope::System, "
        "Some(m), Some(tok));",
        **POINTERS,
    )
    assert types["old"] == types["swapped"] == TileTy(Elem.F32, (64,))
    assert types["ored"] == types["was"] == TileTy(Elem.I64, (64,))
    assert types["t"] == types["u"] == types["w"] == TOKEN


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            f"let r = {rmw('fp', 'ones', 'Max')};",
            codes.UNSUPPORTED_TYPE,
            "`atomic_rmw_tko` does not support `atomic::Max` on `f32` (float atomics are "
            "`atomic::AddF` and `atomic::Xchg`)",
        ),
        (
            f"let r = {rmw('ip', 'big', 'AddF')};",
            codes.UNSUPPORTED_TYPE,
            "`atomic_rmw_tko` does not support `atomic::AddF` on `i64` (`atomic::AddF` is for "
            "floats; use `atomic::Add`)",
        ),
        (
            f"let r = {rmw('ip', 'big', 'Add', 'Weak')};",
            codes.UNSUPPORTED_TYPE,
            "`atomic_rmw_tko` does not support `ordering::Weak` (atomics take "
            "`ordering::Relaxed`, `Acquire`, `Release` or `AcqRel`)",
        ),
        (
            f"let r = {rmw('ip', 'ones', 'Add')};",
            codes.MISMATCHED_TYPES,
            "mismatched types: `atomic_rmw_tko` needs a `Tile<i64, {[64]}>` for "
            "`PointerTile<*mut i64, {[64]}>`, found `Tile<f32, {[64]}>`",
        ),
        (
            "let r = atomic_cas_tko(ip, big, big, ordering::Relaxed, scope::Device, Some(big), "
            "None);",
            codes.MISMATCHED_TYPES,
            "mismatched types: the mask of `atomic_cas_tko` must be `Tile<bool, {[64]}>`, found "
            "`Tile<i64, {[64]}>`",
        ),
    ],
)
def test_atomic_misuse_is_reported(body: str, code: object, message: str) -> None:
    diagnostic = the_error(body, **POINTERS)
    assert diagnostic.code is code
    assert diagnostic.message == message


def test_atomic_red_view_tko_is_unsafe_and_takes_a_partition_mut() -> None:
    body = (
        "let mut whole = unsafe { z.partition_full_mut(const_shape![4, 64]) };\n"
        "let tok = OPENatomic_red_view_tko(&mut whole, t, [0i32, 0i32], atomic::AddF, "
        "ordering::Relaxed, scope::Device)CLOSE;"
    )
    marked = body.replace("OPEN", "unsafe { ").replace("CLOSE", " }")
    assert lets(marked)["tok"] == TOKEN
    unmarked = compile_body(body.replace("OPEN", "").replace("CLOSE", ""))
    (error,) = [d for d in unmarked.diagnostics if d.is_error]
    assert error.code is codes.UNSAFE_REQUIRED
    relaxed_only = the_error(marked.replace("Relaxed", "AcqRel"))
    assert relaxed_only.message == (
        "`atomic_red_view_tko` does not support `ordering::AcqRel` (`atomic_red_view_tko` is "
        "`ordering::Relaxed`)"
    )


# ----------------------------------------------------------------------------- globals

GLOBALS = """
#[cutile::module]
mod g {
    use cutile::core::*;
    const START: i32 = 7;
    static COUNTER: Global<i32, { [] }> = Global::new(START);
    static SUM: Global<f32, { [] }> = Global::new(0.5f32);
    STATIC_ITEM

    #[cutile::entry()]
    fn f(out: &mut Tensor<i32, { [1] }>) {
        BODY
    }
}
"""


def compile_globals(body: str, item: str = "", stage: Stage = Stage.CHECK):  # type: ignore[no-untyped-def]
    text = GLOBALS.replace("BODY", body).replace("STATIC_ITEM", item)
    return compile_kernel(CompileRequest((SourceFile("g.rs", text),), "f"), stop_after=stage)


def test_global_methods_are_ordered_scalar_accesses() -> None:
    result = compile_globals(
        "let (v, t) = COUNTER.load(ordering::Acquire, scope::Device);\n"
        "let s: Token = COUNTER.store(v + v, ordering::Release, scope::System);\n"
        "let (old, u) = SUM.atomic_add(constant(1.0f32, const_shape![]), ordering::AcqRel, "
        "scope::Device);\n"
        "out.store(v.reshape(const_shape![1]));"
    )
    assert result.ok, [d.message for d in result.diagnostics]
    kernel = result.kernel
    types = {v.name: v.type for vs in kernel.lets.values() for v in vs}  # type: ignore[union-attr]
    assert types["v"] == TileTy(Elem.I32, ()) and types["old"] == TileTy(Elem.F32, ())
    assert types["t"] == types["s"] == types["u"] == TOKEN


@pytest.mark.parametrize(
    ("item", "code", "message", "culprit"),
    [
        (
            "static BAD: i32 = 0;",
            codes.UNSUPPORTED_TYPE,
            "only `static NAME: Global<E, { [] }>` items are supported; `static BAD: i32` is "
            "not one",
            "i32",
        ),
        (
            "static SHAPED: Global<f32, { [4] }> = Global::new(0.0f32);",
            codes.UNSUPPORTED_TYPE,
            "only `static NAME: Global<E, { [] }>` items are supported; `static SHAPED: "
            "Global<f32, { [4] }>` is not one",
            "Global<f32, { [4] }>",
        ),
        (
            "static mut M: Global<i32, { [] }> = Global::new(0);",
            codes.UNSUPPORTED_SYNTAX,
            "`static mut M` is not supported",
            "static mut M: Global<i32, { [] }> = Global::new(0);",
        ),
        (
            "static F: Global<i32, { [] }> = Global::new(1.5f32);",
            codes.MISMATCHED_TYPES,
            "the initializer of `F` must be `Global::new(v)` with `v` a `i32` literal or "
            "module `const`",
            "Global::new(1.5f32)",
        ),
    ],
)
def test_other_statics_are_rejected_even_unused(
    item: str, code: object, message: str, culprit: str
) -> None:
    result = compile_globals("out.store(constant(1i32, const_shape![1]));", item)
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert (error.code, error.message) == (code, message)
    assert error.primary_span.text == culprit  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "let (v, t) = COUNTER.load(ordering::Release, scope::Device);",
            "`load` does not support `ordering::Release` (loads take `ordering::Weak`, "
            "`Relaxed` or `Acquire`)",
        ),
        (
            "let t = COUNTER.store(constant(1.0f32, const_shape![]), ordering::Release, "
            "scope::Device);",
            "mismatched types: `store` of `Global<i32, {[]}>` takes a `Tile<i32, {[]}>`, found "
            "`Tile<f32, {[]}>`",
        ),
    ],
)
def test_global_misuse_is_reported(body: str, message: str) -> None:
    result = compile_globals(body)
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert error.message == message
