"""Lowering of `cuda_tile_print!` (one token chain in program order, through loops and
`if`s), `cuda_tile_assert!`, `Shape`/`Array` struct literals, `load_view_tko` /
`load_pipelined` (ordering, scope and optimization hints) and `get_shape_dim`; every kernel
here is also assembled by tileiras."""

from __future__ import annotations

import pytest

from lowering.ir import ops_arith as arith
from lowering.ir import ops_control as control
from lowering.ir import ops_core as core
from lowering.ir import ops_memory as memory
from lowering.ir.attributes import LoadStoreHints, MemoryOrdering, MemoryScope, Signedness
from lowering.ir.core import Op, Value, walk
from lowering.ir.ops_convert import ExtI
from lowering.ir.ops_debug import Assert, PrintTko
from lowering.ir.ops_shape import Permute
from lowering.ir.types import I32, ElementType, TileType
from lowering.pipeline import CompileResult, Stage
from lowering.tileiras import Tileiras
from parser.render import render
from tests.lowering.kernels import compile_text

SIG = "z: &mut Tensor<f32, { [64, 64] }>, x: &Tensor<f32, { [-1, -1] }>, n: i32, w: u8"
STORE = "z.store(load_tile_like(x, z));"
PARTITION = "let p = x.partition(const_shape![64, 32]);"


def kernel_text(*lines: str, generics: str = "", helpers: str = "") -> str:
    body = "\n".join(f"        {line}" for line in lines)
    return (
        "#[cutile::module]\n"
        "mod kernel {\n"
        "    use cutile::core::*;\n"
        f"{helpers}"
        "    #[cutile::entry()]\n"
        f"    fn f{generics}({SIG}) {{\n"
        f"{body}\n"
        "    }\n"
        "}\n"
    )


def lower(
    *lines: str,
    values: dict[str, str] | None = None,
    tileiras: Tileiras | None = None,
    **kw: str,
) -> CompileResult:
    """Lower to IR; with `tileiras`, also assemble the kernel (sm_90)."""
    stage = Stage.CUBIN if tileiras is not None else Stage.IR
    result = compile_text(kernel_text(*lines, **kw), "f", values or {}, stage)
    assert result.ok, [render(d) for d in result.diagnostics]
    if tileiras is not None:
        assert result.cubin
    return result


def ops_of(result: CompileResult, kind: type) -> list:
    (function,) = result.ir.functions  # type: ignore[union-attr]
    return [op for op in walk(function.body) if isinstance(op, kind)]


def producer(result: CompileResult, value: Value) -> Op:
    (function,) = result.ir.functions  # type: ignore[union-attr]
    return next(op for op in walk(function.body) if value in op.results)


def constant(result: CompileResult, value: Value) -> object:
    op = producer(result, value)
    assert isinstance(op, core.Constant), op
    return op.values[0]


# ----------------------------------------------------------------------------- print / assert


def test_prints_follow_program_order_through_loops_and_ifs(tileiras: Tileiras) -> None:
    result = lower(
        "let pid: (i32, i32, i32) = get_tile_block_id();",
        'cuda_tile_print!("first {} of {}: 100%\\n", pid.0, n);',
        "for i in 0i32..n {",
        '    cuda_tile_print!("loop {}\\n", i);',
        "}",
        "if n > 4i32 {",
        '    cuda_tile_print!("then\\n");',
        "}",
        'cuda_tile_print!("last {{}}\\n");',
        STORE,
        tileiras=tileiras,
    )
    first, in_loop, in_if, last = ops_of(result, PrintTko)
    assert first.format == "first %i of %i: 100%%\n"
    assert isinstance(producer(result, first.token), core.MakeToken)
    (loop,) = ops_of(result, control.For)
    assert first.result_token in loop.init_values
    carried = loop.body.block.args[1 + loop.init_values.index(first.result_token)]
    assert in_loop.token == carried and in_loop.format == "loop %i\n"
    (branch,) = ops_of(result, control.If)
    after_loop = loop.outputs[loop.init_values.index(first.result_token)]
    assert in_if.token == after_loop and in_if.format == "then\n"
    assert last.token in branch.outputs and last.format == "last {}\n"
    assert last.args == ()


