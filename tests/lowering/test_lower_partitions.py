"""Lowering partitions: `x.partition(shape)` views with zero padding, `p.load([i, j])`,
`num_tiles`, `z.partition_mut(shape)` slabs (local index + block offset), and
`MappedPartitionMut` persistent loops whose grouped swizzle must visit every output tile
exactly once (checked by running the lowered IR's index arithmetic in Python)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from client_stubs import AssumptionError, DeviceTensor, LaunchCheckError, plan_launch
from lowering.contract import Assumption, AssumptionKind, ParamKind, Quantity
from lowering.ir import ops_arith as arith
from lowering.ir import ops_control as control
from lowering.ir import ops_core as core
from lowering.ir import ops_math as mathops
from lowering.ir import ops_memory as memory
from lowering.ir.attributes import RoundingMode
from lowering.ir.core import Block, Op, Value, walk
from lowering.ir.ops_debug import Assert
from lowering.ir.printer import print_module
from lowering.ir.types import TOKEN, ElementType, PaddingValue, TileType
from lowering.pipeline import CompileResult, Stage
from parser.render import render
from service.convert import contract_to_proto
from tests.lowering.kernels import EXAMPLES, compile_example, compile_text

I32 = TileType(ElementType.I32, ())
SIG2 = "z: &mut Tensor<f32, { [64, 64] }>, x: &Tensor<f32, { [-1, -1] }>"


def kernel_text(*lines: str, sig: str = SIG2, generics: str = "") -> str:
    body = "\n".join(f"        {line}" for line in lines)
    return (
        "#[cutile::module]\n"
        "mod kernel {\n"
        "    use cutile::core::*;\n"
        "    #[cutile::entry()]\n"
        f"    fn f{generics}({sig}) {{\n"
        f"{body}\n"
        "    }\n"
        "}\n"
    )


def lower(*lines: str, values: dict[str, str] | None = None, **kw: str) -> CompileResult:
    result = compile_text(kernel_text(*lines, **kw), "f", values or {}, Stage.IR)
    assert result.ok, [render(d) for d in result.diagnostics]
    return result


def ops_of(result: CompileResult, kind: type | None = None) -> list[Op]:
    (function,) = result.ir.functions
    ops = list(walk(function.body))
    return ops if kind is None else [op for op in ops if isinstance(op, kind)]


def producer(result: CompileResult, value: Value) -> Op:
    return next(op for op in ops_of(result) if value in op.results)


def constant(result: CompileResult, value: Value) -> object:
    op = producer(result, value)
    assert isinstance(op, core.Constant), op
    return op.values[0]


def views(result: CompileResult) -> list[memory.MakePartitionView]:
    return ops_of(result, memory.MakePartitionView)


# ----------------------------------------------------------------------------- partition / load


def test_partition_is_a_zero_padded_view_and_load_takes_the_given_index() -> None:
    result = lower(
        "let px = x.partition(const_shape![32, 16]);",
        "let (bm, bn, _) = get_tile_block_id();",
        "let t = px.load([bm, 3i32]);",
        "z.store(load_tile_like(x, z));",
    )
    view = next(v for v in views(result) if v.result.type.tile_shape == (32, 16))
    assert view.result.type.padding == PaddingValue.ZERO
    (ids,) = ops_of(result, core.GetTileBlockId)
    load = next(op for op in ops_of(result, memory.LoadViewTko) if op.view == view.result)
    assert load.index[0] == ids.x and constant(result, load.index[1]) == 3
    assert load.token is None  # reads of shared inputs are unordered
    assert load.tile.type == TileType(ElementType.F32, (32, 16))


def test_load_tile_is_a_checked_load_through_a_zero_padded_view() -> None:
    """`x.load_tile(shape, idx)` (and `load_tile(x, shape, idx)`) is `x.partition(shape)
    .load(idx)`: the same view and the same checks (here an in-kernel one for a data
    value, hoisted to the host for a block id)."""
    result = lower(
        "let (bm, bn, _) = get_tile_block_id();",
        "let a = x.load_tile(const_shape![32, 16], [bm, 0i32]);",
        "let b = load_tile(x, const_shape![32, 16], [bm, bn * bn]);",
        "z.store(load_tile_like(x, z));",
    )
    (view,) = [v for v in views(result) if v.result.type.tile_shape == (32, 16)]
    assert view.result.type.padding == PaddingValue.ZERO
    loads = [op for op in ops_of(result, memory.LoadViewTko) if op.view == view.result]
    assert len(loads) == 2 and all(op.token is None for op in loads)
    assert loads[0].tile.type == TileType(ElementType.F32, (32, 16))
    assert len(ops_of(result, Assert)) == 1  # bn * bn may wrap: checked at the access


def test_a_permuted_partition_walks_the_mapped_tensor_axes() -> None:
    """`partition_permuted(shape, [1, 0])`: logical axis 0 walks the tensor's axis 1, so
    its index is bounded by x's axis-1 tiles (here checked at launch against the grid)."""
    text = kernel_text(
        "let (bm, bn, _) = get_tile_block_id();",
        "let p = x.partition_permuted(const_shape![64, 32], const_array![1, 0]);",
        "let n = num_tiles(&p, 0);",
        "let t = p.load([bm, 0i32]);",
        "z.store(load_tile_like(x, z));",
        sig="z: &mut Tensor<f32, { [64, 64] }>, x: &Tensor<f32, { [-1, 96] }>",
    )
    result = compile_text(text, "f", {}, Stage.CUBIN)
    assert result.ok, [render(d) for d in result.diagnostics]
    (view,) = [v for v in views(result) if v.result.type.tile_shape == (64, 32)]
    assert view.result.type.dim_map == (1, 0)
    checks = {(c.lhs, c.rhs) for c in result.contract.launch_checks}
    assert (Quantity(grid_axis=0), Quantity(constant=2)) in checks  # ceil(96 / 64) tiles
    assert result.cubin


