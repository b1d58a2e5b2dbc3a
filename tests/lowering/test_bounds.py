"""Bounds-check placement: discharged by provenance, hoisted to launch checks, or in place."""

from __future__ import annotations

import pytest

from client_stubs import AssumptionError, DeviceTensor, LaunchCheckError, plan_launch
from lowering.contract import AssumptionKind, Quantity
from lowering.ir.attributes import DivBy
from lowering.ir.core import walk
from lowering.ir.ops_control import For
from lowering.ir.ops_core import Assume
from lowering.ir.ops_debug import Assert
from lowering.pipeline import Stage
from parser import codes
from service.convert import contract_to_proto
from tests.lowering.kernels import compile_example, compile_text

GEMM = {"E": "f16", "BM": "128", "BN": "128", "BK": "64"}
ATTENTION = {"E": "bf16", "BM": "128", "BN": "64", "D": "64"}


def _asserts(result):  # type: ignore[no-untyped-def]
    (function,) = result.ir.functions
    return [op for op in walk(function.body) if isinstance(op, Assert)]


def test_gemm_has_no_check_in_its_loop_and_hoists_the_rest(tileiras) -> None:
    result = compile_example("gemm.rs", "gemm", GEMM)
    assert result.ok, result.diagnostics
    assert _asserts(result) == []
    safety = result.contract.safety
    assert (safety.checks_discharged, safety.checks_in_place) == (1, 0)
    checks = {(c.lhs, c.rhs) for c in result.contract.launch_checks}
    # block ids are bounded by the grid; the k loop walks x's k tiles, which y must have
    assert (Quantity(grid_axis=0), Quantity(tile_count=(1, 0, 128))) in checks
    assert (Quantity(tile_count=(1, 1, 64)), Quantity(tile_count=(2, 0, 64))) in checks
    assert (Quantity(grid_axis=1), Quantity(tile_count=(2, 1, 128))) in checks


@pytest.mark.parametrize(
    ("file", "entry", "generics"),
    [
        ("gemm.rs", "gemm", GEMM),
        ("gemm.rs", "gemm_aligned", GEMM),
        ("persistent_gemm.rs", "gemm_persistent", {**GEMM, "MAP": "[8, 1]"}),
        ("flash_attention.rs", "flash_attention", {**ATTENTION, "CAUSAL": "0"}),
        ("flash_attention.rs", "flash_attention", {**ATTENTION, "CAUSAL": "1"}),
    ],
)
def test_gemm_and_flash_attention_have_no_check_in_their_hot_loops(
    file: str, entry: str, generics: dict[str, str]
) -> None:
    result = compile_example(file, entry, generics, Stage.IR)
    assert result.ok, result.diagnostics
    (function,) = result.ir.functions
    loops = [op for op in walk(function.body) if isinstance(op, For)]
    assert loops
    assert not [op for loop in loops for op in walk(loop.body.block) if isinstance(op, Assert)]


def test_causal_attention_proves_its_diagonal_loop_through_products_and_sums() -> None:
    """`first_row = mb * BM` (a y block id: at most 65534, times 128) cannot wrap, so the
    diagonal loop's start is non-negative and its counter stays below k's tile count."""
    generics = {**ATTENTION, "CAUSAL": "1"}
    result = compile_example("flash_attention.rs", "flash_attention", generics, Stage.IR)
    assert result.ok, result.diagnostics
    assert _asserts(result) == []


KERNEL = """
#[cutile::module]
mod k {{
    use cutile::core::*;
    #[cutile::entry({options})]
    {unsafe}fn f(z: &mut Tensor<f32, {{ [128] }}>, x: &Tensor<f32, {{ [-1] }}>, i: i32) {{
        let p = x.partition(const_shape![128]);
        z.store(p.load([i]));
    }}
}}
"""


