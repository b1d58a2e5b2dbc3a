"""The softmax, RMSNorm and LayerNorm examples compile to sm_90 cubins with the real
tileiras, and lower to the ops their math needs."""

from __future__ import annotations

import re

import pytest

from lowering.ir.printer import print_module
from lowering.pipeline import Stage
from lowering.tileiras import Tileiras
from tests.lowering.kernels import compile_example


def assembled(name: str, entry: str, generics: dict[str, str], tileiras: Tileiras) -> str:
    result = compile_example(name, entry, generics, Stage.CUBIN, arch="sm_90")
    assert result.ok, [d.message for d in result.diagnostics]
    assert result.cubin
    return print_module(result.ir)  # type: ignore[arg-type]


@pytest.mark.parametrize(("bm", "n"), [("1", "1024"), ("4", "256")])
def test_softmax(tileiras: Tileiras, bm: str, n: str) -> None:
    ir = assembled("softmax.rs", "softmax", {"BM": bm, "N": n}, tileiras)
    assert re.search(rf"= reduce .*identities = \[-inf : f32\]\}} : tile<{bm}xf32>", ir)
    assert re.search(rf"= reduce .*identities = \[0.0 : f32\]\}} : tile<{bm}xf32>", ir)
    assert re.search(r"= exp ", ir)
    assert re.search(r"= divf .*\{flush_to_zero = true, rounding = approx\}", ir)
    assert ir.count("= broadcast ") == 2


@pytest.mark.parametrize("elem", ["f16", "bf16", "f32"])
def test_softmax_mixed_precision(tileiras: Tileiras, elem: str) -> None:
    ir = assembled("softmax.rs", "softmax_mixed", {"E": elem, "BM": "2", "N": "512"}, tileiras)
    if elem != "f32":
        assert ir.count("= ftof ") == 2  # in and out
    assert re.search(r"= reduce .* : tile<2xf32>", ir)


def test_rms_norm(tileiras: Tileiras) -> None:
    ir = assembled("rms_norm.rs", "rms_norm", {"N": "4096", "BLOCK_SIZE": "1024"}, tileiras)
    assert ir.count("= for ") == 2
    assert re.search(r"= reduce .*identities = \[0.0 : f32\]\} : tile<1xf32>", ir)
    assert re.search(r"= rsqrt .* : tile<f32>", ir)
    assert re.search(r"= itof .* : tile<f32>", ir)  # convert_scalar(N)


@pytest.mark.parametrize(("elem", "bm", "n"), [("f16", "4", "1024"), ("f32", "1", "256")])
def test_layer_norm(tileiras: Tileiras, elem: str, bm: str, n: str) -> None:
    ir = assembled("rms_norm.rs", "layer_norm", {"E": elem, "BM": bm, "N": n}, tileiras)
    assert ir.count("= reduce ") == 2
    assert re.search(rf"= rsqrt .*\{{flush_to_zero = true\}} : tile<{bm}x1xf32>", ir)
