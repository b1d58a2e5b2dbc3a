"""Lowering the kernel language's control flow to tile IR: `for` / `loop` / `if` ops whose
iteration values and yields carry mutable locals and the outputs' memory tokens, folded
compile-time `if`s, `as` casts, constants, indexing and inlined device functions."""

from __future__ import annotations

import math

import pytest

from lowering.ir import ops_arith as arith
from lowering.ir import ops_control as control
from lowering.ir import ops_convert as convert
from lowering.ir import ops_core as core
from lowering.ir import ops_memory as memory
from lowering.ir.attributes import RoundingMode, Signedness
from lowering.ir.core import Block, Op, Value, walk
from lowering.ir.printer import print_module
from lowering.ir.types import TOKEN, ElementType, TileType
from lowering.pipeline import CompileResult, Stage
from parser.render import render
from tests.lowering.kernels import compile_text

SIG = "z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>"
F32_TILE = TileType(ElementType.F32, (128,))
I32 = TileType(ElementType.I32, ())


def kernel_text(
    *lines: str, sig: str = SIG, generics: str = "<const B: i32>", extra: str = ""
) -> str:
    body = "\n".join(f"        {line}" for line in lines)
    return (
        "#[cutile::module]\n"
        "mod kernel {\n"
        "    use cutile::core::*;\n"
        f"{extra}"
        "    #[cutile::entry()]\n"
        f"    fn f{generics}({sig}) {{\n"
        f"{body}\n"
        "    }\n"
        "}\n"
    )


def lower(*lines: str, values: dict[str, str] | None = None, **kw: str) -> CompileResult:
    """Lower a kernel to IR; `values` are the generic values (default B=128), `kw` goes to
    `kernel_text` (sig, generics declaration, extra items)."""
    generics = {"B": "128"} if values is None else values
    result = compile_text(kernel_text(*lines, **kw), "f", generics, Stage.IR)
    assert result.ok, [render(d) for d in result.diagnostics]
    return result


def body_of(result: CompileResult) -> Block:
    (function,) = result.ir.functions
    return function.body


def ops_of(result: CompileResult, kind: type | None = None) -> list[Op]:
    ops = list(walk(body_of(result)))
    return ops if kind is None else [op for op in ops if isinstance(op, kind)]


def top(result: CompileResult, kind: type) -> list[Op]:
    """Ops of `kind` directly in the function body (not nested)."""
    return [op for op in body_of(result).ops if isinstance(op, kind)]


def producer(result: CompileResult, value: Value) -> Op | None:
    return next((op for op in ops_of(result) if value in op.results), None)


def constant_of(result: CompileResult, value: Value) -> object:
    """The constant behind `value`, looking through integer width conversions."""
    op = producer(result, value)
    while isinstance(op, (convert.TruncI, convert.ExtI)):
        op = producer(result, op.source)
    assert isinstance(op, core.Constant), op
    (only,) = op.values
    return only


def token_root(result: CompileResult) -> Value:
    (make,) = ops_of(result, core.MakeToken)
    return make.result


def terminator(block: Block) -> Op:
    return block.ops[-1]


LOAD, STORE = "let t = x.load_like(z);", "z.store(t);"


# ----------------------------------------------------------------------------- for


def test_for_threads_carried_values_and_the_output_token_through_iter_values() -> None:
    result = lower(
        "let mut u = x.load_like(z);",
        "let mut n = 0i32;",
        "for i in 0..4 {",
        "    u = u + u;",
        "    n += i;",
        "}",
        "z.store(u);",
    )
    (loop,) = ops_of(result, control.For)
    assert constant_of(result, loop.lower) == 0 and constant_of(result, loop.upper) == 4
    assert constant_of(result, loop.step) == 1
    # carried values first (in first-assignment order), then the output's token
    assert [v.type for v in loop.init_values] == [F32_TILE, I32, TOKEN]
    assert loop.init_values[2] == token_root(result)
    iv, u_arg, n_arg, token_arg = loop.body.block.args
    assert iv.type == I32
    (add_f,) = [op for op in loop.body.block.ops if isinstance(op, arith.AddF)]
    (add_i,) = [op for op in loop.body.block.ops if isinstance(op, arith.AddI)]
    assert (add_f.lhs, add_f.rhs) == (u_arg, u_arg)
    assert (add_i.lhs, add_i.rhs) == (n_arg, iv)
    end = terminator(loop.body.block)
    assert isinstance(end, control.Continue)
    assert end.values == (add_f.result, add_i.result, token_arg)
    (store,) = ops_of(result, memory.StoreViewTko)
    assert store.tile == loop.outputs[0] and store.token == loop.outputs[2]