def test_a_data_dependent_index_is_checked_in_place() -> None:
    result = compile_text(KERNEL.format(options="", unsafe=""), stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    (check,) = _asserts(result)
    assert "partition load index on axis 0" in check.message


def test_deny_in_kernel_checks_turns_a_residual_check_into_an_error() -> None:
    text = KERNEL.format(options="deny_in_kernel_checks = true", unsafe="")
    result = compile_text(text, stop_after=Stage.IR)
    (diagnostic,) = [d for d in result.diagnostics if d.is_error]
    assert diagnostic.code is codes.IN_KERNEL_CHECK_DENIED
    assert diagnostic.primary_span is not None and "p.load" in diagnostic.primary_span.text


def test_unchecked_accesses_emit_no_checks() -> None:
    text = KERNEL.format(options="unchecked_accesses = true", unsafe="unsafe ")
    result = compile_text(text, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    assert _asserts(result) == []


PRECONDITIONS = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry(preconditions = (dim(x, 1) == dim(y, 0), dim(x, 1) % 64 == 0))]
    fn gemm<const BM: i32, const BN: i32, const BK: i32>(
        z: &mut Tensor<f16, { [BM, BN] }>,
        x: &Tensor<f16, { [-1, -1] }>,
        y: &Tensor<f16, { [-1, -1] }>,
    ) {
        let part_x = x.partition(const_shape![BM, BK]);
        let part_y = y.partition(const_shape![BK, BN]);
        let (m, n, _) = get_tile_block_id();
        let mut acc: Tile<f32, { [BM, BN] }> = constant(0.0f32, const_shape![BM, BN]);
        for k in 0i32..num_tiles(&part_x, 1) {
            acc = mma(part_x.load([m, k]), part_y.load([k, n]), acc);
        }
        let r: Tile<f16, { [BM, BN] }> = convert_tile(acc);
        z.store(r);
    }
}
"""


def test_declared_equal_extents_discharge_checks_and_travel_to_the_host(tileiras) -> None:
    result = compile_text(PRECONDITIONS, "gemm", {"BM": "128", "BN": "128", "BK": "64"})
    assert result.ok, result.diagnostics
    safety = result.contract.safety
    assert (safety.checks_discharged, safety.checks_hoisted_to_host) == (2, 2)
    pairs = {(c.lhs, c.rhs) for c in result.contract.launch_checks}
    x_k, y_k = Quantity(dim=(1, 1)), Quantity(dim=(2, 0))
    assert (x_k, y_k) in pairs and (y_k, x_k) in pairs
    assert any(
        a.kind is AssumptionKind.DIM_DIV and (a.param, a.axis, a.value) == (1, 1, 64)
        for a in result.contract.assumptions
    )


def test_declared_preconditions_become_assumes_and_host_refusals(tileiras) -> None:
    """gemm_aligned: stride preconditions are `assume div_by` facts in the kernel, and the host
    refuses arguments that break any precondition before anything is launched."""
    result = compile_example(
        "gemm.rs", "gemm_aligned", {"E": "f16", "BM": "128", "BN": "128", "BK": "64"}
    )
    assert result.ok, result.diagnostics
    divisors = [op.predicate for op in walk(result.ir.functions[0].body) if isinstance(op, Assume)]
    assert divisors.count(DivBy(8)) == 4  # a row stride per tensor, and K
    contract = contract_to_proto(result.contract)

    def args(k: int, y_rows: int, x_stride: int) -> list[DeviceTensor]:
        return [
            DeviceTensor(0x7F00_0000_0000, (1000, 520), dtype="f16").partition((128, 128)),
            DeviceTensor(0x7F10_0000_0000, (1000, k), (x_stride, 1), dtype="f16"),
            DeviceTensor(0x7F20_0000_0000, (y_rows, 520), dtype="f16"),
        ]

    assert plan_launch(contract, args(200, 200, 200)).grid == (8, 5, 1)
    with pytest.raises(AssumptionError, match=r"stride\(x, 0\) % 8 == 0"):
        plan_launch(contract, args(200, 200, 201))
    with pytest.raises(LaunchCheckError, match=r"precondition dim\(x, 1\) == dim\(y, 0\)"):
        plan_launch(contract, args(200, 192, 200))


LOOP_FROM = """
#[cutile::module]
mod k {{
    use cutile::core::*;
    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, {{ [128, 1] }}>, x: &Tensor<f32, {{ [-1] }}>) {{
        let p = x.partition(const_shape![128]);
        let ids = get_tile_block_id();
        let mut acc = constant(0.0f32, const_shape![128]);
        let start = {start};
        for j in start..num_tiles(&p, 0) {{
            acc = acc + p.load([j]);
        }}
        z.store(acc.reshape(const_shape![128, 1]));
    }}
}}
"""


@pytest.mark.parametrize(
    ("start", "checks"),
    [
        ("ids.1 * 64", 0),  # a y block id is at most 65534: the product cannot wrap
        ("ids.1 * 64 + ids.2 * 64", 0),
        ("ids.0 + 1", 0),  # an x block id is below 2^31 - 1
        # an x block id indexes z's 128-row tiles: below ceil((2^31 - 1) / 128), times 64 fits
        ("ids.0 * 64", 0),
        ("ids.0 * 256", 1),  # may wrap i32: no interval fact, the check stays
        ("num_tiles(&p, 0) / -1", 1),  # dividing by a negative constant is not >= 0
    ],
)
def test_non_negativity_flows_through_sums_and_products_that_cannot_wrap(
    start: str, checks: int
) -> None:
    result = compile_text(LOOP_FROM.format(start=start), stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    assert len(_asserts(result)) == checks


STATIC = """
#[cutile::module]
mod k {{
    use cutile::core::*;
    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, {{ [64] }}>, x: &Tensor<f32, {{ [256] }}>, n: i32) {{
        let p = x.partition(const_shape![64]);
        {body}
        z.store(load_tile_like(x, z));
    }}
}}
"""


@pytest.mark.parametrize(
    ("body", "shown"),
    [
        ("for j in -2i32..4i32 { let t = p.load([j]); }", "-2..=3"),  # a negative start
        ("for j in 0i32..5i32 { let t = p.load([j]); }", "0..=4"),  # past 4 tiles
        ("let t = p.load([7i32]);", "7"),
    ],
)
def test_an_index_provably_outside_the_tiles_is_rejected(body: str, shown: str) -> None:
    result = compile_text(STATIC.format(body=body), stop_after=Stage.IR)
    (diagnostic,) = [d for d in result.diagnostics if d.is_error]
    assert diagnostic.code is codes.PARTITION_OUT_OF_BOUNDS
    assert diagnostic.message.endswith(f"it takes the value(s) {shown}")
    assert "Bounds check failed: 0 <= index < 4" in diagnostic.notes


@pytest.mark.parametrize(
    "body",
    [
        "for j in -2i32..n { let t = p.load([j]); }",  # may run no iteration
        "for j in -2i32..4i32 { if n > 0i32 { let t = p.load([j]); } }",  # may be skipped
        "for j in (-2i32..4i32).step_by(2) { let t = p.load([j + 2i32]); }",
    ],
)
def test_an_access_that_may_not_run_keeps_a_run_time_check(body: str) -> None:
    result = compile_text(STATIC.format(body=body), stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    assert _asserts(result)


def test_a_pipelined_load_is_checked_like_a_load() -> None:
    """`p.load_pipelined::<L>(idx)` is `p.load(idx)` with a latency hint: same check."""
    body = "let t = p.load_pipelined::<3>([n]);"
    result = compile_text(STATIC.format(body=body), stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    (check,) = _asserts(result)
    assert check.message == "partition load index on axis 0 out of bounds"


def test_adding_and_subtracting_a_constant_keeps_the_facts(tileiras) -> None:  # type: ignore[no-untyped-def]
    """`(pid + c) - c` is `pid` in wrapping i32 arithmetic: its check leaves the kernel."""
    text = STATIC.format(
        body="let pid = get_tile_block_id().0;\n"
        "        let t = p.load([(pid + 2147483647i32) - 2147483647i32]);"
    ).replace("{ [256] }", "{ [-1] }")
    text = text.replace("#[cutile::entry()]", "#[cutile::entry(deny_in_kernel_checks = true)]")
    result = compile_text(text)
    assert result.ok, result.diagnostics
    checks = {(c.lhs, c.rhs) for c in result.contract.launch_checks}
    assert (Quantity(grid_axis=0), Quantity(tile_count=(1, 0, 64))) in checks
