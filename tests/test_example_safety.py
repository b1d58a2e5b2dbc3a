"""Check placement of the safety examples: the `unchecked_accesses` twins of gemm and flash
attention keep no check anywhere (what the safety-overhead benchmark compares against), and
`gather_tiles` keeps its data-dependent check in the kernel while the host checks the rest."""

from __future__ import annotations

import pytest

from client_stubs import DeviceTensor, LaunchCheckError, plan_launch
from lowering.contract import SafetySummary
from lowering.ir.core import walk
from lowering.ir.ops_debug import Assert
from lowering.pipeline import CompileResult
from service.convert import contract_to_proto
from tests.lowering.kernels import compile_example

GEMM = {"E": "f16", "BM": "128", "BN": "128", "BK": "64"}
ATTENTION = {"E": "bf16", "BM": "128", "BN": "64", "D": "128"}
NO_CHECKS = SafetySummary(unchecked_accesses=True)


def _asserts(result: CompileResult) -> list[Assert]:
    (function,) = result.ir.functions  # type: ignore[union-attr]
    return [op for op in walk(function.body) if isinstance(op, Assert)]


def _compiled(file: str, entry: str, generics: dict[str, str]) -> CompileResult:
    result = compile_example(file, entry, generics)
    assert result.ok, result.diagnostics
    return result


def test_unchecked_gemm_counts_no_check_and_keeps_the_declared_facts(tileiras) -> None:
    safe = _compiled("gemm.rs", "gemm_aligned", GEMM)
    unchecked = _compiled("gemm.rs", "gemm_unchecked", GEMM)
    assert unchecked.contract.safety == NO_CHECKS  # type: ignore[union-attr]
    assert _asserts(unchecked) == []
    assert safe.contract.safety.checks_discharged > 0  # type: ignore[union-attr]
    # the same preconditions, so the same assumptions: the two differ only in checks
    assert unchecked.contract.assumptions == safe.contract.assumptions  # type: ignore[union-attr]


@pytest.mark.parametrize("causal", ["0", "1"])
def test_unchecked_flash_attention_counts_no_check(tileiras, causal: str) -> None:
    generics = {**ATTENTION, "CAUSAL": causal}
    safe = _compiled("flash_attention.rs", "flash_attention", generics)
    unchecked = _compiled("flash_attention.rs", "flash_attention_unchecked", generics)
    assert unchecked.contract.safety == NO_CHECKS  # type: ignore[union-attr]
    assert unchecked.contract.launch_checks == ()  # type: ignore[union-attr]
    assert _asserts(unchecked) == []
    safety = safe.contract.safety  # type: ignore[union-attr]
    assert not safety.unchecked_accesses
    assert safety.checks_discharged + safety.checks_hoisted_to_host > 0


def test_gather_keeps_its_data_dependent_check_in_the_kernel(tileiras) -> None:
    result = _compiled("gather.rs", "gather_tiles", {"B": "256"})
    safety = result.contract.safety  # type: ignore[union-attr]
    assert safety.checks_in_place == 1
    (check,) = _asserts(result)
    assert "out of bounds" in check.message
    assert safety.checks_hoisted_to_host == 1  # the tile_index load at the block id


def test_gather_launch_with_too_few_indices_is_refused_on_the_host(tileiras) -> None:
    contract = contract_to_proto(_compiled("gather.rs", "gather_tiles", {"B": "256"}).contract)

    def args(indices: int) -> list[object]:
        return [
            DeviceTensor(0x7F00_0000_0000, (3 * 256,)).partition((256,)),
            DeviceTensor(0x7F10_0000_0000, (4 * 256,)),
            DeviceTensor(0x7F20_0000_0000, (indices,), dtype="i32"),
        ]

    assert plan_launch(contract, args(3)).grid == (3, 1, 1)
    refusal = r"ceil\(dim\(tile_index, 0\) / 1\) = 2 must be >= grid axis 0 = 3"
    with pytest.raises(LaunchCheckError, match=refusal):
        plan_launch(contract, args(2))