def test_a_loop_that_assigns_nothing_still_threads_the_token() -> None:
    result = lower(LOAD, "for i in 0..4 {", "    let j = i;", "}", STORE)
    (loop,) = ops_of(result, control.For)
    assert loop.init_values == (token_root(result),)
    (store,) = ops_of(result, memory.StoreViewTko)
    assert store.token == loop.outputs[0]


@pytest.mark.parametrize(("step", "value"), [("2 as usize", 2), ("4i64", 4), ("B / 64", 2)])
def test_step_by_lowers_to_an_i32_step(step: str, value: int) -> None:
    result = lower(LOAD, f"for i in (0..B).step_by({step}) {{", "}", STORE)
    (loop,) = ops_of(result, control.For)
    assert loop.step.type == I32
    assert constant_of(result, loop.step) == value
    assert constant_of(result, loop.upper) == 128


def test_stores_inside_a_loop_chain_their_tokens_around_the_loop() -> None:
    result = lower(
        "let px = x.partition(const_shape![128]);",
        "for i in 0..3 {",
        "    z.store(px.load([i]));",
        "    z.store(px.load([i]));",
        "}",
        "z.store(px.load([0i32]));",
    )
    (loop,) = ops_of(result, control.For)
    (token_arg,) = loop.body.block.args[1:]
    first, second = (op for op in loop.body.block.ops if isinstance(op, memory.StoreViewTko))
    assert first.token == token_arg and second.token == first.result_token
    assert terminator(loop.body.block).values == (second.result_token,)
    (after,) = top(result, memory.StoreViewTko)
    assert after.token == loop.outputs[0]


def test_nested_loops_carry_outer_variables_through_both() -> None:
    result = lower(
        "let mut acc = x.load_like(z);",
        "for i in 0..2 {",
        "    for j in 0..3 {",
        "        acc = acc * acc;",
        "    }",
        "}",
        "z.store(acc);",
    )
    outer, inner = ops_of(result, control.For)
    assert inner in outer.body.block.ops
    assert inner.init_values == outer.body.block.args[1:]  # acc and the token
    assert terminator(outer.body.block).values == inner.outputs
    (store,) = ops_of(result, memory.StoreViewTko)
    assert (store.tile, store.token) == outer.outputs


# ----------------------------------------------------------------------------- while


def test_while_lowers_to_loop_with_a_leading_conditional_break() -> None:
    result = lower(LOAD, "let mut n = 0i32;", "while n < 10i32 {", "    n += 3i32;", "}", STORE)
    (loop,) = ops_of(result, control.Loop)
    assert [v.type for v in loop.init_values] == [I32, TOKEN]
    n_arg, token_arg = loop.body.block.args
    ops = loop.body.block.ops
    cmp = next(op for op in ops if op.NAME == "cmpi")
    assert cmp.lhs == n_arg
    guard = next(op for op in ops if isinstance(op, control.If))
    assert guard.condition == cmp.result and guard.outputs == ()
    assert isinstance(terminator(guard.then_region.block), control.Yield)
    leave = terminator(guard.else_region.block)
    assert isinstance(leave, control.Break) and leave.values == (n_arg, token_arg)
    assert ops.index(guard) < ops.index(next(op for op in ops if isinstance(op, arith.AddI)))
    end = terminator(loop.body.block)
    assert isinstance(end, control.Continue) and end.values[1] == token_arg
    (store,) = ops_of(result, memory.StoreViewTko)
    assert store.token == loop.outputs[1]


# ----------------------------------------------------------------------------- if


def test_runtime_if_statement_yields_assigned_variables_from_both_branches() -> None:
    result = lower(
        LOAD,
        "let (q, _, _) = get_tile_block_id();",
        "let mut n = 5i32;",
        "if q == 0i32 {",
        "    n = 1i32;",
        "}",
        "let m = n + n;",
        STORE,
    )
    (branch,) = ops_of(result, control.If)
    assert [v.type for v in branch.outputs] == [I32, TOKEN]
    then_yield = terminator(branch.then_region.block)
    else_yield = terminator(branch.else_region.block)
    assert constant_of(result, then_yield.values[0]) == 1
    assert constant_of(result, else_yield.values[0]) == 5
    assert then_yield.values[1] == else_yield.values[1] == token_root(result)
    (add,) = ops_of(result, arith.AddI)
    assert add.lhs == add.rhs == branch.outputs[0]
    (store,) = ops_of(result, memory.StoreViewTko)
    assert store.token == branch.outputs[1]


