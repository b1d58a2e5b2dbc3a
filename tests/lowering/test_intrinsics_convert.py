"""Lowering of element-type conversions, assembled by tileiras."""

from __future__ import annotations

import re

import pytest

from lowering.tileiras import Tileiras
from tests.parser.prelude_support import assembled_ir


@pytest.mark.parametrize(
    ("elem", "there", "back"),
    [
        ("f16", "ftof", "ftof"),
        ("bf16", "ftof", "ftof"),
        ("f64", "ftof", "ftof"),
        ("i32", "ftoi", "itof"),
        ("u16", "ftoi", "itof"),
        ("i64", "ftoi", "itof"),
    ],
)
def test_convert_tile_round_trips(tileiras: Tileiras, elem: str, there: str, back: str) -> None:
    body = f"""
    let other: Tile<{elem}, {{ [4, 64] }}> = convert_tile(t);
    z.store(convert_tile(other));
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(rf"= {there} .*: tile<4x64x\w+>", ir)
    assert re.search(rf"= {back} .*: tile<4x64xf32>", ir)
    if there == "ftoi":
        signedness = "unsigned" if elem.startswith("u") else "signed"
        assert re.search(rf"= ftoi .*signedness = {signedness}, rounding = nearest_int_to_zero", ir)


def test_integer_conversions_extend_truncate_or_relabel(tileiras: Tileiras) -> None:
    body = """
    let i: Tile<i32, { [4, 64] }> = convert_tile(t);
    let wide: Tile<i64, { [4, 64] }> = convert_tile(i);
    let u: Tile<u32, { [4, 64] }> = convert_tile(i);
    let uwide: Tile<u64, { [4, 64] }> = convert_tile(u);
    let narrow: Tile<i16, { [4, 64] }> = convert_tile(wide + bitcast(uwide));
    let flag: Tile<i32, { [4, 64] }> = convert_tile(lt_tile(t, t));
    let back: Tile<i32, { [4, 64] }> = convert_tile(narrow);
    z.store(convert_tile(back + flag));
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= exti .*signedness = signed.*: tile<4x64xi64>", ir)
    assert re.search(r"= exti .*signedness = unsigned.*: tile<4x64xi64>", ir)  # u32 and bool
    assert re.search(r"= trunci .*: tile<4x64xi16>", ir)
    assert re.search(r"= exti .*: tile<4x64xi32>", ir)  # i16 -> i32 and i1 -> i32


def test_explicit_conversion_ops(tileiras: Tileiras) -> None:
    body = """
    let i: Tile<i32, { [4, 64] }> = ftoi(t, rounding::Zero);
    let w: Tile<i64, { [4, 64] }> = exti(i);
    let n: Tile<i16, { [4, 64] }> = trunci(w, overflow::NoSignedWrap);
    let h: Tile<f16, { [4, 64] }> = itof(n, rounding::NearestEven);
    let f: Tile<f32, { [4, 64] }> = ftof(h, rounding::NearestEven);
    let bits: Tile<u32, { [4, 64] }> = bitcast(f);
    let same: Tile<i32, { [4, 64] }> = bitcast(bits);
    z.store(bitcast(same));
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= trunci .*overflow = nsw.*: tile<4x64xi16>", ir)
    assert re.search(r"= itof .*signedness = signed, rounding = nearest_even.*xf16>", ir)
    assert ir.count("= bitcast ") == 2  # f32 -> u32 and i32 -> f32; u32 -> i32 is a relabel


def test_convert_scalar_of_a_const_generic(tileiras: Tileiras) -> None:
    body = """
    let count: f32 = convert_scalar(N);
    z.store(t * count.broadcast(z.shape()));
    """
    ir = assembled_ir(body, tileiras, params="<const N: i32>", values={"N": "48"})
    assert re.search(r"constant \{values = \[48\]\} : tile<i32>\n.*= itof ", ir)


def test_fp8_conversions_on_hopper(tileiras: Tileiras) -> None:
    """fp8 converts with ftof/ftoi/itof; sm_90 holds f8e4m3fn and f8e5m2."""
    body = """
    let e4: Tile<f8e4m3fn, { [4, 64] }> = convert_tile(t);
    let e5: Tile<f8e5m2, { [4, 64] }> = convert_tile(e4);
    let i: Tile<i32, { [4, 64] }> = ftoi(e5, rounding::Zero);
    let back: Tile<f8e4m3fn, { [4, 64] }> = itof(i, rounding::NearestEven);
    let raw: Tile<u8, { [4, 64] }> = bitcast(back);
    let again: Tile<f8e4m3fn, { [4, 64] }> = bitcast(raw);
    z.store(convert_tile(again));
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= ftof %\d+ \{rounding = nearest_even\} : tile<4x64xf8E4M3FN>", ir)
    assert re.search(r"= ftof %\d+ .*: tile<4x64xf8E5M2>", ir)
    assert re.search(r"= itof %\d+ .*: tile<4x64xf8E4M3FN>", ir)
    assert re.search(r"= bitcast %\d+ : tile<4x64xi8>", ir)


def test_scale_conversions_round_up_or_down(tileiras: Tileiras) -> None:
    """`f8e8m0fnu` has no nearest rounding: ftof takes `Zero` or `PositiveInf` (sm_100)."""
    body = """
    let up: Tile<f8e8m0fnu, { [4, 64] }> = ftof(t, rounding::PositiveInf);
    let down: Tile<f8e8m0fnu, { [4, 64] }> = ftof(t, rounding::Zero);
    let a: Tile<f32, { [4, 64] }> = convert_tile(up);
    let b: Tile<f32, { [4, 64] }> = convert_tile(down);
    z.store(a + b);
    """
    ir = assembled_ir(body, tileiras, arch="sm_100")
    assert re.search(r"= ftof %\d+ \{rounding = positive_inf\} : tile<4x64xf8E8M0FNU>", ir)
    assert re.search(r"= ftof %\d+ \{rounding = zero\} : tile<4x64xf8E8M0FNU>", ir)
