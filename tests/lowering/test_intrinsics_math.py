"""Lowering of the element-wise arithmetic and math family, assembled by the real tileiras."""

from __future__ import annotations

import re

from lowering.tileiras import Tileiras
from tests.parser.prelude_support import assembled_ir


def ops_of(ir: str) -> list[str]:
    """The op names of a printed function, in order."""
    return re.findall(r"= (\w+) ", ir)


def test_true_div_is_the_approximate_divide_with_flush_to_zero(tileiras: Tileiras) -> None:
    ir = assembled_ir("z.store(true_div(t, exp(t)));", tileiras)
    assert "= divf " in ir and "{flush_to_zero = true, rounding = approx}" in ir
    assert "= exp " in ir and "{rounding = full}" in ir


def test_true_div_on_f64_divides_with_ieee_rounding(tileiras: Tileiras) -> None:
    body = """
    let d: Tile<f64, { [4, 64] }> = convert_tile(t);
    let q: Tile<f32, { [4, 64] }> = convert_tile(true_div(d, d));
    z.store(q);
    """
    ir = assembled_ir(body, tileiras)
    assert "{flush_to_zero = false, rounding = nearest_even} : tile<4x64xf64>" in ir


def test_mode_markers_become_attributes(tileiras: Tileiras) -> None:
    body = """
    let a = addf(t, t, rounding::Zero, ftz::Enabled);
    let b = fma(a, t, t, rounding::PositiveInf, ftz::Disabled);
    let c = maxf(b, t, nan::Enabled, ftz::Enabled);
    let d = sqrt(c, rounding::Approx, ftz::Enabled);
    let e = exp2(d, ftz::Enabled);
    z.store(rsqrt(e, ftz::Disabled));
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= addf .*\{flush_to_zero = true, rounding = zero\}", ir)
    assert "{flush_to_zero = false, rounding = positive_inf}" in ir  # fma
    assert "{propagate_nan = true, flush_to_zero = true}" in ir  # maxf
    assert "= sqrt " in ir and "{flush_to_zero = true, rounding = approx}" in ir
    assert [op for op in ops_of(ir) if op in ("exp2", "rsqrt")] == ["exp2", "rsqrt"]


def test_every_unary_math_function_assembles(tileiras: Tileiras) -> None:
    body = """
    let a = log(absf(t)) + log2(absf(t)) + tanh(t) + sin(t) + cos(t) + tan(t);
    let b = sinh(a) + cosh(a) + negf(a) + ceil(a) + floor(a);
    z.store(pow(absf(b), t) + atan2(b, t) + remf(b, t));
    """
    ops = set(ops_of(assembled_ir(body, tileiras)))
    wanted = {"log", "log2", "tanh", "sin", "cos", "tan", "sinh", "cosh", "negf", "absf"}
    assert wanted | {"ceil", "floor", "pow", "atan2", "remf"} <= ops


def test_integer_ops_carry_signedness_and_overflow(tileiras: Tileiras) -> None:
    body = """
    let i: Tile<i32, { [4, 64] }> = convert_tile(t);
    let u: Tile<u32, { [4, 64] }> = bitcast(i);
    let a = addi(i, i, overflow::NoSignedWrap);
    let b = divi(a, i, rounding::NegativeInf);
    let c = max_tile(u, u);
    let d = negi(absi(mini(b, remi(b, i))), overflow::None);
    let e = mulhii(d, subi(d, muli(d, d, overflow::NoWrap), overflow::None));
    let f: Tile<i32, { [4, 64] }> = bitcast(c);
    z.store(convert_tile(e + f));
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= addi .*\{overflow = nsw\}", ir)
    assert "= divi " in ir and "rounding = negative_inf" in ir
    assert re.search(r"= maxi .*signedness = unsigned", ir)  # u32 max
    assert re.search(r"= mini .*signedness = signed", ir)
    assert {"absi", "negi", "remi", "mulhii", "subi", "muli"} <= set(ops_of(ir))


def test_scalar_helpers(tileiras: Tileiras) -> None:
    body = """
    let blocks: i32 = ceil_div(n, 16);
    let low = min(blocks, 4);
    let scale: f32 = max(s, 1.0);
    let k: f32 = convert_scalar(low);
    z.store((scale * k).broadcast(z.shape()) + t);
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= divi .*rounding = positive_inf\} : tile<i32>", ir)
    assert re.search(r"= mini .* : tile<i32>", ir)
    assert re.search(r"= maxf .* : tile<f32>", ir)