def test_tuple_valued_if_with_else_if_nests_and_flattens_its_results() -> None:
    result = lower(
        "let t = x.load_like(z);",
        "let (q, _, _) = get_tile_block_id();",
        "let (u, c) = if q == 0i32 { (t, 1i32) }",
        "    else if q == 1i32 { (t + t, 2i32) }",
        "    else { (t * t, 3i32) };",
        "z.store(u);",
    )
    outer, inner = ops_of(result, control.If)
    assert [v.type for v in outer.outputs] == [F32_TILE, I32, TOKEN]
    assert [v.type for v in inner.outputs] == [F32_TILE, I32, TOKEN]
    assert inner in outer.else_region.block.ops
    assert terminator(outer.else_region.block).values == inner.outputs
    (store,) = ops_of(result, memory.StoreViewTko)
    assert store.tile == outer.outputs[0] and store.token == outer.outputs[2]
    constants = [
        constant_of(result, terminator(r.block).values[1])
        for r in (outer.then_region, inner.then_region, inner.else_region)
    ]
    assert constants == [1, 2, 3]


@pytest.mark.parametrize(
    ("causal", "kept", "dropped"), [("1", arith.MulF, arith.AddF), ("0", arith.AddF, arith.MulF)]
)
def test_a_compile_time_if_lowers_only_its_taken_branch(
    causal: str, kept: type, dropped: type
) -> None:
    result = lower(
        "let mut u = x.load_like(z);",
        "if CAUSAL == 1i32 {",
        "    u = u * u;",
        "} else {",
        "    u = u + u;",
        "}",
        "z.store(u);",
        values={"B": "128", "CAUSAL": causal},
        generics="<const B: i32, const CAUSAL: i32>",
    )
    assert not ops_of(result, control.If)
    (op,) = ops_of(result, kept)
    assert not ops_of(result, dropped)
    (store,) = ops_of(result, memory.StoreViewTko)
    assert store.tile == op.result and store.token == token_root(result)


def test_a_folded_if_inside_a_loop_adds_no_region() -> None:
    result = lower(
        "let mut u = x.load_like(z);",
        "for i in 0..2 {",
        "    if B == 128 {",
        "        u = u + u;",
        "    }",
        "}",
        "z.store(u);",
    )
    (loop,) = ops_of(result, control.For)
    assert not ops_of(result, control.If)
    assert [v.type for v in loop.outputs] == [F32_TILE, TOKEN]


# ----------------------------------------------------------------------------- assignment


@pytest.mark.parametrize(
    ("op", "kind"), [("+=", arith.AddI), ("-=", arith.SubI), ("*=", arith.MulI)]
)
def test_compound_assignment_lowers_to_the_binary_op(op: str, kind: type) -> None:
    result = lower(
        LOAD,
        "let (q, _, _) = get_tile_block_id();",
        "let mut n = q;",
        f"n {op} q;",
        "let m = n;",
        STORE,
    )
    (binary,) = ops_of(result, kind)
    (ids,) = ops_of(result, core.GetTileBlockId)
    assert binary.lhs == binary.rhs == ids.x


def test_float_compound_assignment_on_tiles() -> None:
    result = lower("let mut u = x.load_like(z);", "u *= u;", "u -= u;", "z.store(u);")
    (mul,) = ops_of(result, arith.MulF)
    (sub,) = ops_of(result, arith.SubF)
    assert sub.lhs == sub.rhs == mul.result


# ----------------------------------------------------------------------------- casts


