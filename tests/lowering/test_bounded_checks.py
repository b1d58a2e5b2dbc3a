"""`with_bounds` partitions (`lowering.bounded_checks`): where each binding check goes,
and how bounded accesses are proved by the brand of their coordinates, or rejected."""

from __future__ import annotations

import pytest

from lowering.abi import entry_abi
from lowering.contract import Assumption, AssumptionKind, Quantity
from lowering.ir.core import walk
from lowering.ir.ops_compare import CmpI
from lowering.ir.ops_control import For
from lowering.ir.ops_debug import Assert
from lowering.lower_kernel import KernelLowering
from lowering.pipeline import CompileResult, Stage
from parser import codes
from parser.render import render
from tests.lowering.kernels import compile_text

SIG = "z: &mut Tensor<f32, { [BM, BN] }>, x: &Tensor<f32, { [-1, -1] }>"
GENERICS = {"BM": "64", "BN": "32"}


def kernel(*lines: str, sig: str = SIG, attr: str = "", generics: str = "") -> str:
    body = "\n".join(f"        {line}" for line in lines)
    return (
        "#[cutile::module]\n"
        "mod k {\n"
        "    use cutile::core::*;\n"
        f"    #[cutile::entry({attr})]\n"
        f"    fn f<const BM: i32, const BN: i32{generics}>({sig}) {{\n"
        f"{body}\n"
        "    }\n"
        "}\n"
    )


def lowered(*lines: str, **kw: str) -> CompileResult:
    result = compile_text(kernel(*lines, **kw), "f", GENERICS, Stage.IR)
    assert result.ok, [render(d) for d in result.diagnostics]
    return result


def rejected(*lines: str, **kw: str):  # type: ignore[no-untyped-def]
    result = compile_text(kernel(*lines, **kw), "f", GENERICS, Stage.IR)
    (diagnostic,) = [d for d in result.diagnostics if d.is_error]
    return diagnostic


def asserts(result: CompileResult) -> list[Assert]:
    (function,) = result.ir.functions
    return [op for op in walk(function.body) if isinstance(op, Assert)]


def counts(result: CompileResult) -> tuple[int, int, int, int]:
    """(discharged, hoisted to the host, preheader, in place), lowering the kernel again."""
    abi, _ = entry_abi(result.kernel.signature)  # type: ignore[union-attr]
    ledger = KernelLowering(result.kernel, abi).lower("f").bounds  # type: ignore[arg-type]
    return ledger.discharged, ledger.hoisted, ledger.preheader, ledger.in_place


LOOP = (
    "for i in m {",
    "    for j in n {",
    "        z.store(part.load(coord((i, j))));",
    "    }",
    "}",
)


def test_num_tiles_bounds_discharge_the_binding_and_every_branded_access() -> None:
    result = lowered(
        "let p = x.partition(const_shape![BM, BN]);",
        "let m = num_tiles(&p, 0).into_dim();",
        "let n = num_tiles(&p, 1).into_dim();",
        "let part = p.with_bounds((m, n));",
        *LOOP,
    )
    assert asserts(result) == []
    assert counts(result) == (4, 0, 0, 0)  # two bindings, two coordinates
    loops = [op for op in walk(result.ir.functions[0].body) if isinstance(op, For)]
    assert len(loops) == 2  # `for i in m` walks 0..m


def test_a_floor_division_of_the_extent_becomes_a_host_divisibility_check() -> None:
    """`Dim::new(x.shape()[0] / BM)` is the tile count exactly when BM divides the extent:
    the host verifies that (the contract's `dim % BM == 0`) unless it is declared."""
    lines = (
        "let m = Dim::new(x.shape()[0] / BM);",
        "let n = Dim::new(x.shape()[1] / BN);",
        "let part = x.partition(const_shape![BM, BN]).with_bounds((m, n));",
        *LOOP,
    )
    result = compile_text(kernel(*lines), "f", GENERICS, Stage.IR)
    assert result.ok and asserts(result) == []
    assert counts(result) == (2, 2, 0, 0)
    declared = "preconditions = (dim(x, 0) % 128 == 0, dim(x, 1) % 32 == 0)"
    assert counts(lowered(*lines, attr=declared)) == (4, 0, 0, 0)


def test_the_divisibility_check_is_in_the_contract(tileiras) -> None:  # type: ignore[no-untyped-def]
    lines = (
        "let p = x.partition(const_shape![BM, BN]);",
        "let n = num_tiles(&p, 1);",
        "let m = Dim::new(x.shape()[0] / BM);",
        "let part = p.with_bounds((m, n));",
        "for i in m {",
        "    z.store(part.load(coord((i, 0i32))));",
        "}",
    )
    result = compile_text(kernel(*lines), "f", GENERICS)
    assert result.ok, [render(d) for d in result.diagnostics]
    assert Assumption(1, AssumptionKind.DIM_DIV, 0, 64) in result.contract.assumptions
    checks = {(c.lhs, c.rhs) for c in result.contract.launch_checks}
    assert (Quantity(constant=1), Quantity(tile_count=(1, 1, 32))) in checks  # coordinate 0


def test_a_count_of_another_tensor_is_checked_at_launch_both_ways() -> None:
    result = lowered(
        "let m = num_tiles(&y.partition(const_shape![BM, BN]), 0);",
        "let part = x.partition(const_shape![BM, BN]).with_bounds((m, 1i32.into_dim()));",
        "for i in 0i32..m {",
        "    z.store(part.load(coord((i, 0i32))));",
        "}",
        sig=SIG + ", y: &Tensor<f32, { [-1, -1] }>",
    )
    # axis 0: tiles(y, 0) == tiles(x, 0) on the host; axis 1: 1 == tiles(x, 1) likewise
    assert counts(result) == (1, 3, 0, 0)
    assert asserts(result) == []