def test_shape_queries_read_extents_and_tile_counts() -> None:
    """`get_tensor_shape(x)` is x's extents (the dynamic ones as values); a partition's
    `get_index_space_shape` its tiles per axis (a constant for a static extent)."""
    result = lower(
        "let e: [i32; 2] = get_tensor_shape(x);",
        "let t: [i32; 2] = get_index_space_shape(&x.partition(const_shape![32, 32]));",
        "let n = e[0] + e[1] + t[0] + t[1];",
        "z.store(load_tile_like(x, z));",
        sig="z: &mut Tensor<f32, { [64, 64] }>, x: &Tensor<f32, { [-1, 96] }>",
    )
    adds = ops_of(result, arith.AddI)
    leaves = [adds[0].lhs, adds[0].rhs, adds[1].rhs, adds[2].rhs]
    assert isinstance(producer(result, leaves[0]), core.Assume)  # x's dynamic extent
    assert [constant(result, v) for v in leaves[1:2]] == [96]
    assert isinstance(producer(result, leaves[2]), memory.GetIndexSpaceShape)
    assert constant(result, leaves[3]) == 3  # ceil(96 / 32)


def test_permute_array_reorders_the_values() -> None:
    result = lower(
        "let (bm, bn, _) = get_tile_block_id();",
        "let idx = permute_array([bm, bn], const_array![1, 0]);",
        "let t = x.partition(const_shape![64, 64]).load(idx);",
        "z.store(load_tile_like(x, z));",
    )
    (ids,) = ops_of(result, core.GetTileBlockId)
    (load,) = [op for op in ops_of(result, memory.LoadViewTko) if op.token is None][:1]
    assert load.index == (ids.y, ids.x)


def test_one_view_per_tile_shape_is_reused_by_every_load() -> None:
    result = lower(
        "let a = x.partition(const_shape![32, 32]);",
        "let b = x.partition(const_shape![32, 32]);",
        "let s = a.load([0i32, 0i32]) + b.load([1i32, 1i32]);",
        "z.store(load_tile_like(x, z));",
    )
    shapes = [v.result.type.tile_shape for v in views(result)]
    assert shapes.count((32, 32)) == 1


