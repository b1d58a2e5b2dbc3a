"""Persistent schedules (`lowering.lower_persistent`): rank-3 maps, OWNED axes with
composite `coord` stores, `iter_indices_within` sub-ranges and their checks, and
`iter_indices_with` shared streams. Schedules are checked by running the lowered index
arithmetic (`run_schedule`)."""

from __future__ import annotations

import itertools

import pytest

from lowering.contract import Quantity
from lowering.ir import ops_control as control
from lowering.ir.core import walk
from lowering.ir.ops_debug import Assert
from lowering.pipeline import CompileResult, Stage
from parser import codes
from parser.render import render
from tests.lowering.kernels import compile_text
from tests.lowering.test_lower_partitions import run_schedule, swizzle


def kernel(sig: str, *lines: str, attr: str = "", generics: str = "") -> str:
    body = "\n".join(f"        {line}" for line in lines)
    return (
        "#[cutile::module]\n"
        "mod k {\n"
        "    use cutile::core::*;\n"
        f"    #[cutile::entry({attr})]\n"
        f"    fn f{generics}({sig}) {{\n"
        f"{body}\n"
        "    }\n"
        "}\n"
    )


def lowered(text: str, generics: dict[str, str] | None = None) -> CompileResult:
    result = compile_text(text, "f", generics or {}, Stage.IR)
    assert result.ok, [render(d) for d in result.diagnostics]
    return result