def test_an_unprovable_binding_is_an_in_kernel_assert_or_a_denied_check() -> None:
    lines = (
        "let rows = Dim::new(get_num_tile_blocks().0);",
        "let part = x.partition(const_shape![BM, BN]).with_bounds((rows, Dim::new(1)));",
        "for i in rows {",
        "    z.store(part.load(coord((i, 0i32))));",
        "}",
    )
    result = lowered(*lines)
    (check,) = asserts(result)
    assert (
        check.message == "`with_bounds` bound on axis 0 does not equal this partition's tile count"
    )
    equal = [op for op in walk(result.ir.functions[0].body) if isinstance(op, CmpI)]
    assert equal and equal[0].predicate.name == "EQ"
    denied = rejected(*lines, attr="deny_in_kernel_checks = true")
    assert denied.code is codes.IN_KERNEL_CHECK_DENIED


@pytest.mark.parametrize(
    ("lines", "code", "message", "at"),
    [
        (
            (
                "let (one, rows) = (1i32.into_dim(), Dim::new(999));",
                "let part = z.partition_mut(const_shape![32, 32]).with_bounds((rows, one));",
            ),
            codes.BOUND_MISMATCH,
            "`with_bounds` bound 999 on axis 0 is not the partition's tile count 2",
            "rows",
        ),
        (
            ("let part = x.partition(const_shape![BM, BN]).with_bounds((4i32, 4i32));",),
            codes.DIM_PROVENANCE,
            "`with_bounds` bound 0 must come from `num_tiles`, `Dim::new` or `into_dim`",
            "4i32",
        ),
        (
            (
                "let p = x.partition(const_shape![BM, BN]);",
                "let m = num_tiles(&p, 0).into_dim();",
                "let n = num_tiles(&p, 1).into_dim();",
                "let part = p.with_bounds((m, n));",
                "for i in m {",
                "    for j in n {",
                "        z.store(part.load(coord((j, i))));",
                "    }",
                "}",
            ),
            codes.DIM_PROVENANCE,
            "bounded partition coordinate axis 0 was produced by a different dimension",
            "j",
        ),
        (
            (
                "let p = x.partition(const_shape![BM, BN]);",
                "let m = num_tiles(&p, 0);",
                "let part = p.with_bounds((m, 4i32.into_dim()));",
                "let pid = get_tile_block_id();",
                "z.store(part.load(coord((pid.0, 0i32))));",
            ),
            codes.DIM_PROVENANCE,
            "bounded partition coordinate axis 0 must come from iterating the matching dimension",
            "pid.0",
        ),
        (
            (
                "let part = z.partition_mut(const_shape![32, 32]);",
                "let mut part = part.with_bounds((Dim::new(2), Dim::new(1)));",
                "part.store(constant(0.0f32, const_shape![32, 32]), coord((0i32, 1i32)));",
            ),
            codes.PARTITION_OUT_OF_BOUNDS,
            "coordinate 1 on axis 1 is not within the 1-tile grid",
            "1i32",
        ),
    ],
)
def test_rejected_bounded_partitions(
    lines: tuple[str, ...], code: codes.DiagnosticCode, message: str, at: str
) -> None:
    diagnostic = rejected(*lines)
    assert diagnostic.code is code and diagnostic.message == message
    assert diagnostic.primary_span.text == at  # type: ignore[union-attr]


MADE_SIG = "z: &mut Tensor<f32, { [BM, BN] }>, ptr: *mut f32, n: i32"
MADE = (
    "let shape: Shape<{ [-1, 64] }> = Shape::<{ [-1, 64] }> { dims: &[n] };",
    "let strides: Array<{ [64, 1] }> = Array::<{ [64, 1] }> { dims: &[] };",
    "let t: Tensor<f32, { [-1, 64] }> =",
    "    make_tensor_view(pointer_to_tile(ptr), shape, strides, new_token_unordered());",
    "let q = t.partition(const_shape![BM, BN]);",
    "let cols = num_tiles(&q, 1).into_dim();",
    "let rows = Dim::new(4i32);",
    "let part = q.with_bounds((rows, cols));",
)


def made(*lines: str) -> CompileResult:
    """A kernel over a tensor it makes from a raw pointer (an `unsafe` entry)."""
    text = kernel(*lines, sig=MADE_SIG).replace("    fn f<", "    unsafe fn f<")
    return compile_text(text, "f", GENERICS, Stage.IR)


def test_a_made_tensors_binding_is_checked_in_the_kernel_not_at_launch() -> None:
    """The host does not know the extents of a tensor made in the kernel: a bound it
    cannot discharge is asserted in place, and no launch check names the made tensor."""
    walk_both = ("for i in rows {", "    for j in cols {", *LOOP[2:])
    result = made(*MADE, *walk_both)
    assert result.ok, [render(d) for d in result.diagnostics]
    (binding,) = asserts(result)
    assert binding.message == (
        "`with_bounds` bound on axis 0 does not equal this partition's tile count"
    )
    abi, _ = entry_abi(result.kernel.signature)  # type: ignore[union-attr]
    ledger = KernelLowering(result.kernel, abi).lower("f").bounds  # type: ignore[arg-type]
    assert ledger.launch_checks == []


def test_a_constant_coordinate_into_a_made_tensor_is_rejected() -> None:
    lines = (*MADE, "z.store(part.load(coord((1i32, 0i32))));")
    (diagnostic,) = [d for d in made(*lines).diagnostics if d.is_error]
    assert diagnostic.code is codes.DIM_PROVENANCE
    assert diagnostic.message == (
        "coordinate 1 on axis 0 cannot be checked: the tensor was made in the kernel, "
        "so the host does not know its tiles"
    )