@pytest.mark.parametrize(
    ("sig", "axis", "expected"),
    [
        (SIG2, 1, "dynamic"),
        ("z: &mut Tensor<f32, { [64, 64] }>, x: &Tensor<f32, { [-1, 100] }>", 1, 4),  # ceil(100/32)
        ("z: &mut Tensor<f32, { [64, 64] }>, x: &Tensor<f32, { [96, -1] }>", 0, 3),
    ],
)
def test_num_tiles_of_an_input_partition(sig: str, axis: int, expected: object) -> None:
    result = lower(
        "let px = x.partition(const_shape![32, 32]);",
        f"let n = num_tiles(&px, {axis});",
        "for k in 0i32..n {",
        "}",
        "z.store(load_tile_like(x, z));",
        sig=sig,
    )
    (loop,) = ops_of(result, control.For)
    if expected == "dynamic":
        counts = producer(result, loop.upper)
        assert isinstance(counts, memory.GetIndexSpaceShape)
        assert loop.upper == counts.counts[axis]
        assert counts.view.type.tile_shape == (32, 32)
    else:
        assert constant(result, loop.upper) == expected


def test_a_reduction_loop_over_partition_tiles() -> None:
    result = lower(
        "let px = x.partition(const_shape![64, 64]);",
        "let (bm, _, _) = get_tile_block_id();",
        "let mut acc = px.load([bm, 0i32]);",
        "for j in 1i32..num_tiles(&px, 1) {",
        "    acc = acc + px.load([bm, j]);",
        "}",
        "z.store(acc);",
    )
    (loop,) = ops_of(result, control.For)
    iv, acc_arg, _ = loop.body.block.args
    (load,) = [op for op in loop.body.block.ops if isinstance(op, memory.LoadViewTko)]
    assert load.index[1] == iv
    (add,) = ops_of(result, arith.AddF)
    assert add.lhs == acc_arg and add.rhs == load.tile
    (store,) = ops_of(result, memory.StoreViewTko)
    assert (store.tile, store.token) == loop.outputs


# ----------------------------------------------------------------------------- partition_mut


def test_partition_mut_stores_at_block_offset_plus_local_index() -> None:
    result = lower(
        "let px = x.partition(const_shape![32, 16]);",
        "let t = px.load([0i32, 0i32]);",
        "let mut pz = z.partition_mut(const_shape![32, 16]);",
        "pz.store(t, [1, 3]);",
        "pz.store(t, [0, 2]);",
    )
    (ids,) = ops_of(result, core.GetTileBlockId)
    out_view = next(v for v in views(result) if v.result.type.padding is None)
    assert out_view.result.type.tile_shape == (32, 16)
    muls = ops_of(result, arith.MulI)
    # slab of 64x64 in 32x16 tiles: 2 x 4 tiles per block
    assert {(m.lhs, constant(result, m.rhs)) for m in muls} == {(ids.x, 2), (ids.y, 4)}
    offset = {m.lhs: m.result for m in muls}
    first, second = ops_of(result, memory.StoreViewTko)
    for store, local in ((first, (1, 3)), (second, (0, 2))):
        assert store.view == out_view.result
        for axis, index in enumerate(store.index):
            add = producer(result, index)
            assert isinstance(add, arith.AddI)
            assert add.lhs == offset[(ids.x, ids.y)[axis]]
            assert constant(result, add.rhs) == local[axis]
    (make,) = ops_of(result, core.MakeToken)
    assert first.token == make.result and second.token == first.result_token


def test_a_slab_of_one_tile_per_axis_uses_the_block_id_directly() -> None:
    result = lower(
        "let px = x.partition(const_shape![64, 32]);",
        "let mut pz = z.partition_mut(const_shape![64, 32]);",
        "pz.store(px.load([0i32, 0i32]), [0, 1]);",
    )
    (ids,) = ops_of(result, core.GetTileBlockId)
    (mul,) = ops_of(result, arith.MulI)
    assert mul.lhs == ids.y and constant(result, mul.rhs) == 2
    (store,) = ops_of(result, memory.StoreViewTko)
    assert producer(result, store.index[0]).lhs == ids.x