def test_print_arguments_keep_their_types_and_small_unsigned_ones_are_widened() -> None:
    result = lower(
        "let t: Tile<f32, { [64, 64] }> = load_tile_like(x, z);",
        'cuda_tile_print!("{} {} {} {}\\n", t, w, 5i64, n == 1i32);',
        STORE,
    )
    (show,) = ops_of(result, PrintTko)
    assert show.format == "%f %u %lli %i\n"
    tile, wide, big, flag = show.args
    assert tile.type == TileType(ElementType.F32, (64, 64))
    (ext,) = ops_of(result, ExtI)
    assert wide == ext.result and ext.signedness is Signedness.UNSIGNED
    assert wide.type == I32 and ext.source.type == TileType(ElementType.I8, ())
    assert big.type == TileType(ElementType.I64, ()) and constant(result, big) == 5
    assert flag.type == TileType(ElementType.I1, ())


def test_no_print_no_print_token() -> None:
    result = lower(STORE)
    assert len(ops_of(result, core.MakeToken)) == 1  # the output's


def test_prints_in_an_inlined_device_function_join_the_chain(tileiras: Tileiras) -> None:
    helper = (
        "    fn show(v: i32) -> i32 {\n"
        '        cuda_tile_print!("in helper {}\\n", v);\n'
        "        v\n"
        "    }\n"
    )
    result = lower(
        'cuda_tile_print!("before\\n");',
        "let k = show(n);",
        'cuda_tile_print!("after {}\\n", k);',
        STORE,
        helpers=helper,
        tileiras=tileiras,
    )
    before, inside, after = ops_of(result, PrintTko)
    assert inside.token == before.result_token and after.token == inside.result_token


def test_assert_takes_the_condition_and_the_unescaped_message(tileiras: Tileiras) -> None:
    result = lower(
        "let t: Tile<f32, { [64, 64] }> = load_tile_like(x, z);",
        'cuda_tile_assert!(n >= 0i32, "negative \\"n\\"\\tat {}");',
        'cuda_tile_assert!(eq_tile(t, t), "a NaN");',
        STORE,
        tileiras=tileiras,
    )
    scalar, tile = ops_of(result, Assert)
    assert scalar.message == 'negative "n"\tat {}'
    assert scalar.condition.type == TileType(ElementType.I1, ())
    assert tile.message == "a NaN"
    assert tile.condition.type == TileType(ElementType.I1, (64, 64))


# ----------------------------------------------------------------------------- struct literals


def test_shape_literal_lowers_like_tensor_extents(tileiras: Tileiras) -> None:
    result = lower(
        "let cols: i32 = get_shape_dim(x.shape(), 1i32);",
        "let s: Shape<{ [-1, -1, D] }> = Shape::<{ [-1, -1, D] }> { dims: &[cols, n] };",
        "let a: i32 = get_shape_dim(s, 0);",
        "let b: i32 = s[1];",
        "let c: i32 = s[2];",
        'cuda_tile_print!("{} {} {} {}\\n", a, b, c, n);',
        STORE,
        generics="<const D: i32>",
        values={"D": "8"},
        tileiras=tileiras,
    )
    (show,) = ops_of(result, PrintTko)
    a, b, c, n = show.args
    x_view = ops_of(result, memory.MakeTensorView)[1]
    assert a == x_view.dynamic_shape[1]  # `cols` is x's runtime extent
    assert b == n
    assert constant(result, c) == 8


def test_array_literals_with_runtime_entries_and_static_ones(tileiras: Tileiras) -> None:
    result = lower(
        "let t: Tile<f32, { [64, 64] }> = load_tile_like(x, z);",
        "let strides = Array::<{ [-1, 1] }> { dims: &[n * 2i32] };",
        "let full = Array::<{ [-1, 1] }> { dims: &[n, 1i32] };",
        "let swap: Array<{ [1, 0] }> = Array::<{ [1, 0] }> { dims: &[1i32, 0i32] };",
        'cuda_tile_print!("{} {} {}\\n", strides[0], strides[1], full[0]);',
        "z.store(permute(t, swap) + permute(t, Array::<{ [1, 0] }> { dims: &[] }));",
        tileiras=tileiras,
    )
    (show,) = ops_of(result, PrintTko)
    doubled, one, first = show.args
    mul = producer(result, doubled)
    assert isinstance(mul, arith.MulI) and constant(result, mul.rhs) == 2
    assert constant(result, one) == 1
    assert first == mul.lhs  # `n` itself
    assert [op.permutation for op in ops_of(result, Permute)] == [(1, 0), (1, 0)]


# ----------------------------------------------------------------------------- view loads