@pytest.mark.parametrize(
    ("expr", "kind", "result_elem", "attrs"),
    [
        ("q as i64", convert.ExtI, ElementType.I64, {"signedness": Signedness.SIGNED}),
        ("(q as u32) as i64", convert.ExtI, ElementType.I64, {"signedness": Signedness.UNSIGNED}),
        ("q as i8", convert.TruncI, ElementType.I8, {}),
        ("q as f32", convert.IToF, ElementType.F32, {"signedness": Signedness.SIGNED}),
        ("(q as u8) as f32", convert.IToF, ElementType.F32, {"signedness": Signedness.UNSIGNED}),
        ("(q as f32) as i32", convert.FToI, ElementType.I32, {"signedness": Signedness.SIGNED}),
        ("(q as f32) as u16", convert.FToI, ElementType.I16, {"signedness": Signedness.UNSIGNED}),
        ("(q as f32) as f16", convert.FToF, ElementType.F16, {}),
        ("((q as f32) as f16) as f64", convert.FToF, ElementType.F64, {}),
    ],
)
def test_as_casts_lower_to_conversions(expr: str, kind: type, result_elem, attrs: dict) -> None:
    result = lower(LOAD, "let (q, _, _) = get_tile_block_id();", f"let c = {expr};", STORE)
    last = [
        op
        for op in ops_of(result)
        if isinstance(op, (convert.ExtI, convert.TruncI, convert.IToF, convert.FToI, convert.FToF))
    ][-1]
    assert isinstance(last, kind)
    assert last.results[0].type == TileType(result_elem, ())
    for name, value in attrs.items():
        assert getattr(last, name) == value


def test_a_cast_to_the_same_type_emits_nothing() -> None:
    result = lower(LOAD, "let (q, _, _) = get_tile_block_id();", "let c = q as i32;", STORE)
    assert not [
        op for op in ops_of(result) if op.NAME in ("exti", "trunci", "itof", "ftoi", "ftof")
    ]


@pytest.mark.parametrize(("expr", "value"), [("2.7f32 as i32", 2), ("300i32 as u8", 44)])
def test_folded_casts_convert_their_value(expr: str, value: int) -> None:
    text = kernel_text(LOAD, f"let c = {expr};", STORE)
    result = compile_text(text, "f", {"B": "128"}, Stage.BYTECODE)
    assert result.ok, [d.message for d in result.diagnostics]
    consts = [
        op.values[0]
        for op in ops_of(result, core.Constant)
        if op.result.type.element in (ElementType.I32, ElementType.I8)
    ]
    assert value in consts or (value - 256) in consts


# ----------------------------------------------------------------------------- constants


@pytest.mark.parametrize(
    ("expr", "elem", "value"),
    [
        ("f32::NEG_INFINITY", ElementType.F32, -math.inf),
        ("i32::MAX", ElementType.I32, 2**31 - 1),
        ("E::MAX", ElementType.F16, 65504.0),
        ("S[1] * S[0]", ElementType.I32, 32),
        ("K + 1i32", ElementType.I32, 9),
    ],
)
def test_named_and_folded_constants_become_constant_ops(expr: str, elem, value: float) -> None:
    result = lower(
        LOAD,
        "const K: i32 = S[1];",
        f"let c = {expr};",
        "let d = c;",
        STORE,
        values={"B": "128", "E": "f16", "S": "[4, 8]"},
        generics="<E: ElementType, const B: i32, const S: [i32; 2]>",
    )
    consts = [op for op in ops_of(result, core.Constant) if op.result.type == TileType(elem, ())]
    assert value in [op.values[0] for op in consts]


def test_mode_markers_lower_to_nothing() -> None:
    plain = lower(LOAD, STORE)
    marked = lower(LOAD, "let m = ftz::Enabled;", "let r = rounding::Zero;", STORE)
    assert len(ops_of(marked)) == len(ops_of(plain))


def test_shape_of_a_static_output_needs_no_op() -> None:
    result = lower(LOAD, "let s = z.shape();", "let u = t.broadcast(s);", STORE)
    assert not ops_of(result, core.Broadcast)  # same shape: nothing to broadcast


@pytest.mark.parametrize(
    ("expr", "expected"),
    [("x.shape()[0]", ("dim", 0)), ("x.shape()[1]", ("dim", 1)), ("z.shape()[1]", 8), ("a[1]", 4)],
)
def test_shape_and_array_indexing_lowers_to_the_element(expr: str, expected: object) -> None:
    result = lower(
        "let a = [3i32, 4i32];",
        f"for i in 0i32..{expr} {{",
        "}",
        "z.store(load_tile_like(x, z));",
        sig="z: &mut Tensor<f32, { [4, 8] }>, x: &Tensor<f32, { [-1, -1] }>",
        generics="",
        values={},
    )
    (loop,) = ops_of(result, control.For)
    if isinstance(expected, tuple):  # a dynamic extent: the (assumed) DIM slot of x
        _, x_view = ops_of(result, memory.MakeTensorView)
        assert loop.upper == x_view.dynamic_shape[expected[1]]
    else:
        assert constant_of(result, loop.upper) == expected