def test_sub_tiles_that_overhang_the_slab_need_one_block_on_that_axis(tileiras) -> None:
    """A [1, 10] output tile cut into [1, 4] sub-tiles: three of them, the last one
    reaching past the slab. That is safe only when no other block's slab follows on that
    axis (past the tensor's end the store is masked): the host checks grid[1] <= 1."""
    text = kernel_text(
        "let x_part = x.partition(const_shape![1, 4]);",
        "let mut p = z.partition_mut(const_shape![1, 4]);",
        "let row = get_tile_block_id().0;",
        "for j in 0i32..num_tiles(&p, 1) {",
        "    p.store(x_part.load([row, j]), [0i32, j]);",
        "}",
        sig="z: &mut Tensor<f32, { [1, 10] }>, x: &Tensor<f32, { [-1, 10] }>",
    )
    result = compile_text(text, "f", {}, Stage.CUBIN)
    assert result.ok, [render(d) for d in result.diagnostics]
    (loop,) = ops_of(result, control.For)
    assert constant(result, loop.upper) == 3  # ceil(10 / 4)
    checks = {(c.lhs, c.rhs) for c in result.contract.launch_checks}
    assert (Quantity(grid_axis=1), Quantity(constant=1)) in checks
    assert result.contract.params[0].tile_shape == (1, 10)


def test_a_slab_given_at_launch_is_cut_and_checked_on_the_host(tileiras) -> None:
    """`&mut Tensor<f32, {[-1, 64]}>`: the host's partition tile gives the rows of each
    block's slab. `partition_mut([4, 32])` needs 4 to divide them (host-checked) and the
    constant row index 1 needs two sub-tile rows (a launch check on the partition tile)."""
    text = kernel_text(
        "let mut p = z.partition_mut(const_shape![4, 32]);",
        "for j in 0i32..num_tiles(&p, 1) {",
        "    p.store(constant(1.0f32, const_shape![4, 32]), [1i32, j]);",
        "}",
        sig="z: &mut Tensor<f32, { [-1, 64] }>",
    )
    result = compile_text(text, "f", {}, Stage.CUBIN)
    assert result.ok, [render(d) for d in result.diagnostics]
    contract = result.contract
    assert contract.params[0].tile_shape == (-1, 64)
    assert Assumption(0, AssumptionKind.SLAB_DIV, 0, 4) in contract.assumptions
    checks = {(c.lhs, c.rhs) for c in contract.launch_checks}
    assert checks == {(Quantity(constant=2), Quantity(slab_tiles=(0, 0, 4)))}
    message = contract_to_proto(contract)
    fine = plan_launch(message, [DeviceTensor(0x7000_0000, (96, 64)).partition([8, 64])])
    assert fine.grid == (12, 1, 1)
    with pytest.raises(AssumptionError, match=r"tile\(z, 0\) % 4 == 0"):
        plan_launch(message, [DeviceTensor(0x7000_0000, (96, 64)).partition([6, 64])])
    with pytest.raises(LaunchCheckError, match=r"tile\(z, 0\) / 4 = 1 must be >= 2"):
        plan_launch(message, [DeviceTensor(0x7000_0000, (96, 64)).partition([4, 64])])


def test_num_tiles_of_a_partition_mut_is_the_slab_grid() -> None:
    result = lower(
        "let px = x.partition(const_shape![16, 32]);",
        "let mut pz = z.partition_mut(const_shape![16, 32]);",
        "for i in 0i32..num_tiles(&pz, 0) {",
        "    for j in 0i32..num_tiles(&pz, 1) {",
        "        pz.store(px.load([i, j]), [i, j]);",
        "    }",
        "}",
    )
    outer, inner = ops_of(result, control.For)
    assert constant(result, outer.upper) == 4 and constant(result, inner.upper) == 2
    assert [v.type for v in outer.outputs] == [TOKEN]
    (store,) = ops_of(result, memory.StoreViewTko)
    assert store.token == inner.body.block.args[1]


