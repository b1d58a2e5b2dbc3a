"""Type checking specialized entries: expression types, names, calls and every error kind."""

from __future__ import annotations

import time

import pytest

from lowering.pipeline import CompileResult, Stage
from parser import ast_nodes as A
from parser import codes
from parser.typecheck import MAX_ERRORS
from parser.typed_kernel import TypedKernel
from parser.types import (
    STR,
    UNIT,
    ArrayTy,
    Elem,
    RefTy,
    ScalarTy,
    ShapeTy,
    TensorTy,
    TileTy,
    TupleTy,
)
from tests.parser.support import (
    EXAMPLES,
    check,
    codes_of,
    errors,
    full_text,
    kernel,
    line_of,
    where,
)

ADD = (EXAMPLES / "add.rs").read_text()
SAXPY = (EXAMPLES / "saxpy.rs").read_text()
TILE128 = TileTy(Elem.F32, (128,))


def typed(text: str, entry: str = "f", **generics: str) -> TypedKernel:
    result = check(text, entry, generics or None)
    assert result.ok, [d.message for d in result.diagnostics]
    assert result.stage_reached is Stage.CHECK
    assert isinstance(result.kernel, TypedKernel)
    return result.kernel


def types_by_text(kernel_: TypedKernel) -> dict[str, object]:
    """The type of each expression, keyed by its source text (last one wins)."""
    return {expr.span.text: ty for expr, ty in kernel_.expr_types.items()}


def body(*lines: str) -> str:
    return "\n".join(f"        {line}" for line in lines)


def failing(text: str, **generics: str) -> CompileResult:
    result = check(text, "f", generics or None)
    assert not result.ok
    assert result.kernel is None
    return result


# ----------------------------------------------------------------------------- examples


def test_add_expression_types_and_calls() -> None:
    k = typed(ADD, "add", B="128")
    types = types_by_text(k)
    assert types["x.load_like(z)"] == TILE128
    assert types["load_tile_like(y, z)"] == TILE128
    assert types["tx + ty"] == TILE128
    assert types["z.store(tx + ty)"] == UNIT
    assert types["x"] == RefTy(TensorTy(Elem.F32, (-1,)), False)
    assert types["z"] == RefTy(TensorTy(Elem.F32, (128,)), True)
    intrinsics = sorted((call.span.text, r.intrinsic) for call, r in k.calls.items())
    assert intrinsics == [
        ("load_tile_like(y, z)", "load_tile_like"),
        ("x.load_like(z)", "load_tile_like"),
        ("z.store(tx + ty)", "store"),
    ]
    store = next(c for c in k.calls if c.span.text == "z.store(tx + ty)")
    assert [a.span.text for a in k.calls[store].args] == ["z", "tx + ty"]  # receiver first


def test_add_names_resolve_to_parameters_and_lets() -> None:
    k = typed(ADD, "add", B="1024")
    assert [(p.name, p.param_index) for p in k.params] == [("z", 0), ("x", 1), ("y", 2)]
    for path, var in k.names.items():
        assert var.name == path.name
    let_names = sorted(v.name for vs in k.lets.values() for v in vs)
    assert let_names == ["tx", "ty"]
    tx = next(v for vs in k.lets.values() for v in vs if v.name == "tx")
    assert tx.type == TileTy(Elem.F32, (1024,))
    uses_of_tx = [p for p, v in k.names.items() if v is tx]
    assert [p.span.start_line_col[0] for p in uses_of_tx] == [line_of(ADD, "z.store(tx + ty)")]


@pytest.mark.parametrize(("elem", "expected"), [("f16", Elem.F16), ("bf16", Elem.BF16)])
def test_add_generic_follows_the_element_type(elem: str, expected: Elem) -> None:
    k = typed(ADD, "add_generic", E=elem, B="256")
    types = types_by_text(k)
    assert types["load_tile_like(x, z) + load_tile_like(y, z)"] == TileTy(expected, (256,))


