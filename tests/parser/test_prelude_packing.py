"""Typing of byte packing (`parser.prelude.packing`): `pack` / `unpack` on rank-1 tiles and
the shaped `.pack(shape)` / `.unpack(shape)` of packed fp4 storage."""

from __future__ import annotations

import pytest

from parser import codes
from parser.types import Elem, TileTy
from tests.parser.prelude_support import lets, primary_text, the_error

SIG = (
    "z: &mut Tensor<i32, { [16] }>, w: &Tensor<i32, { [-1] }>, p: &Tensor<f4e2m1fnx2, { [-1, -1] }>"
)
PRELUDE = (
    "let words: Tile<i32, { [16] }> = load_tile_like(w, z);\n"
    "let q: Tile<f4e2m1fnx2, { [16, 32] }> = p.partition(const_shape![16, 32]).load([0, 0]);"
)


def _lets(body: str) -> dict:
    return lets(body, sig=SIG, prelude=PRELUDE, arch="sm_100")


def _error(body: str):
    return the_error(body, sig=SIG, prelude=PRELUDE, arch="sm_100")


def test_pack_and_unpack_keep_the_bits() -> None:
    types = _lets(
        """
        let bytes: Tile<u8, { [64] }> = pack(words);
        let nibbles: Tile<i4, { [128] }> = unpack(bytes);
        let repacked = pack::<i4, u8>(nibbles);
        let halves = unpack::<f16, u8>(bytes);
        let fp4: Tile<f4e2m1fn, { [128] }> = unpack(bytes);
        let stored: Tile<f4e2m1fnx2, { [64] }> = pack(fp4);
        """
    )
    assert types["bytes"] == types["repacked"] == TileTy(Elem.U8, (64,))
    assert types["nibbles"] == TileTy(Elem.I4, (128,))
    assert types["halves"] == TileTy(Elem.F16, (32,))
    assert types["stored"] == TileTy(Elem.F4E2M1FNX2, (64,))


def test_shaped_fp4_methods() -> None:
    types = _lets(
        """
        let f = q.unpack(const_shape![16, 64]);
        let g = f.pack(const_shape![16, 32]);
        let flat = q.unpack(const_shape![1024]);
        """
    )
    assert types["f"] == TileTy(Elem.F4E2M1FN, (16, 64))
    assert types["g"] == TileTy(Elem.F4E2M1FNX2, (16, 32))
    assert types["flat"] == TileTy(Elem.F4E2M1FN, (1024,))


@pytest.mark.parametrize(
    ("body", "code", "message", "primary"),
    [
        (
            "let b: Tile<u8, { [32] }> = pack(q);",
            codes.MISMATCHED_TYPES,
            "`pack` needs a rank-1 tile",
            "q",
        ),
        (
            "let b: Tile<i32, { [16] }> = pack(words);",
            codes.UNSUPPORTED_TYPE,
            "`pack` produces bytes, not `i32`",
            "pack(words)",
        ),
        (
            "let b: Tile<u8, { [64] }> = pack(words);\nlet c: Tile<i8, { [64] }> = unpack(b);",
            codes.UNSUPPORTED_TYPE,
            "`unpack` into `i8` elements is a bitcast",
            "unpack(b)",
        ),
        (
            "let u: Tile<i32, { [4] }> = unpack(words);",
            codes.UNSUPPORTED_TYPE,
            "`unpack` reads bytes",
            "unpack(words)",
        ),
        (
            "let f = q.unpack(const_shape![16, 32]);",
            codes.MISMATCHED_TYPES,
            "holds 1024 values, but `Tile<f4e2m1fn, [16, 32]>` holds 512",
            "const_shape![16, 32]",
        ),
        (
            "let b: Tile<u8, { [64] }> = pack(words);\nlet f = b.unpack(const_shape![128]);",
            codes.UNSUPPORTED_TYPE,
            "`.unpack(shape)` is a method of `Tile<f4e2m1fnx2, _>`",
            "b",
        ),
        (
            "let b: Tile<u8, { [64] }> = pack(words);\nlet u = unpack(b);",
            codes.TYPE_ANNOTATION_NEEDED,
            "cannot infer the element type to unpack into",
            "unpack(b)",
        ),
    ],
)
def test_packing_rules(body: str, code: object, message: str, primary: str) -> None:
    error = _error(body)
    assert error.code is code
    assert message in error.message
    assert primary_text(error) == primary
