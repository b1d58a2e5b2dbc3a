"""Lowering of matrix multiply-accumulate, assembled by tileiras."""

from __future__ import annotations

import re

from lowering.tileiras import Tileiras
from tests.parser.prelude_support import assembled_ir

GEMM_SIG = (
    "z: &mut Tensor<f32, { [64, 64] }>, x: &Tensor<f16, { [-1, -1] }>, "
    "y: &Tensor<f16, { [-1, -1] }>"
)


def test_mma_with_a_float_accumulator_is_mmaf(tileiras: Tileiras) -> None:
    body = """
    let a: Tile<f16, { [64, 64] }> = load_tile_like(x, z);
    let b: Tile<f16, { [64, 64] }> = load_tile_like(y, z);
    let acc: Tile<f32, { [64, 64] }> = constant(0.0, const_shape![64, 64]);
    let c = mma(a, b.transpose(), acc);
    let half: Tile<f16, { [64, 64] }> = constant(0.0, const_shape![64, 64]);
    let d = mmaf(a, b, half);
    z.store(c + convert_tile(d));
    """
    ir = assembled_ir(body, tileiras, sig=GEMM_SIG, prelude="")
    assert re.search(r"= mmaf %\d+, %\d+, %\d+ .*: tile<64x64xf32>", ir)
    assert re.search(r"= mmaf %\d+, %\d+, %\d+ .*: tile<64x64xf16>", ir)


def test_integer_mma_signedness(tileiras: Tileiras) -> None:
    """`mma` takes each side's signedness from its element type; `mmai` from its markers."""
    body = """
    let a: Tile<i8, { [16, 32] }> = constant(1i8, const_shape![16, 32]);
    let b: Tile<u8, { [32, 16] }> = constant(2u8, const_shape![32, 16]);
    let ub: Tile<u8, { [16, 32] }> = bitcast(a);
    let acc: Tile<i32, { [16, 16] }> = constant(0i32, const_shape![16, 16]);
    let c = mma(ub, b, acc);
    let sb: Tile<i8, { [32, 16] }> = bitcast(b);
    let d = mmai(a, sb, c, signedness::Signed, signedness::Unsigned);
    let e: Tile<f32, { [16, 16] }> = convert_tile(d);
    z.store(e.reshape(const_shape![4, 64]));
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= mmai .*signedness_lhs = unsigned, signedness_rhs = unsigned", ir)
    assert re.search(r"= mmai .*signedness_lhs = signed, signedness_rhs = unsigned", ir)


def test_batched_mma(tileiras: Tileiras) -> None:
    body = """
    let a: Tile<f32, { [2, 8, 16] }> = t.reshape(const_shape![2, 8, 16]);
    let b: Tile<f32, { [2, 16, 8] }> = t.reshape(const_shape![2, 16, 8]);
    let acc: Tile<f32, { [2, 8, 8] }> = constant(0.0, const_shape![2, 8, 8]);
    let c = mma(a, b, acc);
    z.store(cat(c, c, 0).reshape(z.shape()));
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= mmaf %\d+, %\d+, %\d+ .*: tile<2x8x8xf32>", ir)


FP8_SIG = (
    "z: &mut Tensor<f32, { [128, 128] }>, x: &Tensor<f8e4m3fn, { [-1, -1] }>, "
    "y: &Tensor<f8e4m3fn, { [-1, -1] }>"
)


def test_fp8_mma_on_hopper(tileiras: Tileiras) -> None:
    """e4m3 x e4m3 with an f32 accumulator: an sm_90 cubin (Hopper's fp8 wgmma)."""
    body = """
    let a: Tile<f8e4m3fn, { [128, 64] }> = x.partition(const_shape![128, 64]).load([0, 0]);
    let b: Tile<f8e4m3fn, { [128, 64] }> = y.partition(const_shape![128, 64]).load([0, 0]);
    let acc: Tile<f32, { [128, 128] }> = constant(0.0f32, const_shape![128, 128]);
    z.store(mma(a, b.transpose(), acc));
    """
    ir = assembled_ir(body, tileiras, sig=FP8_SIG, prelude="")
    assert re.search(r"= mmaf %\d+, %\d+, %\d+ .*: tile<128x128xf32>", ir)
    assert "tile<128x64xf8E4M3FN>" in ir


def test_block_scaled_mma_on_blackwell(tileiras: Tileiras) -> None:
    sig = FP8_SIG + ", s: &Tensor<f8e8m0fnu, { [-1, -1] }>"
    body = """
    let a: Tile<f8e4m3fn, { [128, 64] }> = x.partition(const_shape![128, 64]).load([0, 0]);
    let b: Tile<f8e4m3fn, { [128, 64] }> = y.partition(const_shape![128, 64]).load([0, 0]);
    let sa: Tile<f8e8m0fnu, { [128, 2] }> = s.partition(const_shape![128, 2]).load([0, 0]);
    let acc: Tile<f32, { [128, 128] }> = constant(0.0f32, const_shape![128, 128]);
    z.store(mmaf_scaled(a, b.transpose(), acc, sa, sa.transpose()));
    """
    ir = assembled_ir(body, tileiras, sig=sig, prelude="", arch="sm_100")
    assert re.search(r"= mmaf_scaled %\d+, %\d+, %\d+, %\d+, %\d+ : tile<128x128xf32>", ir)