@pytest.mark.parametrize("elem", ["f16", "bf16", "f32", "f64"])
def test_saxpy_expression_types(elem: str) -> None:
    k = typed(SAXPY, "saxpy", E=elem, B="512")
    e = Elem(elem)
    types = types_by_text(k)
    tile = TileTy(e, (512,))
    assert types["a"] == ScalarTy(e)
    assert types["y.shape()"] == ShapeTy((512,))
    assert types["a.broadcast(y.shape())"] == tile
    assert types["y.load()"] == tile
    assert types["tile_a * tile_x"] == tile
    assert types["tile_a * tile_x + tile_y"] == tile
    resolved = {call.span.text: r.intrinsic for call, r in k.calls.items()}
    assert resolved == {
        "y.shape()": "shape",
        "a.broadcast(y.shape())": "broadcast",
        "load_tile_like(x, y)": "load_tile_like",
        "y.load()": "load_output",
        "y.store(tile_a * tile_x + tile_y)": "store",
    }


# ----------------------------------------------------------------------------- literals


def test_literal_typing() -> None:
    k = typed(
        kernel(
            body(
                "let a = 1;",
                "let b = 2u8;",
                "let c: i64 = 5;",
                "let d = 2.0f32;",
                "let g: f16 = 1.5;",
                "let h = -3i16;",
                "let i = true;",
                "let j = B;",
                "let m = a + 1;",
                "let n = 1 + a;",
                "let o = B == 128;",
                "z.store(x.load_like(z));",
            )
        )
    )
    lets = {v.name: v.type for vs in k.lets.values() for v in vs}
    assert lets == {
        "a": ScalarTy(Elem.I32),
        "b": ScalarTy(Elem.U8),
        "c": ScalarTy(Elem.I64),
        "d": ScalarTy(Elem.F32),
        "g": ScalarTy(Elem.F16),
        "h": ScalarTy(Elem.I16),
        "i": ScalarTy(Elem.BOOL),
        "j": ScalarTy(Elem.I32),
        "m": ScalarTy(Elem.I32),
        "n": ScalarTy(Elem.I32),
        "o": ScalarTy(Elem.BOOL),
    }


def test_literal_takes_the_type_of_the_other_operand() -> None:
    k = typed(kernel(body("let a = 3u16;", "let b = 1 + a;", "z.store(x.load_like(z));")))
    assert types_by_text(k)["1"] == ScalarTy(Elem.U16)


def test_unsuffixed_float_without_context_falls_back_to_f64() -> None:
    k = typed(kernel(body("let a = 1.5;", "z.store(x.load_like(z));")))
    assert [v.type for vs in k.lets.values() for v in vs] == [ScalarTy(Elem.F64)]


@pytest.mark.parametrize("statement", ["let a: f32 = 1;", "let a = 2.0f32; let b = a * 3;"])
def test_integer_literal_is_not_a_float(statement: str) -> None:
    text = kernel(body(statement, "z.store(x.load_like(z));"))
    assert codes_of(check(text)) == ["E0308"]


@pytest.mark.parametrize(
    "statement", ["let a = 99999999999;", "let a: u8 = 256;", "let a = 300u8;"]
)
def test_out_of_range_integer_literal_is_an_error(statement: str) -> None:
    text = kernel(body(statement, "z.store(x.load_like(z));"))
    result = check(text)
    assert not result.ok
    assert where(errors(result)[0])[0] == line_of(text, statement)


# ----------------------------------------------------------------------------- bindings


def test_shadowing_creates_a_new_binding() -> None:
    text = kernel(
        body("let t = x.load_like(z);", "let t = t.shape();", "let u = t;", "z.store(z.load());")
    )
    k = typed(text)
    first, second = (v for vs in k.lets.values() for v in vs if v.name == "t")
    assert first.type == TILE128
    assert second.type == ShapeTy((128,))
    assert first.id != second.id
    u = next(v for vs in k.lets.values() for v in vs if v.name == "u")
    assert u.type == ShapeTy((128,))
    # the `t` in `t.shape()` is the first binding, the `t` in `let u = t` the second
    uses = sorted(
        (p.span.start_line_col[0], v is second) for p, v in k.names.items() if p.name == "t"
    )
    assert uses == [(line_of(text, "t.shape()"), False), (line_of(text, "let u = t"), True)]


