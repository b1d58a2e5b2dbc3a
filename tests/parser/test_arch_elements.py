"""Element types the target lacks (`parser.checks.arch_elements`): CT0801 at the first use, before
tileiras would fail ("Incompatibility with architecture 'sm_90': unsupported type")."""

from __future__ import annotations

import pytest

from lowering.pipeline import Stage
from parser import codes
from parser.arch import arch_number
from tests.parser.prelude_support import compile_body, primary_text

SCALED_SIG = (
    "z: &mut Tensor<f32, { [16, 16] }>, x: &Tensor<f8e4m3fn, { [-1, -1] }>, "
    "xs: &Tensor<f8e8m0fnu, { [-1, -1] }>"
)
SCALED = """
let a: Tile<f8e4m3fn, { [16, 64] }> = x.partition(const_shape![16, 64]).load([0, 0]);
let s: Tile<f8e8m0fnu, { [16, 2] }> = xs.partition(const_shape![16, 2]).load([0, 0]);
let acc: Tile<f32, { [16, 16] }> = constant(0.0f32, const_shape![16, 16]);
z.store(mmaf_scaled(a, a.transpose(), acc, s, s.transpose()));
"""
FP4_SIG = "z: &mut Tensor<f32, { [64] }>, p: &Tensor<f4e2m1fnx2, { [-1] }>"
FP4 = """
let q: Tile<f4e2m1fnx2, { [32] }> = p.partition(const_shape![32]).load([0]);
let f: Tile<f4e2m1fn, { [64] }> = unpack(q);
z.store(convert_tile(f));
"""


def _errors(body: str, sig: str, arch: str) -> list:
    result = compile_body(body, Stage.CHECK, sig=sig, prelude="", arch=arch)
    return [d for d in result.diagnostics if d.is_error]


def test_block_scaling_is_rejected_on_hopper_at_the_scale_parameter() -> None:
    (error,) = _errors(SCALED, SCALED_SIG, "sm_90")
    assert error.code is codes.ARCH_UNSUPPORTED
    assert error.message == "`f8e8m0fnu` needs sm_100 or newer, but the target is sm_90"
    assert primary_text(error) == "&Tensor<f8e8m0fnu, { [-1, -1] }>"
    assert "`mmaf_scaled`" in error.notes[0]


def test_fp4_is_rejected_at_its_first_value() -> None:
    (error,) = _errors(FP4, FP4_SIG, "sm_90")
    assert error.message == "`f4e2m1fn` needs sm_100 or newer, but the target is sm_90"
    assert primary_text(error) == "unpack(q)"


def test_fp8_needs_ada_or_newer() -> None:
    sig = "z: &mut Tensor<f8e5m2, { [64] }>, x: &Tensor<f32, { [-1] }>"
    body = "z.store(convert_tile(load_tile_like(x, z)));"
    (error,) = _errors(body, sig, "sm_80")
    assert error.message == "`f8e5m2` needs sm_89 or newer, but the target is sm_80"
    assert not _errors(body, sig, "sm_89")
    assert not _errors(body, sig, "sm_90")


@pytest.mark.parametrize("arch", ["sm_100", "sm_103", "sm_120"])
def test_blackwell_has_every_element_type(arch: str) -> None:
    assert not _errors(SCALED, SCALED_SIG, arch)
    assert not _errors(FP4, FP4_SIG, arch)


def test_target_numbers() -> None:
    assert [arch_number(t) for t in ("sm_90", "sm_100", "sm_90a", "sm_100f", "gfx")] == [
        90,
        100,
        90,
        100,
        None,
    ]