def test_load_view_tko_sets_ordering_scope_and_hints(tileiras: Tileiras) -> None:
    result = lower(
        PARTITION,
        "let (i, j, _) = get_tile_block_id();",
        "let a = load_view_tko(&p, [i, 0i32], ordering::Weak, scope::TileBlock, None, "
        "tma::Enabled);",
        "let b = load_view_tko(&p, [i, 1i32], ordering::Weak, scope::TileBlock, Some(3), "
        "tma::Enabled);",
        "let c = load_view_tko(&p, [i, j], ordering::Relaxed, scope::Device, None, tma::Disabled);",
        "let d = load_view_tko(&p, [j, i], ordering::Acquire, scope::System, Some(L), "
        "tma::Disabled);",
        "let e = p.load_pipelined::<L>([i, 0i32]);",
        "let s = a + b + c + d + e;",
        STORE,
        generics="<const L: i32>",
        values={"L": "6"},
        tileiras=tileiras,
    )
    view = next(
        op.result
        for op in ops_of(result, memory.MakePartitionView)
        if op.result.type.tile_shape == (64, 32)
    )
    loads = [op for op in ops_of(result, memory.LoadViewTko) if op.view == view]
    found = [(op.ordering, op.scope, op.hints) for op in loads]
    assert found == [
        (MemoryOrdering.WEAK, None, ()),  # a weak load carries no scope (Tile IR)
        (MemoryOrdering.WEAK, None, (LoadStoreHints("default", latency=3),)),
        (
            MemoryOrdering.RELAXED,
            MemoryScope.DEVICE,
            (LoadStoreHints("default", allow_tma=False),),
        ),
        (
            MemoryOrdering.ACQUIRE,
            MemoryScope.SYSTEM,
            (LoadStoreHints("default", latency=6, allow_tma=False),),
        ),
        (MemoryOrdering.WEAK, None, (LoadStoreHints("default", latency=6),)),
    ]
    (ids,) = ops_of(result, core.GetTileBlockId)
    assert loads[2].index == (ids.x, ids.y) and loads[3].index == (ids.y, ids.x)
    assert all(op.token is None for op in loads)
    assert all(op.tile.type == TileType(ElementType.F32, (64, 32)) for op in loads)


@pytest.mark.parametrize(
    ("sig_dims", "axis", "static"),
    [("{ [-1, -1] }", 1, None), ("{ [-1, 96] }", 1, 96), ("{ [-1, 96] }", 0, None)],
)
def test_get_shape_dim_is_a_constant_when_the_extent_is_static(
    sig_dims: str, axis: int, static: int | None
) -> None:
    text = kernel_text(
        f"let d: i32 = get_shape_dim(x.shape(), {axis});",
        'cuda_tile_print!("{}\\n", d);',
        STORE,
    ).replace("x: &Tensor<f32, { [-1, -1] }>", f"x: &Tensor<f32, {sig_dims}>")
    result = compile_text(text, "f", {}, Stage.IR)
    assert result.ok, [render(d) for d in result.diagnostics]
    (show,) = ops_of(result, PrintTko)
    (arg,) = show.args
    if static is not None:
        assert constant(result, arg) == static
    else:
        x_view = ops_of(result, memory.MakeTensorView)[1]
        assert arg == x_view.dynamic_shape[axis]


# ----------------------------------------------------------------------------- module structs

CARRIER = """    struct Carrier {
        tile: Tile<f32, { [64, 64] }>,
        scale: f32,
    }
    impl Carrier {
        fn scaled(&self) -> Tile<f32, { [64, 64] }> {
            self.tile * broadcast_scalar(self.scale, const_shape![64, 64])
        }
    }
"""


def test_a_struct_value_is_its_fields_through_methods_patterns_and_ifs(
    tileiras: Tileiras,
) -> None:
    """`Carrier { .. }` carries its fields' values: a method reads them through `self`, a
    struct pattern takes one apart, and a runtime `if` yields both fields."""
    result = lower(
        "let t: Tile<f32, { [64, 64] }> = load_tile_like(x, z);",
        "let c = Carrier { scale: 3.0f32, tile: t };",
        "let picked = if n > 0i32 { c } else { Carrier { tile: t, scale: 1.0f32 } };",
        "let Carrier { tile, scale: _ } = picked;",
        "z.store(picked.scaled() + tile);",
        helpers=CARRIER,
        tileiras=tileiras,
    )
    (branch,) = ops_of(result, control.If)
    assert [v.type for v in branch.outputs[:2]] == [
        TileType(ElementType.F32, (64, 64)),
        TileType(ElementType.F32, ()),
    ]  # then the output's token
    (mul,) = ops_of(result, arith.MulF)
    (add,) = ops_of(result, arith.AddF)
    assert add.rhs == branch.outputs[0]  # the pattern's `tile` is the yielded field
    scale = producer(result, producer(result, mul.rhs).source)  # broadcast <- reshape
    assert scale.source == branch.outputs[1]
    (store,) = ops_of(result, memory.StoreViewTko)
    assert store.tile == add.result