def test_block_scopes_end_at_the_closing_brace() -> None:
    text = kernel(body("{ let inner = x.load_like(z); }", "z.store(inner);"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.UNRESOLVED_NAME
    assert where(diagnostic)[0] == line_of(text, "z.store(inner)")


def test_a_slice_annotation_takes_the_array_it_is_given() -> None:
    k = typed(
        kernel(
            body(
                "let empty: &[i32] = &[];",
                "let two: &[i32] = &[1i32, 2i32];",
                "let s = Shape::<{ [128] }> { dims: empty };",
                "z.store(x.load_like(z));",
            )
        ),
        B="128",
    )
    lets = {v.name: v.type for vs in k.body.lets.values() for v in vs}
    assert lets["empty"] == ArrayTy(ScalarTy(Elem.I32), 0)
    assert lets["two"] == ArrayTy(ScalarTy(Elem.I32), 2)
    assert lets["s"] == ShapeTy((128,))
    text = kernel(body("let f: &[f32] = &[1i32];", "z.store(x.load_like(z));"))
    assert [d.code for d in errors(failing(text))] == [codes.MISMATCHED_TYPES]


def test_a_string_literal_is_a_str_reference_with_no_run_time_value() -> None:
    """basics_and_inlining's `let _basic_string = "a string.";` (also `&str`, `&'static str`)."""
    text = kernel(
        body(
            'let s = "a string.";',
            'let t: &str = "tab\\t";',
            "let u: &'static str = s;",
            "z.store(x.load_like(z));",
        )
    )
    lets = {v.name: v.type for vs in typed(text, B="128").body.lets.values() for v in vs}
    assert lets["s"] == lets["t"] == lets["u"] == RefTy(STR, mutable=False)
    assert str(lets["s"]) == "&str"
    assert check(text, "f", {"B": "128"}, stop_after=Stage.IR).ok
    bad = kernel(body('let s = "\\q";', "z.store(x.load_like(z));"))
    (diagnostic,) = errors(failing(bad))
    assert diagnostic.code is codes.UNSUPPORTED_SYNTAX and "escape sequence" in diagnostic.message


def test_a_block_level_const_may_be_an_integer_array() -> None:
    """basics_and_inlining's `const ARRAY: [i32; 2] = [1, 2]; const X0: i32 = ARRAY[0];`."""
    text = kernel(
        body(
            "const ARRAY: [i32; 2] = [1, 2];",
            "const X0: i32 = ARRAY[0];",
            "let x1: i32 = ARRAY[1];",
            "let t = x.load_like(z) + constant(X0 as f32, const_shape![B]);",
            "z.store(t);",
        )
    )
    result = check(text, "f", {"B": "128"}, stop_after=Stage.IR)
    assert result.ok, [d.message for d in result.diagnostics]
    lets = {v.name: v for vs in result.kernel.body.lets.values() for v in vs}  # type: ignore[union-attr]
    assert lets["x1"].type == ScalarTy(Elem.I32)
    wrong = kernel(body("const A: [i32; 3] = [1, 2];", "z.store(x.load_like(z));"))
    (diagnostic,) = errors(failing(wrong))
    assert diagnostic.code is codes.MISMATCHED_TYPES
    assert diagnostic.message == "mismatched types: constant `A` is a `[i32; 3]`, found `[1, 2]`"


def test_annotated_let_must_match() -> None:
    text = kernel(body("let t: Tile<f32, { [B] }> = x.load_like(z);", "z.store(t);"))
    assert typed(text)


def test_tuple_pattern_with_get_tile_block_id() -> None:
    k = typed(
        kernel(
            body(
                "let (bx, by, bz) = get_tile_block_id();",
                "let n = get_num_tile_blocks().0;",
                "let s = bx + by * bz;",
                "z.store(x.load_like(z));",
            )
        )
    )
    lets = {v.name: v.type for vs in k.lets.values() for v in vs}
    i32 = ScalarTy(Elem.I32)
    assert lets == {"bx": i32, "by": i32, "bz": i32, "n": i32, "s": i32}
    assert types_by_text(k)["get_tile_block_id()"] == TupleTy((i32, i32, i32))


def test_tuple_pattern_with_wildcards() -> None:
    typed(kernel(body("let (bx, _, _) = get_tile_block_id();", "z.store(x.load_like(z));")))


def test_tuple_pattern_of_the_wrong_arity() -> None:
    text = kernel(body("let (a, b) = get_tile_block_id();", "z.store(x.load_like(z));"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.MISMATCHED_TYPES
    assert diagnostic.primary_span.text == "(a, b)"  # type: ignore[union-attr]
    assert "(i32, i32, i32)" in diagnostic.message


def test_tuple_field_out_of_range() -> None:
    text = kernel(body("let q = get_tile_block_id().3;", "z.store(x.load_like(z));"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.UNKNOWN_METHOD
    assert diagnostic.message == "no field `3` on type `(i32, i32, i32)`"


def test_a_tuple_field_of_thousands_of_digits_is_an_unknown_field() -> None:
    field = "0" * 4400 + "1"
    text = kernel(body(f"let q = get_tile_block_id().{field};", "z.store(x.load_like(z));"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.UNKNOWN_METHOD
    assert diagnostic.message == f"no field `{field[:37]}...` on type `(i32, i32, i32)`"
    assert diagnostic.primary_span.text.endswith(field)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("statement", "literal", "elem"),
    [
        ("let a: f32 = 1e308;", "1e308", "f32"),
        ("let a = 1e39f32;", "1e39f32", "f32"),
        ("let a = 70000.0f16;", "70000.0f16", "f16"),
        ("let a = 65520.0f16;", "65520.0f16", "f16"),
        ("let a = 1e400f64;", "1e400f64", "f64"),
        ("let a: bf16 = 3.4e38;", "3.4e38", "bf16"),
    ],
)
def test_float_literals_that_round_to_infinity_are_out_of_range(
    statement: str, literal: str, elem: str
) -> None:
    """These reached the bytecode writer, which raised: an internal error."""
    (diagnostic,) = errors(failing(kernel(body(statement, "z.store(x.load_like(z));"))))
    assert diagnostic.code is codes.LITERAL_OUT_OF_RANGE
    assert diagnostic.message == f"literal out of range for `{elem}`"
    assert diagnostic.primary_span.text == literal  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "statement", ["let a = 65519.0f16;", "let a = -65504.0f16;", "let a = 3.4028234e38f32;"]
)
def test_the_largest_finite_float_literals_fit(statement: str) -> None:
    typed(kernel(body(statement, "z.store(x.load_like(z));")))


WIDE_OUTPUT = "z: &mut Tensor<f32, { [B, 2147483648] }>, x: &Tensor<f32, { [-1, -1] }>"


@pytest.mark.parametrize(
    ("sig", "statement", "dimension"),
    [
        (WIDE_OUTPUT, "", "2147483648"),
        (None, "let c = constant(1.0f32, const_shape![2, -2147483649]);", "-2147483649"),
        (None, "let p = x.partition(const_shape![1073741824 * 2]);", "1073741824 * 2"),
    ],
)
def test_shape_dimensions_outside_i32_are_out_of_range(
    sig: str | None, statement: str, dimension: str
) -> None:
    """A tensor extent of 2^31 overflowed in lowering: an internal error."""
    text = kernel(body(statement, "z.store(x.load_like(z));"), **({"sig": sig} if sig else {}))
    (diagnostic,) = errors(failing(text, B="128"))
    assert diagnostic.code is codes.LITERAL_OUT_OF_RANGE
    assert diagnostic.message == "shape dimension out of range for `i32`"
    assert diagnostic.primary_span.text == dimension  # type: ignore[union-attr]


def test_an_array_among_shape_dimensions_is_an_error_at_once() -> None:
    """`const_shape![MAP, B]` with MAP an array: the range check walked 2^32 integers looking
    for the array (an 87 s hang the fuzzer found)."""
    text = kernel(
        body(
            "const MAP: [i32; 2] = [4, 1];",
            "let p = x.partition(const_shape![MAP, B]);",
            "z.store(x.load_like(z));",
        )
    )
    started = time.perf_counter()
    (diagnostic,) = errors(failing(text, B="128"))
    assert time.perf_counter() - started < 10
    assert diagnostic.code is codes.GENERIC_ARGUMENT
    assert diagnostic.message == "all arguments of `const_shape!` must be compile-time integers"
    assert diagnostic.primary_span.text == "MAP"  # type: ignore[union-attr]


def test_checking_stops_after_the_error_limit() -> None:
    """A thousand unknown names among a thousand functions took 100 s to report (each
    error searched every name for a suggestion); the check now stops at MAX_ERRORS."""
    devices = "".join(f"    fn device_fn_{i}(x: i32) -> i32 {{ x }}\n" for i in range(1000))
    statements = [f"let a{i} = devicefn{i}(1);" for i in range(1000)]
    text = kernel(body(*statements, "z.store(x.load_like(z));"), extra=devices)
    started = time.perf_counter()
    found = errors(failing(text, B="128"))
    assert time.perf_counter() - started < 10
    assert [d.code for d in found] == [codes.UNRESOLVED_NAME] * (MAX_ERRORS - 1) + [
        codes.UNRESOLVED_NAME,
        codes.LIMIT_EXCEEDED,
    ]
    assert found[-1].message == f"checking `f` stopped after {MAX_ERRORS} errors"
    assert found[-1].primary_span.text == "f"  # type: ignore[union-attr]


def test_suggestions_still_find_a_close_name_among_many() -> None:
    devices = "".join(f"    fn helper_{i}(x: i32) -> i32 {{ x }}\n" for i in range(500))
    text = kernel(body("let a = helper_42x(1);", "z.store(x.load_like(z));"), extra=devices)
    (diagnostic,) = errors(failing(text, B="128"))
    assert diagnostic.help == ("a similar name exists: `helper_42`",)


# ----------------------------------------------------------------------------- errors

SHARED = "cannot {} `x`, as it is behind a `&` reference"


@pytest.mark.parametrize(
    ("statement", "action"),
    [
        ("x.store(t);", "store through"),
        ("store_tile(x, t);", "store through"),
        ("let p = x.partition_mut(const_shape![B]);", "mutably partition"),
        ("let u = x.load();", "load this block's output tile from"),
    ],
)
def test_writing_through_a_shared_tensor(statement: str, action: str) -> None:
    text = kernel(body("let t = x.load_like(z);", statement, "z.store(t);"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.MUTATE_SHARED
    assert diagnostic.message == SHARED.format(action)
    assert diagnostic.primary_span.text == "x"  # type: ignore[union-attr]
    assert where(diagnostic)[0] == line_of(text, statement)
    assert any("&mut Tensor<f32" in h for h in diagnostic.help)


def test_mismatched_tile_and_scalar() -> None:
    text = kernel(body("let t = x.load_like(z);", "z.store(t + 1.0f32);"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.MISMATCHED_TYPES
    assert diagnostic.message == (
        "mismatched types: `+` needs operands of the same type, found "
        "`Tile<f32, {[128]}>` and `f32`"
    )
    assert diagnostic.primary_span.text == "t + 1.0f32"  # type: ignore[union-attr]
    assert [(lb.span.text, lb.message) for lb in diagnostic.labels if not lb.primary] == [
        ("t", "`Tile<f32, {[128]}>`"),
        ("1.0f32", "`f32`"),
    ]
    assert any("broadcast" in h for h in diagnostic.help)


def test_mismatched_element_types() -> None:
    sig = "z: &mut Tensor<f32, { [B] }>, h: &mut Tensor<f16, { [B] }>"
    text = kernel(body("let s = z.load() * h.load();"), sig=sig)
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.MISMATCHED_TYPES
    assert "`Tile<f32, {[128]}>` and `Tile<f16, {[128]}>`" in diagnostic.message


def test_mismatched_shapes() -> None:
    sig = "z: &mut Tensor<f32, { [B] }>, w: &mut Tensor<f32, { [64] }>"
    text = kernel(body("let s = z.load() - w.load();"), sig=sig)
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.MISMATCHED_TYPES
    assert "`Tile<f32, {[128]}>` and `Tile<f32, {[64]}>`" in diagnostic.message


def test_store_of_a_tile_with_another_shape() -> None:
    sig = "z: &mut Tensor<f32, { [B] }>, w: &mut Tensor<f32, { [64] }>"
    text = kernel(body("z.store(w.load());"), sig=sig)
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.MISMATCHED_TYPES
    assert diagnostic.message == (
        "mismatched types: expected `Tile<f32, {[128]}>`, found `Tile<f32, {[64]}>`"
    )
    assert diagnostic.primary_span.text == "w.load()"  # type: ignore[union-attr]


def test_let_annotation_mismatch_points_at_both() -> None:
    text = kernel(body("let t: Tile<f16, { [B] }> = x.load_like(z);"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.MISMATCHED_TYPES
    assert diagnostic.primary_span.text == "x.load_like(z)"  # type: ignore[union-attr]
    secondary = [lb for lb in diagnostic.labels if not lb.primary]
    assert [(lb.span.text, lb.message) for lb in secondary] == [
        ("Tile<f16, { [B] }>", "expected due to this")
    ]


@pytest.mark.parametrize(
    "statement",
    [
        "let t: Tile<f32, { [12] }> = x.load_like(z);",
        "let s = 1.0f32.broadcast(const_shape![B, 3]);",
    ],
)
def test_tile_shapes_in_the_body_must_be_powers_of_two(statement: str) -> None:
    text = kernel(body(statement, "z.store(x.load_like(z));"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.TILE_NOT_POWER_OF_TWO
    assert where(diagnostic)[0] == line_of(text, statement)


def test_load_like_needs_an_output_as_its_second_argument() -> None:
    sig = "z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>, w: &Tensor<f32, { [-1] }>"
    text = kernel(body("z.store(x.load_like(w));"), sig=sig)
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.MISMATCHED_TYPES
    assert diagnostic.primary_span.text == "w"  # type: ignore[union-attr]


def test_load_like_needs_equal_ranks() -> None:
    sig = "z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1, -1] }>"
    text = kernel(body("z.store(x.load_like(z));"), sig=sig)
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.MISMATCHED_TYPES
    assert "rank 2 and rank 1" in diagnostic.message


def test_unknown_method_suggests_a_close_name() -> None:
    text = kernel(body("z.stroe(x.load_like(z));"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.UNKNOWN_METHOD
    assert diagnostic.message == "no method named `stroe` found for `&mut Tensor<f32, {[128]}>`"
    assert diagnostic.primary_span.text == "stroe"  # type: ignore[union-attr]
    assert diagnostic.help == ("a similar name exists: `store`",)


def test_unknown_method_on_a_tile_and_a_scalar() -> None:
    text = kernel(
        body("let t = x.load_like(z);", "t.exp();", "let n = 1i32.sqrt();", "z.store(t);")
    )
    found = errors(failing(text))
    assert [d.code for d in found] == [codes.UNKNOWN_METHOD] * 2
    assert [d.primary_span.text for d in found] == ["exp", "sqrt"]  # type: ignore[union-attr]


def test_unknown_function_suggests_a_close_name() -> None:
    text = kernel(body("z.store(load_tile_lik(x, z));"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.UNRESOLVED_NAME
    assert diagnostic.message == "cannot find function `load_tile_lik` in this scope"
    assert diagnostic.primary_span.text == "load_tile_lik"  # type: ignore[union-attr]
    assert diagnostic.help == ("a similar name exists: `load_tile_like`",)


def test_unknown_value() -> None:
    text = kernel(body("z.store(x.load_like(zz));"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.UNRESOLVED_NAME
    assert diagnostic.message == "cannot find value `zz` in this scope"
    assert diagnostic.help == ("a similar name exists: `z`",)


def test_wrong_argument_count() -> None:
    text = kernel(body("let t = x.load_like(z);", "z.store(t, t);"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.WRONG_ARG_COUNT
    assert diagnostic.message == "this function takes 1 argument(s) but 2 were supplied"
    assert "fn store" in diagnostic.notes[0]


@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("let u = t < t;", "cannot apply `<` to operands of type `Tile<f32, {[128]}>`"),
        ("let u = true + false;", "cannot apply `+` to operands of type `bool`"),
        ("let u = 1.0f32 & 2.0f32;", "cannot apply `&` to operands of type `f32`"),
        ("let u = -3u32;", "cannot negate a value of type `u32`"),
    ],
)
def test_invalid_operands(statement: str, message: str) -> None:
    text = kernel(body("let t = x.load_like(z);", statement, "z.store(t);"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.INVALID_OPERAND
    assert diagnostic.message == message


@pytest.mark.parametrize("operator", ["-", "!"])
def test_unary_operators_on_a_tile_are_e0600_as_in_rustc(operator: str) -> None:
    """cuTile's `Tile` implements neither `Neg` nor `Not`."""
    text = kernel(body("let t = x.load_like(z);", f"let u = {operator}t;", "z.store(t);"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code.id == "E0600"
    assert diagnostic.message == (
        f"cannot apply unary operator `{operator}` to type `Tile<f32, {{[128]}}>`"
    )
    assert diagnostic.primary_span.text == f"{operator}t"  # type: ignore[union-attr]
    assert where(diagnostic)[0] == line_of(text, f"let u = {operator}t;")


@pytest.mark.parametrize(
    ("statement", "what"),
    [
        ("let u = q + q;", "`+`"),
        ("let u = -q;", None),
        ("let u = exp(q);", "`exp`"),
        ("let u = reduce_max(q, 0);", "`reduce_max`"),
        ("let u = lt_tile(q, q);", "`lt_tile`"),
        ("let u = 1.0f32 as f8e4m3fn;", None),
    ],
)
def test_fp8_is_storage(statement: str, what: str | None) -> None:
    """fp8 tiles are loaded, converted and fed to mma; Tile IR has no arithmetic on them."""
    text = kernel(
        body(
            "let t = x.load_like(z);",
            "let q: Tile<f8e4m3fn, { [B] }> = convert_tile(t);",
            statement,
            "z.store(t);",
        )
    )
    (diagnostic,) = errors(failing(text))
    if what is None and "-q" in statement:  # a tile has no unary `-` at all (rustc's E0600)
        assert diagnostic.code is codes.INVALID_UNARY_OPERAND
        return
    if what is None:  # `as` converts primitive numbers only
        assert diagnostic.code is codes.INVALID_OPERAND
        assert diagnostic.message == "cannot cast `f32` as `f8e4m3fn`"
        return
    assert diagnostic.code is codes.UNSUPPORTED_TYPE
    assert (
        diagnostic.message
        == f"{what} does not apply to `f8e4m3fn` values: `f8e4m3fn` is a storage type"
    )
    assert "convert_tile" in diagnostic.help[0]


@pytest.mark.parametrize(
    ("statement", "what"),
    [
        ("let c = |a: i32| a;", "a closure"),
        ("for i in 0..=4 { }", "iterating over anything but"),
        ("let r = z.partition(const_shape![B]);", "`partition` of a `&mut Tensor` output"),
    ],
)
def test_unsupported_constructs_in_a_body(statement: str, what: str) -> None:
    text = kernel(
        body("let t = x.load_like(z);", statement, "z.store(t);"),
        extra="    fn helper(a: i32) {}\n",
    )
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.UNSUPPORTED_SYNTAX
    assert diagnostic.message.startswith(what)
    assert where(diagnostic)[0] == line_of(text, statement)


def test_all_errors_of_a_body_are_collected_in_source_order() -> None:
    text = kernel(
        body(
            "let t = x.load_like(z);",
            "x.store(t);",
            "t.foo();",
            "nope(1);",
            "let u = t + 2.0f32;",
            "let v: Tile<f32, { [6] }> = z.load();",
            "z.store(t, t);",
            "z.store(t);",
        )
    )
    found = errors(failing(text))
    assert [(d.code.id, where(d)[0]) for d in found] == [
        ("E0596", line_of(text, "x.store(t)")),
        ("E0599", line_of(text, "t.foo()")),
        ("E0425", line_of(text, "nope(1)")),
        ("E0308", line_of(text, "let u")),
        ("CT0202", line_of(text, "let v")),
        ("E0061", line_of(text, "z.store(t, t)")),
    ]


@pytest.mark.parametrize(
    "statement", ["let q = t.foo();", "let q: Tile<f16, { [B] }> = t;", "let q = x.load_like(x);"]
)
def test_a_failed_let_does_not_cascade(statement: str) -> None:
    text = kernel(body("let t = x.load_like(z);", statement, "z.store(q);"))
    found = errors(failing(text))
    assert len(found) == 1
    assert where(found[0])[0] == line_of(text, statement)


def test_only_the_requested_entry_is_checked() -> None:
    text = kernel(
        body("z.store(x.load_like(z));"),
        extra=(
            "    #[cutile::entry()]\n    fn broken(z: &mut Tensor<f32, { [4] }>) { z.nothing(); }\n"
        ),
    )
    assert typed(text)
    assert codes_of(check(text, "broken", {})) == ["E0599"]


def test_module_constants_are_usable_in_shapes_and_values() -> None:
    text = kernel(
        body("let t: Tile<f32, { [TILE] }> = x.load_like(z);", "let n = TILE * 2;", "z.store(t);"),
        sig="z: &mut Tensor<f32, { [TILE] }>, x: &Tensor<f32, { [-1] }>",
        extra="    const TILE: i32 = 32 * 2;\n",
    )
    k = typed(text)
    assert k.consts == {"TILE": 64}
    assert types_by_text(k)["TILE * 2"] == ScalarTy(Elem.I32)


def test_non_constant_module_const_is_reported() -> None:
    text = kernel(body("z.store(x.load_like(z));"), extra="    const BAD: i32 = f(1);\n")
    found = errors(check(text))
    assert [d.code for d in found] == [codes.UNSUPPORTED_SYNTAX]
    assert "`BAD`" in found[0].message
    assert found[0].primary_span.text == "f(1)"  # type: ignore[union-attr]


def test_const_shape_macro_needs_constants() -> None:
    text = kernel(body("let n = 4;", "let s = const_shape![n, 4];", "z.store(x.load_like(z));"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.GENERIC_ARGUMENT
    assert diagnostic.primary_span.text == "n"  # type: ignore[union-attr]
    assert "const_shape!" in full_text(diagnostic)


def test_const_shape_macro_types() -> None:
    k = typed(
        kernel(
            body(
                "let s = const_shape![B, 64];",
                "let r = const_shape![S];",
                "z.store(x.load_like(z));",
            ),
            generics="<const B: i32, const S: [i32; 2]>",
        ),
        B="128",
        S="[4, 8]",
    )
    types = types_by_text(k)
    assert types["const_shape![B, 64]"] == ShapeTy((128, 64))
    assert types["const_shape![S]"] == ShapeTy((4, 8))


def test_unknown_macro_is_unsupported() -> None:
    text = kernel(body("let s = shape_of![B];", "z.store(x.load_like(z));"))
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.UNSUPPORTED_SYNTAX
    assert "shape_of!" in diagnostic.message


def test_signature_errors_stop_before_the_body() -> None:
    text = kernel(body("z.nothing();"), sig="z: &mut Tensor<f32, { [0] }>")
    assert codes_of(check(text)) == ["CT0202"]


def test_ok_result_carries_the_typed_kernel() -> None:
    result = check(ADD, "add", {"B": "128"})
    assert result.ok and isinstance(result.kernel, TypedKernel)
    assert result.kernel.function.name == "add"
    assert result.kernel.generics == {"B": 128}
    assert isinstance(result.kernel.function, A.Function)


def test_tf32_is_an_mma_format_only() -> None:
    """Tile IR's addf takes f16/bf16/f32/f64: tf32 arithmetic is rejected here, not by
    tileiras."""
    text = kernel(
        body(
            "let t = x.load_like(z);",
            "let q: Tile<tf32, { [B] }> = convert_tile(t);",
            "let u = q * q;",
            "z.store(t);",
        )
    )
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code is codes.UNSUPPORTED_TYPE
    assert diagnostic.message.startswith("`*` does not apply to `tf32` values")