# ----------------------------------------------------------------------------- device functions

TWICE = """
    fn twice<E: ElementType, const N: i32>(t: Tile<E, { [N] }>) -> Tile<E, { [N] }> {
        let u = t + t;
        return u;
    }
    fn pair<const N: i32>(t: Tile<f32, { [N] }>) -> (Tile<f32, { [N] }>, i32) {
        (t * t, N)
    }
"""


def test_device_functions_are_inlined_at_each_call() -> None:
    result = lower(
        "let t = x.load_like(z);",
        "let u = twice(twice(t));",
        "let (v, n) = pair(u);",
        "z.store(v);",
        extra=TWICE,
    )
    first, second = ops_of(result, arith.AddF)
    assert second.lhs == second.rhs == first.result
    (mul,) = ops_of(result, arith.MulF)
    assert mul.lhs == second.result
    (store,) = ops_of(result, memory.StoreViewTko)
    assert store.tile == mul.result
    assert 128 in [op.values[0] for op in ops_of(result, core.Constant)]


def test_a_callee_that_stores_continues_the_callers_token_chain() -> None:
    devices = (
        "    fn put(o: &mut Tensor<f32, { [128] }>, t: Tile<f32, { [128] }>) { o.store(t); }\n"
    )
    result = lower(LOAD, "put(z, t);", "put(z, t);", extra=devices)
    first, second = ops_of(result, memory.StoreViewTko)
    assert first.token == token_root(result) and second.token == first.result_token


def test_loops_inside_callees_carry_their_mut_parameters() -> None:
    devices = """
    fn grow(mut t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> {
        for i in 0..3 {
            t = t + t;
        }
        t
    }
"""
    result = lower(LOAD, "z.store(grow(t));", extra=devices)
    (loop,) = ops_of(result, control.For)
    assert [v.type for v in loop.outputs] == [F32_TILE, TOKEN]
    (store,) = ops_of(result, memory.StoreViewTko)
    assert (store.tile, store.token) == loop.outputs


# ----------------------------------------------------------------------------- printed IR, tileiras

EVERYTHING = (
    "let mut u = x.load_like(z);",
    "for i in (0..4).step_by(2 as usize) {",
    "    u = u + u;",
    "    continue;",
    "}",
    "let mut n = 0i32;",
    "while n < 10i32 {",
    "    n += 3i32;",
    "}",
    "let (q, _, _) = get_tile_block_id();",
    "let (w, c) = if q == 0i32 { (u, 1i64) }",
    "    else if q == n { (u * u, 2i64) }",
    "    else { (u + u, n as i64) };",
    "let f = (c as f32) * 2.0f32;",
    "let h = (f as f16) as f64;",
    "let small = (c as i8) as u32;",
    "let ninf = f32::NEG_INFINITY;",
    "if CAUSAL == 1i32 {",
    "    z.store(w);",
    "} else {",
    "    z.store(twice(w));",
    "}",
    "return;",
)


def test_the_printed_ir_shows_regions_iter_values_and_terminators() -> None:
    result = lower(
        *EVERYTHING,
        values={"B": "128", "CAUSAL": "1"},
        extra=TWICE,
        generics="<const B: i32, const CAUSAL: i32>",
    )
    text = print_module(result.ir)
    lines = [line.strip() for line in text.splitlines()]
    heads = [line.split(" = ", 1)[-1].split(" ")[0] for line in lines]
    assert heads.count("for") == 1 and heads.count("loop") == 1
    assert heads.count("if") == 3  # the while guard and the two value-producing ifs
    assert "init_values[" in text and ": tile<128xf32>, token" in text
    assert any(line.startswith("continue %") for line in lines)
    assert any(line.startswith("break %") for line in lines)
    assert sum(line.startswith("yield %") for line in lines) == 4  # two nested ifs
    assert "constant {values = [-inf]} : tile<f32>" in text
    assert text.count("store_view_tko") == 1  # the dead branch is gone


@pytest.mark.parametrize("causal", ["0", "1"])
def test_control_flow_assembles_with_tileiras(tileiras, causal: str) -> None:
    text = kernel_text(*EVERYTHING, generics="<const B: i32, const CAUSAL: i32>", extra=TWICE)
    result = compile_text(text, "f", {"B": "128", "CAUSAL": causal}, Stage.CUBIN)
    assert result.ok, [render(d) for d in result.diagnostics]
    assert result.cubin and result.contract.entry_symbol


# ----------------------------------------------------------------------------- known bugs