def rejected(text: str, generics: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    result = compile_text(text, "f", generics or {}, Stage.IR)
    (diagnostic,) = [d for d in result.diagnostics if d.is_error]
    return diagnostic


def asserts(result: CompileResult) -> list[Assert]:
    return [op for op in walk(result.ir.functions[0].body) if isinstance(op, Assert)]


def every_store(result: CompileResult, counts: tuple[int, ...], grid: int) -> list[tuple]:
    return [i for stores in run_schedule(result, counts, grid).values() for i in stores]


ZERO_TILE = "let t: Tile<f32, { [1, 4, 8] }> = constant(0.0f32, const_shape![1, 4, 8]);"
RANK3 = "mut z: MappedPartitionMut<f32, { [1, 4, 8] }, MAP>"


@pytest.mark.parametrize("map_shape", ["[1, 1, 1]", "[1, 2, 1]", "[1, 1, 3]", "[1, 2, 2]"])
def test_a_rank_3_map_walks_the_leading_axis_row_major_and_swizzles_the_rest(
    map_shape: str,
) -> None:
    text = kernel(
        RANK3,
        "for idx in z.iter_indices() {",
        f"    {ZERO_TILE}",
        "    z.store(t, idx);",
        "}",
        generics="<const MAP: [i32; 3]>",
    )
    result = lowered(text, {"MAP": map_shape})
    groups = tuple(int(g) for g in map_shape.strip("[]").split(","))
    for counts, grid in itertools.product([(2, 3, 5), (3, 4, 4), (1, 1, 7)], (1, 4, 9)):
        stores = every_store(result, counts, grid)
        assert sorted(stores) == list(itertools.product(*map(range, counts)))
        order = run_schedule(result, counts, 1)[0]
        inner = counts[1] * counts[2]
        expected = [
            (t // inner, *swizzle(t % inner, counts[1], counts[2], groups[1:]))
            for t in range(counts[0] * inner)
        ]
        assert order == expected


def test_a_rank_3_map_groups_only_the_trailing_axes() -> None:
    text = kernel(RANK3, "for idx in z.iter_indices() {", "}", generics="<const MAP: [i32; 3]>")
    diagnostic = rejected(text, {"MAP": "[2, 1, 1]"})
    assert diagnostic.code is codes.GENERIC_ARGUMENT
    assert "leading map axis 0 must be 1, got 2" in diagnostic.message


OWNED_SIG = (
    "mut out: MappedPartitionMut<f32, { [1, 16] }, { [1, 0] }>, x: &Tensor<f32, { [-1, -1] }>"
)


def owned(*store: str) -> str:
    return kernel(
        OWNED_SIG,
        "let cols = num_tiles(&out, 1).into_dim();",
        "let px = x.partition(const_shape![1, 16]);",
        "for index in out.iter_indices() {",
        "    let (row, _col) = index.components();",
        "    for j in cols {",
        "        let t = px.load([row, j]);",
        *(f"        {line}" for line in store),
        "    }",
        "}",
    )


def test_an_owned_axis_is_walked_by_the_kernel_and_stored_through_coord() -> None:
    """Map [1, 0]: one work item per row of tiles; the kernel walks the row's tiles with
    a `Dim` of the owned axis, and each composite store is proved by its components."""
    result = lowered(owned("out.store(t, coord((row, j)));"))
    assert asserts(result) == []
    loops = [op for op in walk(result.ir.functions[0].body) if isinstance(op, control.For)]
    assert len(loops) == 2  # the work items, and the `Dim` walk of each row
    for (rows, cols), grid in itertools.product([(5, 3), (1, 4), (6, 1)], (1, 2, 7)):
        stores = every_store(result, (rows, cols), grid)
        assert sorted(stores) == list(itertools.product(range(rows), range(cols)))


@pytest.mark.parametrize(
    ("store", "code", "message"),
    [
        (
            "out.store(t, coord((row, row)));",
            codes.DIM_PROVENANCE,
            "owned axis 1 of a composite store index was produced by a different dimension",
        ),
        (
            "out.store(t, coord((j, j)));",
            codes.PARTITION_INDEX_PROVENANCE,
            "streamed axis 0 of a composite store index must be the component minted",
        ),
        (
            "out.store(t, coord((get_tile_block_id().0, j)));",
            codes.PARTITION_INDEX_PROVENANCE,
            "streamed axis 0 of a composite store index must be the component minted",
        ),
    ],
)
def test_composite_stores_need_minted_and_owned_components(store: str, code, message) -> None:  # type: ignore[no-untyped-def]
    diagnostic = rejected(owned(store))
    assert diagnostic.code is code and message in diagnostic.message


def test_a_fully_streamed_map_takes_only_minted_indices() -> None:
    text = owned("out.store(t, coord((row, j)));").replace("{ [1, 0] }", "{ [1, 1] }")
    diagnostic = rejected(text)
    assert diagnostic.code is codes.PARTITION_INDEX_PROVENANCE
    assert "requires an index produced by this partition's `iter_indices()`" in diagnostic.message


SUB = "mut z: MappedPartitionMut<f32, { [16, 16] }, { [1, 1] }>, start: i32, len: i32"
TILE16 = "let t: Tile<f32, { [16, 16] }> = constant(0.0f32, const_shape![16, 16]);"


def subrange(ranges: str, attr: str = "") -> str:
    return kernel(
        SUB,
        f"for idx in z.iter_indices_within({ranges}) {{",
        f"    {TILE16}",
        "    z.store(t, idx);",
        "}",
        attr=attr,
    )


def test_a_sub_range_walks_only_its_tiles_after_checking_the_range() -> None:
    result = lowered(subrange("[(start, len), (0i32, -1i32)]"))
    messages = sorted(op.message for op in asserts(result))
    assert messages == [
        "sub-range axis 0: length is negative",
        "sub-range axis 0: range end exceeds the tile grid",
        "sub-range axis 0: start is negative",
    ]
    with_constants = lowered(subrange("[(2i32, 3i32), (1i32, -1i32)]"))
    stores = every_store(with_constants, (6, 4), 2)
    assert sorted(stores) == list(itertools.product(range(2, 5), range(1, 4)))


@pytest.mark.parametrize(
    ("ranges", "message"),
    [
        ("[(-1i32, 2i32), (0i32, -1i32)]", "sub-range axis 0 start -1 is negative"),
        ("[(0i32, -2i32), (0i32, -1i32)]", "sub-range axis 0 length -2 is negative"),
    ],
)
def test_provably_bad_sub_ranges_are_rejected(ranges: str, message: str) -> None:
    diagnostic = rejected(subrange(ranges))
    assert diagnostic.code is codes.PARTITION_OUT_OF_BOUNDS and message in diagnostic.message


def test_sub_range_checks_are_denied_in_kernel_checks() -> None:
    diagnostic = rejected(subrange("[(start, len), (0i32, -1i32)]", "deny_in_kernel_checks = true"))
    assert diagnostic.code is codes.IN_KERNEL_CHECK_DENIED
    assert "sub-range axis 0" in diagnostic.message


def test_a_shared_stream_checks_equal_grids_at_launch(tileiras) -> None:  # type: ignore[no-untyped-def]
    sig = (
        "mut a: MappedPartitionMut<f32, { [16, 16] }, { [2, 2] }>, "
        "mut b: MappedPartitionMut<f32, { [16, 16] }, { [2, 2] }>"
    )
    text = kernel(
        sig,
        "for idx in a.iter_indices_with(&b) {",
        f"    {TILE16}",
        "    a.store(t, idx);",
        "    b.store(t, idx);",
        "}",
    )
    result = compile_text(text, "f", {})
    assert result.ok, [render(d) for d in result.diagnostics]
    checks = {(c.lhs, c.rhs) for c in result.contract.launch_checks}
    for axis in (0, 1):
        ours, theirs = (Quantity(tile_count=(p, axis, 16)) for p in (0, 1))
        assert {(ours, theirs), (theirs, ours)} <= checks
    declared = text.replace(
        "#[cutile::entry()]",
        "#[cutile::entry(preconditions = (dim(a, 0) == dim(b, 0), dim(a, 1) == dim(b, 1)))]",
    )
    result = compile_text(declared, "f", {})
    assert result.ok and not [c for c in result.contract.launch_checks if "iter_indices" in c.cause]


SWIZZLED = "mut z: MappedPartitionMut<f32, { [16, 16] }, { [2, 2] }>, x: &Tensor<f32, { [-1, -1] }>"


def test_a_hand_swizzled_index_is_unsafe_and_no_store_accepts_it() -> None:
    """`unsafe swizzle_partition_index_2d::<D, M>(id, m, n)` (or `unsafe z.index(..)`)
    computes the schedule's index by hand: a load may use it (checked as any index), a
    store may not (no partition minted it)."""
    load = (
        "let idx = unsafe { z.index(3i32, 4i32, 4i32) };",
        "let t = x.partition(const_shape![16, 16]).load(idx.coords());",
    )
    result = lowered(kernel(SWIZZLED, *load))
    assert len(asserts(result)) == 2  # the load's checks (nothing bounds the coordinates)
    swizzled = "swizzle_partition_index_2d::<{ [16, 16] }, { [2, 2] }>(0i32, 1i32, 1i32)"
    store = rejected(kernel(SWIZZLED, *load, f"z.store(t, unsafe {{ {swizzled} }});"))
    assert store.code is codes.PARTITION_INDEX_PROVENANCE
    assert "requires an index produced by this partition's" in store.message
    outside = rejected(kernel(SWIZZLED, f"let i = {swizzled};"))
    assert outside.code is codes.UNSAFE_REQUIRED


def test_a_sub_range_of_a_map_with_owned_axes_is_refused() -> None:
    text = subrange("[(start, len), (0i32, -1i32)]").replace("{ [1, 1] }", "{ [1, 0] }")
    diagnostic = rejected(text)
    assert diagnostic.code is codes.UNSUPPORTED_SYNTAX
    assert "sub-range iteration over a map with OWNED axes" in diagnostic.message


MADE_RANGE = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    unsafe fn f(mut z: MappedPartitionMut<f32, { [16, 16] }, { [1, 1] }>, ptr: *mut f32, n: i32) {
        let shape: Shape<{ [-1, 64] }> = Shape::<{ [-1, 64] }> { dims: &[n] };
        let strides: Array<{ [64, 1] }> = Array::<{ [64, 1] }> { dims: &[] };
        let t: Tensor<f32, { [-1, 64] }> =
            make_tensor_view(pointer_to_tile(ptr), shape, strides, new_token_unordered());
        let q = t.partition(const_shape![16, 16]);
        for idx in z.iter_indices_within([(0i32, num_tiles(&q, 0)), (0i32, -1i32)]) {
            let t: Tile<f32, { [16, 16] }> = constant(0.0f32, const_shape![16, 16]);
            z.store(t, idx);
        }
    }
}
"""


def test_a_sub_range_counted_on_a_made_tensor_is_checked_in_the_kernel(tileiras) -> None:  # type: ignore[no-untyped-def]
    """The host does not know a made tensor's tile count: no launch check names it."""
    result = compile_text(MADE_RANGE)
    assert result.ok, [render(d) for d in result.diagnostics]
    assert result.contract.launch_checks == ()  # type: ignore[union-attr]
    assert sorted(op.message for op in asserts(result)) == [
        "sub-range axis 0: length is negative",
        "sub-range axis 0: range end exceeds the tile grid",
    ]