def test_partitions_assemble_with_tileiras(tileiras) -> None:
    text = kernel_text(
        "let px = x.partition(const_shape![32, 32]);",
        "let mut pz = z.partition_mut(const_shape![32, 32]);",
        "for i in 0i32..num_tiles(&pz, 0) {",
        "    let mut acc = px.load([i, 0i32]);",
        "    for k in 1i32..num_tiles(&px, 1) {",
        "        acc = acc + px.load([i, k]);",
        "    }",
        "    pz.store(acc, [i, 1]);",
        "}",
    )
    result = compile_text(text, "f", {}, Stage.CUBIN)
    assert result.ok, [render(d) for d in result.diagnostics]
    assert result.cubin


# ----------------------------------------------------------------------------- mapped partitions

PERSISTENT = "persistent_gemm.rs"
MAPPED_SIG = (
    "mut z: MappedPartitionMut<f32, { [64, 64] }, { [4, 1] }>, x: &Tensor<f32, { [-1, -1] }>"
)


def copy_persistent(map_shape: str, stop_after: Stage = Stage.IR, bm: int = 64) -> CompileResult:
    generics = {"E": "f32", "BM": str(bm), "BN": "64", "MAP": map_shape}
    result = compile_example(PERSISTENT, "copy_persistent", generics, stop_after)
    assert result.ok, [render(d) for d in result.diagnostics]
    return result


def test_the_example_file_holds_copy_persistent() -> None:
    assert "fn copy_persistent<" in (EXAMPLES / PERSISTENT).read_text()


def test_a_persistent_loop_strides_tiles_by_the_grid() -> None:
    result = copy_persistent("[4, 1]")
    (loop,) = ops_of(result, control.For)
    (ids,) = ops_of(result, core.GetTileBlockId)
    grid = producer(result, loop.step)
    assert isinstance(grid, core.GetNumTileBlocks) and loop.step == grid.x
    assert loop.lower == ids.x
    total = producer(result, loop.upper)
    assert isinstance(total, arith.MulI)
    counts = producer(result, total.lhs)
    assert isinstance(counts, memory.GetIndexSpaceShape)
    assert (total.lhs, total.rhs) == counts.counts
    out_view = producer(result, counts.view)
    assert out_view.result.type.tile_shape == (64, 64)
    assert out_view.result.type.padding is None
    (make,) = ops_of(result, core.MakeToken)
    assert loop.init_values == (make.result,)
    (store,) = ops_of(result, memory.StoreViewTko)
    (load,) = ops_of(result, memory.LoadViewTko)
    assert store.view == out_view.result and store.token == loop.body.block.args[1]
    assert store.index == load.index  # z.store(part_x.load([m, n]), idx)
    assert producer(result, load.view).result.type.padding == PaddingValue.ZERO
    end = loop.body.block.ops[-1]
    assert isinstance(end, control.Continue) and end.values == (store.result_token,)


def test_the_printed_persistent_loop() -> None:
    text = print_module(copy_persistent("[4, 1]").ir)
    assert "get_num_tile_blocks" in text and "get_index_space_shape" in text
    assert "mini" in text and "remi" in text and "divi" in text
    assert " = for " in text and "continue %" in text


def test_a_row_major_map_needs_no_grouping_arithmetic() -> None:
    result = copy_persistent("[1, 1]")
    assert not ops_of(result, mathops.MinI)
    (div,) = ops_of(result, arith.DivI)
    (rem,) = ops_of(result, arith.RemI)
    (loop,) = ops_of(result, control.For)
    iv = loop.body.block.args[0]
    assert div.lhs == rem.lhs == iv


# --- the swizzle, evaluated


