"""Lowering of byte packing (`parser.prelude.packing`), assembled by tileiras."""

from __future__ import annotations

import re

from lowering.tileiras import Tileiras
from tests.parser.prelude_support import assembled_ir

SIG = (
    "z: &mut Tensor<f4e2m1fnx2, { [16, 32] }>, x: &Tensor<f4e2m1fnx2, { [-1, -1] }>, "
    "w: &Tensor<i32, { [-1] }>, o: &mut Tensor<i32, { [16] }>"
)


def test_shaped_fp4_unpack_flattens_around_the_rank_1_op(tileiras: Tileiras) -> None:
    body = """
    let bytes: Tile<f4e2m1fnx2, { [16, 32] }> = load_tile_like(x, z);
    let values = bytes.unpack(const_shape![16, 64]);
    z.store(values.pack(const_shape![16, 32]));
    """
    ir = assembled_ir(body, tileiras, sig=SIG, prelude="", arch="sm_100")
    assert re.search(r"= reshape %\d+ : tile<512xi8>", ir)
    assert re.search(r"= unpack %\d+ : tile<1024xf4E2M1FN>", ir)
    assert re.search(r"= reshape %\d+ : tile<16x64xf4E2M1FN>", ir)
    assert re.search(r"= pack %\d+ : tile<512xi8>", ir)
    assert re.search(r"= reshape %\d+ : tile<16x32xi8>", ir)


def test_words_to_nibbles_and_back_on_hopper(tileiras: Tileiras) -> None:
    """i4 and the byte ops exist on every target; only fp4 needs Blackwell."""
    body = """
    let words: Tile<i32, { [16] }> = load_tile_like(w, o);
    let bytes: Tile<u8, { [64] }> = pack(words);
    let nibbles: Tile<i4, { [128] }> = unpack(bytes);
    let again: Tile<u8, { [64] }> = pack(nibbles);
    let back: Tile<i32, { [16] }> = unpack(again);
    o.store(back);
    """
    sig = "o: &mut Tensor<i32, { [16] }>, w: &Tensor<i32, { [-1] }>"
    ir = assembled_ir(body, tileiras, sig=sig, prelude="")
    assert re.search(r"= pack %\d+ : tile<64xi8>", ir)
    assert re.search(r"= unpack %\d+ : tile<128xi4>", ir)
    assert re.search(r"= unpack %\d+ : tile<16xi32>", ir)
    assert "reshape" not in ir  # rank-1 already