@pytest.mark.parametrize(
    "lines",
    [
        ("let mut p = (1i32, 2i32);", "for i in 0..4 {", "    p = (i, p.0);", "}"),
        ("let mut a = [1i32, 2i32];", "for i in 0..4 {", "    a = [a[1], i];", "}"),
        (
            "let (q, _, _) = get_tile_block_id();",
            "let mut p = (1i32, t);",
            "if q == 0i32 {",
            "    p = (2i32, t + t);",
            "}",
        ),
    ],
    ids=["tuple-for", "array-for", "tuple-if"],
)
def test_carried_tuples_and_arrays_are_flattened(lines: tuple[str, ...]) -> None:
    result = lower(LOAD, *lines, STORE)
    (construct,) = [op for op in ops_of(result) if isinstance(op, (control.For, control.If))]
    assert len(construct.outputs) == 3  # two leaves and the token
    assert construct.outputs[2].type == TOKEN
    if isinstance(construct, control.For):
        iv, first, second, token = construct.body.block.args
        end = terminator(construct.body.block)
        # p = (i, p.0) / a = [a[1], i]: the leaves are permuted, not boxed
        assert end.values[2] == token
        assert {end.values[0], end.values[1]} == {iv, first} or {end.values[0], end.values[1]} == {
            second,
            iv,
        }


def test_folded_and_runtime_division_agree() -> None:
    folded = lower(LOAD, "let c = -7i32 / 2i32;", "let d = c;", STORE)
    runtime = lower(
        LOAD, "let (q, _, _) = get_tile_block_id();", "let c = (q - 7i32) / 2i32;", STORE
    )
    (div,) = ops_of(runtime, arith.DivI)
    floor = div.rounding is RoundingMode.NEGATIVE_INF
    values = [op.values[0] for op in ops_of(folded, core.Constant) if op.result.type == I32]
    assert (-4 if floor else -3) in values


def test_overflowing_constant_arithmetic_is_rejected_or_wraps() -> None:
    text = kernel_text(LOAD, "let c = 2147483647i32 + 1i32;", "let d = c;", STORE)
    result = compile_text(text, "f", {"B": "128"}, Stage.IR)
    if result.ok:
        values = [op.values[0] for op in ops_of(result, core.Constant) if op.result.type == I32]
        assert all(-(2**31) <= v < 2**31 for v in values)


def test_break_and_continue_terminate_their_branch_with_the_loop_state() -> None:
    result = lower(
        "let mut t = x.load_like(z);",
        "let mut i = 0i32;",
        "loop {",
        "    i += 1i32;",
        "    if i > 9i32 { break; }",
        "    if i == 3i32 { continue; }",
        "    t = t + t;",
        "}",
        STORE,
    )
    (loop,) = top(result, control.Loop)
    ifs = [op for op in loop.body.block.ops if isinstance(op, control.If)]
    assert [type(terminator(op.then_region.block)) for op in ifs] == [
        control.Break,
        control.Continue,
    ]
    # both exits hand over the loop's whole state: i, t and the output token
    assert all(len(terminator(op.then_region.block).values) == 3 for op in ifs)
    assert all(isinstance(terminator(op.else_region.block), control.Yield) for op in ifs)


def test_an_early_return_guard_puts_the_rest_of_the_entry_in_its_else_branch() -> None:
    result = lower(
        LOAD,
        "let (b, _, _) = get_tile_block_id();",
        "if b >= 4i32 { return; }",
        STORE,
    )
    (guard,) = top(result, control.If)
    assert not ops_of_block(guard.then_region.block, memory.StoreViewTko)
    assert ops_of_block(guard.else_region.block, memory.StoreViewTko)


def ops_of_block(block: Block, kind: type) -> list[Op]:
    return [op for op in walk(block) if isinstance(op, kind)]


@pytest.mark.parametrize(
    "lines",
    [
        ("for i in 0..3 {", "    break;", "}"),
        ("break;",),
        ("let (b, _, _) = get_tile_block_id();", "for i in 0..3 { if b > 1i32 { return; } }"),
    ],
)
def test_exits_that_cannot_be_lowered_are_diagnosed(lines: tuple[str, ...]) -> None:
    result = compile_text(kernel_text(LOAD, *lines, STORE), "f", {"B": "128"}, Stage.IR)
    assert not result.ok
    assert all(d.code.id in ("CT0002", "E0268") for d in result.diagnostics if d.is_error)