def swizzle(tile_id: int, rows: int, cols: int, groups: tuple[int, int]) -> tuple[int, int]:
    """A Python mirror of `lowering.lower_persistent.swizzle` (grouped tile order)."""
    if groups[0] > 1 and groups[1] > 1:
        gm, gn = groups
        band = gm * cols
        first_row = tile_id // band * gm
        height = min(rows - first_row, gm)
        within = tile_id % band
        inside = within % (height * gn)
        first_col = within // (height * gn) * gn
        return first_row + inside % height, first_col + inside // height
    major = 0 if groups[1] == 1 else 1
    group = groups[major]
    if group == 1:
        return tile_id // cols, tile_id % cols
    along, across = (rows, cols) if major == 0 else (cols, rows)
    band = group * across
    first = tile_id // band * group
    size = min(along - first, group)
    within = tile_id % band
    grouped = first + within % size
    other = within // size
    return (grouped, other) if major == 0 else (other, grouped)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_INT_OPS: dict[type, Callable[[Op, int, int], int]] = {
    arith.AddI: lambda op, a, b: a + b,
    arith.SubI: lambda op, a, b: a - b,
    arith.MulI: lambda op, a, b: a * b,
    arith.RemI: lambda op, a, b: a - b * _trunc_div(a, b),
    mathops.MinI: lambda op, a, b: min(a, b),
    arith.DivI: lambda op, a, b: (
        a // b if op.rounding is RoundingMode.NEGATIVE_INF else _trunc_div(a, b)
    ),
}


def run_schedule(
    result: CompileResult, counts: tuple[int, ...], grid: int
) -> dict[int, list[tuple[int, ...]]]:
    """Interpret the lowered kernel's integer ops for every block of a (grid, 1, 1) launch
    over an output of `counts` tiles; returns each block's store indices in order."""
    (function,) = result.ir.functions
    visited: dict[int, list[tuple[int, ...]]] = {}
    for block_id in range(grid):
        env: dict[Value, int] = {}
        stores: list[tuple[int, ...]] = []
        _run(function.body, env, stores, block_id, grid, counts)
        visited[block_id] = stores
    return visited


def _run(block: Block, env: dict, stores: list, block_id: int, grid: int, counts: tuple) -> None:
    for op in block.ops:
        if isinstance(op, core.Constant) and op.result.type == I32:
            env[op.result] = int(op.values[0])
        elif isinstance(op, core.GetTileBlockId):
            env[op.x], env[op.y], env[op.z] = block_id, 0, 0
        elif isinstance(op, core.GetNumTileBlocks):
            env[op.x], env[op.y], env[op.z] = grid, 1, 1
        elif isinstance(op, memory.GetIndexSpaceShape):
            for value, count in zip(op.counts, counts, strict=True):
                env[value] = count
        elif type(op) in _INT_OPS:
            env[op.result] = _INT_OPS[type(op)](op, env[op.lhs], env[op.rhs])
        elif isinstance(op, memory.StoreViewTko):
            stores.append(tuple(env[i] for i in op.index))
        elif isinstance(op, control.For):
            iv = op.body.block.args[0]
            for i in range(env[op.lower], env[op.upper], env[op.step]):
                env[iv] = i
                _run(op.body.block, env, stores, block_id, grid, counts)


SIZES = [(5, 7), (7, 5), (1, 1), (1, 9), (9, 1), (8, 8), (3, 10), (13, 2)]
MAPS = {
    "[1, 1]": (1, 1),
    "[4, 1]": (4, 1),
    "[1, 4]": (1, 4),
    "[2, 1]": (2, 1),
    "[1, 8]": (1, 8),
    "[2, 2]": (2, 2),
    "[4, 4]": (4, 4),
    "[3, 2]": (3, 2),
}


@pytest.mark.parametrize("map_shape", list(MAPS))
@pytest.mark.parametrize("size", SIZES, ids=[f"{r}x{c}" for r, c in SIZES])
def test_the_python_mirror_is_a_permutation(map_shape: str, size: tuple[int, int]) -> None:
    rows, cols = size
    order = [swizzle(t, rows, cols, MAPS[map_shape]) for t in range(rows * cols)]
    assert sorted(order) == list(itertools.product(range(rows), range(cols)))


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        ((1, 1), [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]),
        # groups of 2 rows, column by column, then the last (short) group of one row
        ((2, 1), [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 0), (2, 1), (2, 2)]),
        ((1, 2), [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1), (0, 2), (1, 2), (2, 2)]),
        # bands of 2 rows cut into blocks of 2 columns, each walked column by column
        ((2, 2), [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 0), (2, 1), (2, 2)]),
    ],
)
def test_the_grouped_order_on_a_3x3_grid(groups, expected) -> None:
    assert [swizzle(t, 3, 3, groups) for t in range(9)] == expected


@pytest.mark.parametrize("map_shape", list(MAPS))
def test_the_lowered_schedule_visits_every_tile_exactly_once(map_shape: str) -> None:
    result = copy_persistent(map_shape)
    groups = MAPS[map_shape]
    for (rows, cols), grid in itertools.product(SIZES, (1, 3, 7, 132)):
        schedule = run_schedule(result, (rows, cols), grid)
        every = [index for stores in schedule.values() for index in stores]
        assert sorted(every) == list(itertools.product(range(rows), range(cols))), (
            f"{rows}x{cols} tiles, grid {grid}: not a permutation"
        )
        # block b visits flat tiles b, b + grid, ... in the mirrored swizzle order
        for block_id, stores in schedule.items():
            flat = range(block_id, rows * cols, grid)
            assert stores == [swizzle(t, rows, cols, groups) for t in flat]


def test_a_5x7_grid_in_groups_of_4_rows_golden_order() -> None:
    schedule = run_schedule(copy_persistent("[4, 1]"), (5, 7), 1)
    order = schedule[0]
    assert order[:8] == [(0, 0), (1, 0), (2, 0), (3, 0), (0, 1), (1, 1), (2, 1), (3, 1)]
    assert order[28:] == [(4, c) for c in range(7)]  # the short last group: one row


def test_a_rank_one_mapped_output_walks_tiles_in_order() -> None:
    text = kernel_text(
        "let px = x.partition(const_shape![64]);",
        "for idx in z.iter_indices() {",
        "    let (m,) = idx.components();",
        "    z.store(px.load([m]), idx);",
        "}",
        sig="mut z: MappedPartitionMut<f32, { [64] }, { [1] }>, x: &Tensor<f32, { [-1] }>",
    )
    result = compile_text(text, "f", {}, Stage.IR)
    assert result.ok, [render(d) for d in result.diagnostics]
    schedule = run_schedule(result, (10,), 3)
    assert schedule == {0: [(0,), (3,), (6,), (9,)], 1: [(1,), (4,), (7,)], 2: [(2,), (5,), (8,)]}


def test_persistent_loops_carry_locals_with_the_token() -> None:
    text = kernel_text(
        "let px = x.partition(const_shape![64, 64]);",
        "let mut count = 0i32;",
        "for idx in z.iter_indices() {",
        "    count += 1i32;",
        "    z.store(px.load(idx.coords()), idx);",
        "}",
        "let seen = count;",
        sig=MAPPED_SIG,
    )
    result = compile_text(text, "f", {}, Stage.IR)
    assert result.ok, [render(d) for d in result.diagnostics]
    (loop,) = ops_of(result, control.For)
    assert [v.type for v in loop.outputs] == [I32, TOKEN]
    count_arg = loop.body.block.args[1]
    (add,) = [op for op in ops_of(result, arith.AddI) if op.lhs == count_arg]
    assert loop.body.block.ops[-1].values == (add.result, loop.body.block.ops[-2].result_token)


@pytest.mark.parametrize("map_shape", ["[4, 1]", "[1, 4]", "[1, 1]"])
def test_copy_persistent_assembles_and_its_contract_is_persistent(tileiras, map_shape: str) -> None:
    result = copy_persistent(map_shape, Stage.CUBIN)
    assert result.cubin
    contract = result.contract
    assert contract.persistent
    z, x = contract.params
    assert z.kind is ParamKind.TENSOR_OUT_MAPPED and x.kind is ParamKind.TENSOR_IN
    assert z.tile_shape == (64, 64) and z.map_shape == MAPS[map_shape]
    assert contract.grid_outputs == (0,)
    # the ABI of a mapped output is that of a partitioned output
    roles = [s.role.name for s in contract.abi if s.param == 0]
    assert roles == [
        "PTR",
        "DIM",
        "DIM",
        "STRIDE",
        "STRIDE",
        "PART_DIM",
        "PART_DIM",
        "PART_STRIDE",
        "PART_STRIDE",
    ]


def test_coords_of_a_minted_index_can_be_indexed() -> None:
    text = kernel_text(
        "let px = x.partition(const_shape![64, 64]);",
        "for idx in z.iter_indices() {",
        "    let c = idx.coords();",
        "    z.store(px.load([c[0], c[1]]), idx);",
        "}",
        sig=MAPPED_SIG,
    )
    result = compile_text(text, "f", {}, Stage.IR)
    assert result.ok, [d.message for d in result.diagnostics]
    (load,) = ops_of(result, memory.LoadViewTko)
    (store,) = ops_of(result, memory.StoreViewTko)
    assert load.index == store.index
    schedule = run_schedule(result, (5, 7), 4)
    every = sorted(i for stores in schedule.values() for i in stores)
    assert every == list(itertools.product(range(5), range(7)))


PERSISTENT_VARIANTS = {
    "store-in-runtime-if": (
        MAPPED_SIG,
        "",
        (
            "let px = x.partition(const_shape![64, 64]);",
            "for idx in z.iter_indices() {",
            "    let (m, n) = idx.components();",
            "    if m == n {",
            "        z.store(px.load([m, n]), idx);",
            "    }",
            "}",
        ),
    ),
    "reduction-inside": (
        MAPPED_SIG,
        "",
        (
            "let px = x.partition(const_shape![64, 64]);",
            "for idx in z.iter_indices() {",
            "    let (m, n) = idx.components();",
            "    let mut acc = px.load([m, 0i32]);",
            "    for k in 1i32..num_tiles(&px, 1) {",
            "        acc = acc + px.load([m, k]);",
            "    }",
            "    z.store(acc, idx);",
            "}",
        ),
    ),
    "inside-a-device-function": (
        MAPPED_SIG,
        (
            "    fn copy_all(\n"
            "        mut o: MappedPartitionMut<f32, { [64, 64] }, { [4, 1] }>,\n"
            "        i: &Tensor<f32, { [-1, -1] }>,\n"
            "    ) {\n"
            "        let pi = i.partition(const_shape![64, 64]);\n"
            "        for idx in o.iter_indices() {\n"
            "            o.store(pi.load(idx.coords()), idx);\n"
            "        }\n"
            "    }\n"
        ),
        ("copy_all(z, x);",),
    ),
    "two-mapped-outputs": (
        "mut z: MappedPartitionMut<f32, { [64, 64] }, { [4, 1] }>, "
        "mut w: MappedPartitionMut<f32, { [64, 64] }, { [1, 4] }>, x: &Tensor<f32, { [-1, -1] }>",
        "",
        (
            "let px = x.partition(const_shape![64, 64]);",
            "for idx in z.iter_indices() {",
            "    z.store(px.load(idx.coords()), idx);",
            "}",
            "for jdx in w.iter_indices() {",
            "    w.store(px.load(jdx.coords()), jdx);",
            "}",
        ),
    ),
}


@pytest.mark.parametrize("variant", list(PERSISTENT_VARIANTS))
def test_persistent_variants_verify_and_assemble(tileiras, variant: str) -> None:
    sig, devices, lines = PERSISTENT_VARIANTS[variant]
    text = kernel_text(*lines, sig=sig).replace(
        "    #[cutile::entry()]", devices + "    #[cutile::entry()]"
    )
    result = compile_text(text, "f", {}, Stage.CUBIN)
    assert result.ok, [render(d) for d in result.diagnostics]
    assert result.contract.persistent
    schedule = run_schedule(result, (5, 7), 6)
    stores = sorted(i for s in schedule.values() for i in s)
    if variant == "store-in-runtime-if":
        return  # stores sit inside an `if` region the interpreter does not enter
    per_output = 2 if variant == "two-mapped-outputs" else 1
    assert stores == sorted(list(itertools.product(range(5), range(7))) * per_output)
