"""Type checking the kernel language's control flow and mutation: `let mut`, assignment,
shadowing, `for` / `while` / `if` (runtime and compile-time), carried values, trailing
`continue;` / `return;`, `as` casts, arrays and constant indexing, block `const`s,
mode markers and associated constants."""

from __future__ import annotations

import math

import pytest

from lowering.pipeline import CompileResult
from parser import ast_nodes as A
from parser.typed_kernel import TypedKernel
from parser.types import (
    UNIT,
    ArrayTy,
    Elem,
    MarkerTy,
    ScalarTy,
    ShapeTy,
    TileTy,
    TupleTy,
)
from tests.parser.support import check, codes_of, errors, full_text, kernel, line_of, where

I32, I64, F32, BOOL = (ScalarTy(e) for e in (Elem.I32, Elem.I64, Elem.F32, Elem.BOOL))
TILE = TileTy(Elem.F32, (128,))
LOAD_STORE = ("let t = x.load_like(z);", "z.store(t);")


def body(*lines: str) -> str:
    return "\n".join(f"        {line}" for line in lines)


def src(*lines: str, generics: str = "<const B: i32>", **kw: str) -> str:
    """A kernel `f` whose body is `lines`, bracketed by a load and a store of z."""
    return kernel(body(LOAD_STORE[0], *lines, LOAD_STORE[1]), generics=generics, **kw)


def typed(text: str, **generics: str) -> TypedKernel:
    """Check `text`; generics default to B=128 (`NONE=""` passes none at all)."""
    if generics.pop("NONE", None) is not None:
        result = check(text, "f", {})
    else:
        result = check(text, "f", generics or None)
    assert result.ok, [d.message for d in result.diagnostics]
    assert isinstance(result.kernel, TypedKernel)
    return result.kernel


def failing(text: str, **generics: str) -> CompileResult:
    result = check(text, "f", generics or None)
    assert not result.ok and result.kernel is None
    return result


def by_text(k: TypedKernel) -> dict[str, object]:
    return {expr.span.text: ty for expr, ty in k.expr_types.items()}


def var(k: TypedKernel, name: str):
    """The (last) `let` binding called `name`."""
    return [v for vs in k.lets.values() for v in vs if v.name == name][-1]


def nodes(k: TypedKernel, kind: type) -> list[A.Node]:
    """Nodes of `kind` the checker recorded facts for, in source order."""
    seen = {
        n
        for table in (k.body.carried, k.body.folded_ifs, k.body.loop_vars, k.body.assigns)
        for n in table
    }
    seen |= set(k.expr_types)
    return sorted((n for n in seen if isinstance(n, kind)), key=lambda n: n.span.start)


# ----------------------------------------------------------------------------- mutation


def test_let_mut_accepts_assignment_and_every_compound_operator() -> None:
    k = typed(src("let mut n = 1i32;", "n = 5i32;", "n += 2i32;", "n -= 1i32;", "n *= 3i32;"))
    n = next(v for vs in k.lets.values() for v in vs if v.name == "n")
    assert n.mutable and n.type == I32
    assigns = sorted(k.body.assigns, key=lambda a: a.span.start)
    assert [a.op for a in assigns] == [None, "+", "-", "*"]
    assert all(k.body.assigns[a] is n for a in assigns)
    assert all(k.expr_types[a] == UNIT for a in assigns)


def test_tiles_are_assignable_too() -> None:
    k = typed(src("let mut u = t;", "u = u + t;", "u *= t;"))
    (u,) = (v for vs in k.lets.values() for v in vs if v.name == "u")
    assert u.type == TILE and u.mutable


@pytest.mark.parametrize("statement", ["n = 1i32;", "n += 1i32;", "n *= 2i32;"])
def test_assigning_an_immutable_binding_is_e0384(statement: str) -> None:
    text = src("let n = 0i32;", statement)
    result = failing(text)
    (diagnostic,) = errors(result)
    assert diagnostic.code.id == "E0384"
    assert diagnostic.message == "cannot assign twice to immutable variable `n`"
    assert where(diagnostic) == (line_of(text, statement), 9)
    first = [lb for lb in diagnostic.labels if not lb.primary]
    assert [lb.span.text for lb in first] == ["n"]
    assert first[0].span.start_line_col[0] == line_of(text, "let n = 0i32;")
    assert "`mut n`" in full_text(diagnostic)


def test_parameters_and_loop_variables_are_immutable() -> None:
    assert codes_of(failing(src("for i in 0..4 {", "    i = 0i32;", "}"))) == ["E0384"]
    assert codes_of(failing(src("x = x;"))) == ["E0384"]


def test_every_assignment_to_an_immutable_binding_is_reported() -> None:
    text = src("let n = 0i32;", "n = 1i32;", "n += 2i32;")
    result = failing(text)
    assert [where(d)[0] for d in errors(result)] == [
        line_of(text, "n = 1i32;"),
        line_of(text, "n += 2i32;"),
    ]


@pytest.mark.parametrize(
    ("statement", "found"),
    [("n = 1.0f32;", "f32"), ("n += 1i64;", "i64"), ("n = t;", "Tile<f32, {[128]}>")],
)
def test_assigned_value_must_have_the_variable_type(statement: str, found: str) -> None:
    text = src("let mut n = 0i32;", statement)
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code.id == "E0308"
    assert diagnostic.message == f"mismatched types: expected `i32`, found `{found}`"
    assert "expected due to the type of this variable" in full_text(diagnostic)


def test_assigning_to_something_other_than_a_local_is_unsupported() -> None:
    result = failing(src("let mut p = (1i32, 2i32);", "p.0 = 3i32;"))
    assert codes_of(result) == ["CT0002"]


def test_assigning_an_unknown_name_is_e0425() -> None:
    assert codes_of(failing(src("nope = 1i32;"))) == ["E0425"]


def test_a_failed_let_does_not_cascade_into_its_assignments() -> None:
    assert codes_of(failing(src("let mut n = nope;", "n = 1i32;", "n += 2i32;"))) == ["E0425"]


def test_invalid_compound_operator_is_one_e0369() -> None:
    result = failing(src("let mut b = true;", "b += true;"))
    assert codes_of(result) == ["E0369"]


# ----------------------------------------------------------------------------- shadowing


def test_shadowing_makes_a_new_binding_that_may_change_type_and_mutability() -> None:
    text = src("let n = 1i32;", "let n = n as f32;", "let mut n = n;", "n += 1.0f32;")
    k = typed(text)
    ns = [v for vs in k.lets.values() for v in vs if v.name == "n"]
    assert [(v.type, v.mutable) for v in ns] == [(I32, False), (F32, False), (F32, True)]
    assert len({v.id for v in ns}) == 3
    (assign,) = k.body.assigns
    assert k.body.assigns[assign] is ns[2]


def test_a_shadow_inside_a_loop_ends_with_the_loop_body_and_is_not_carried() -> None:
    k = typed(src("let mut n = 1i32;", "for i in 0..2 {", "    let n = i;", "}", "n += 1i32;"))
    (loop,) = nodes(k, A.ForExpr)
    assert k.body.carried[loop] == ()
    outer = next(v for vs in k.lets.values() for v in vs if v.name == "n" and v.mutable)
    assert k.body.assigns[next(iter(k.body.assigns))] is outer


# ----------------------------------------------------------------------------- loops


def test_for_loop_variable_is_i32_and_scoped_to_the_body() -> None:
    k = typed(src("let mut s = 0i32;", "for i in 0..8 {", "    s += i;", "}"))
    (loop,) = nodes(k, A.ForExpr)
    var = k.body.loop_vars[loop]
    assert var is not None and var.name == "i" and var.type == I32 and not var.mutable
    assert k.expr_types[loop] == UNIT
    result = failing(src("for i in 0..4 {", "}", "let j = i;"))
    assert codes_of(result) == ["E0425"]


def test_a_wildcard_loop_pattern_binds_nothing() -> None:
    k = typed(src("let mut s = 0i32;", "for _ in 0..8 {", "    s += 1i32;", "}"))
    (loop,) = nodes(k, A.ForExpr)
    assert k.body.loop_vars[loop] is None


@pytest.mark.parametrize(
    "step", ["2", "2i32", "2i64", "2 as usize", "(B / 64) as usize", "B as usize"]
)
def test_step_by_accepts_any_integer(step: str) -> None:
    typed(src("let mut s = 0i32;", f"for i in (0..B).step_by({step}) {{", "    s += i;", "}"))


@pytest.mark.parametrize(
    ("header", "found"),
    [
        ("for i in 0i64..4i64 {", "i64"),
        ("for i in 0..4.0f32 {", "f32"),
        ("for i in (0..4).step_by(1.0f32) {", "f32"),
        ("for i in 0..t {", "Tile<f32, {[128]}>"),
    ],
)
def test_range_bounds_must_be_i32_and_steps_integers(header: str, found: str) -> None:
    text = src(header, "}")
    result = failing(text)
    assert codes_of(result) == ["E0308"]
    assert f"found `{found}`" in errors(result)[0].message


@pytest.mark.parametrize("iterable", ["0..=4", "[1i32, 2i32]", "(0..4).rev()", "0..", "..4", "x"])
def test_other_iterables_are_unsupported(iterable: str) -> None:
    text = src(f"for i in {iterable} {{", "}")
    result = failing(text)
    assert codes_of(result) == ["CT0002"]
    assert where(errors(result)[0])[0] == line_of(text, "for i in")


def test_while_condition_must_be_bool() -> None:
    text = src("while 1i32 {", "}")
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code.id == "E0308" and "expected `bool`, found `i32`" in diagnostic.message


def test_runtime_loop_bounds_may_use_locals_and_partition_counts() -> None:
    text = kernel(
        body(
            "let px = x.partition(const_shape![64]);",
            "let n = num_tiles(&px, 0);",
            "let mut acc = px.load([0i32]);",
            "for j in 1i32..n {",
            "    acc = acc + px.load([j]);",
            "}",
            "z.store(acc);",
        ),
        sig="z: &mut Tensor<f32, { [64] }>, x: &Tensor<f32, { [-1] }>",
        generics="",
    )
    k = typed(text, NONE="")
    (loop,) = nodes(k, A.ForExpr)
    assert [v.name for v in k.body.carried[loop]] == ["acc"]


# ----------------------------------------------------------------------------- carried values


def test_carried_variables_are_outer_mutables_assigned_inside_in_first_seen_order() -> None:
    k = typed(
        src(
            "let mut a = 0i32;",
            "let mut u = t;",
            "let mut untouched = 1i32;",
            "for i in 0..4 {",
            "    let mut local = i;",
            "    local += 1i32;",
            "    u = u + t;",
            "    a += local;",
            "    a += 1i32;",
            "}",
        )
    )
    (loop,) = nodes(k, A.ForExpr)
    assert [v.name for v in k.body.carried[loop]] == ["u", "a"]


def test_nested_constructs_each_carry_what_they_assign() -> None:
    k = typed(
        src(
            "let mut a = 0i32;",
            "let mut b = 0i32;",
            "let (q, _, _) = get_tile_block_id();",
            "for i in 0..4 {",
            "    b += 1i32;",
            "    let mut n = 0i32;",
            "    while n < i {",
            "        n += 1i32;",
            "        if q == n {",
            "            a += n;",
            "        }",
            "    }",
            "}",
        )
    )
    (outer,) = nodes(k, A.ForExpr)
    (inner,) = nodes(k, A.WhileExpr)
    (branch,) = nodes(k, A.IfExpr)
    assert [v.name for v in k.body.carried[outer]] == ["b", "a"]
    assert [v.name for v in k.body.carried[inner]] == ["n", "a"]
    assert [v.name for v in k.body.carried[branch]] == ["a"]


def test_assigning_a_view_inside_a_loop_is_unsupported() -> None:
    text = src(
        "let mut p = x.partition(const_shape![128]);",
        "for i in 0..4 {",
        "    p = x.partition(const_shape![128]);",
        "}",
    )
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code.id == "CT0002"
    assert "assigning a `Partition<f32, {[128]}>` inside a loop or `if`" in diagnostic.message
    assert where(diagnostic)[0] == line_of(text, "    p = x.partition")


def test_tuples_and_arrays_may_be_carried() -> None:
    k = typed(
        src(
            "let mut p = (0i32, t);",
            "let mut a = [0i32, 1i32];",
            "for i in 0..4 {",
            "    p = (i, p.1 + t);",
            "    a = [a[1], i];",
            "}",
        )
    )
    (loop,) = nodes(k, A.ForExpr)
    assert [(v.name, v.type) for v in k.body.carried[loop]] == [
        ("p", TupleTy((I32, TILE))),
        ("a", ArrayTy(I32, 2)),
    ]


# ----------------------------------------------------------------------------- if / else


def test_runtime_if_as_a_statement_and_as_an_expression() -> None:
    k = typed(
        src(
            "let (q, _, _) = get_tile_block_id();",
            "let mut n = 0i32;",
            "if q == 0i32 {",
            "    n = 1i32;",
            "}",
            "let v = if q > 1i32 { 2.0f32 } else { 3.0f32 };",
        )
    )
    statement, expression = nodes(k, A.IfExpr)
    assert k.expr_types[statement] == UNIT and k.expr_types[expression] == F32
    assert [v.name for v in k.body.carried[statement]] == ["n"]
    assert k.body.carried[expression] == ()
    assert not k.body.folded_ifs


def test_tuple_valued_if_with_else_if_chains() -> None:
    k = typed(
        src(
            "let (q, _, _) = get_tile_block_id();",
            "let (u, c) = if q == 0i32 {",
            "    (t, 1i32)",
            "} else if q == 1i32 {",
            "    (t + t, 2i32)",
            "} else {",
            "    (t * t, 3i32)",
            "};",
            "let w = u;",
        )
    )
    outer, inner = nodes(k, A.IfExpr)
    assert k.expr_types[outer] == k.expr_types[inner] == TupleTy((TILE, I32))
    assert outer.else_branch is inner
    assert var(k, "u").type == TILE and var(k, "c").type == I32


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (("let v = if q == 0i32 { 1i32 } else { 2.0f32 };",), "`i32` and `f32`"),
        (("let v = if q == 0i32 { 1i32 };",), "`i32` and `()`"),
        (("let v = if q == 0i32 { t } else { 1.0f32 };",), "`Tile<f32, {[128]}>` and `f32`"),
        (
            (
                "let v = if q == 0i32 { (t, 1i32) }",
                "    else if q == 1i32 { (t, 2i64) } else { (t, 3i64) };",
            ),
            "incompatible types",
        ),
    ],
)
def test_branches_of_a_runtime_if_must_agree(lines: tuple[str, ...], message: str) -> None:
    text = src("let (q, _, _) = get_tile_block_id();", *lines)
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code.id == "E0308"
    assert message in diagnostic.message


def test_if_condition_must_be_bool() -> None:
    (diagnostic,) = errors(failing(src("if 1i32 {", "}")))
    assert diagnostic.code.id == "E0308" and "expected `bool`, found `i32`" in diagnostic.message


def test_a_runtime_if_cannot_produce_views_or_shapes() -> None:
    text = src(
        "let (q, _, _) = get_tile_block_id();",
        "let s = if q == 0i32 { z.shape() } else { z.shape() };",
    )
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code.id == "CT0002"
    assert "an `if` producing `Shape<{[128]}>` at run time" in diagnostic.message


# ----------------------------------------------------------------------------- compile-time if

CONST_IF = "<const B: i32, const CAUSAL: i32>"


@pytest.mark.parametrize("causal", ["0", "1"])
def test_compile_time_if_checks_only_the_taken_branch(causal: str) -> None:
    text = src(
        "let mut n = 0i32;",
        "if CAUSAL == 1i32 {",
        "    n = 1i32;",
        "} else {",
        "    n = not_defined_anywhere;",
        "    n += 1.0f32;",
        "}",
        generics=CONST_IF,
    )
    result = check(text, "f", {"B": "128", "CAUSAL": causal})
    if causal == "1":
        assert result.ok, [d.message for d in result.diagnostics]
        (branch,) = nodes(result.kernel, A.IfExpr)
        assert result.kernel.body.folded_ifs == {branch: True}
        assert branch not in result.kernel.body.carried
    else:
        assert codes_of(result) == ["E0425", "E0308"]
        assert all(where(d)[0] > line_of(text, "} else {") for d in errors(result)), (
            "only the else branch is checked"
        )


@pytest.mark.parametrize(("causal", "expected"), [("1", I32), ("0", F32)])
def test_a_folded_if_takes_the_type_of_its_taken_branch(causal: str, expected) -> None:
    text = src("let v = if CAUSAL == 1i32 { 1i32 } else { 2.0f32 };", generics=CONST_IF)
    k = typed(text, B="128", CAUSAL=causal)
    assert var(k, "v").type == expected


@pytest.mark.parametrize(("mode", "taken"), [("0", 0), ("1", 1), ("7", 2)])
def test_else_if_chains_fold_to_one_branch(mode: str, taken: int) -> None:
    branches = ["t + t", "t * t", "t - t"]
    text = src(
        f"let u = if CAUSAL == 0i32 {{ {branches[0]} }} "
        f"else if CAUSAL == 1i32 {{ {branches[1]} }} else {{ {branches[2]} }};",
        generics=CONST_IF,
    )
    k = typed(text, B="128", CAUSAL=mode)
    binaries = {e.span.text for e in k.expr_types if isinstance(e, A.Binary)}
    checked = {b for b in branches if b in binaries}
    assert checked == {branches[taken]}
    assert all(isinstance(v, bool) for v in k.body.folded_ifs.values())


def test_conditions_on_block_consts_and_generic_arithmetic_fold() -> None:
    k = typed(src("const K: i32 = 2;", "if K * B == 256 {", "}", "if B / K < 64 {", "}"), B="128")
    first, second = nodes(k, A.IfExpr)
    assert k.body.folded_ifs == {first: True, second: False}


@pytest.mark.parametrize(
    "condition", ["CAUSAL == 1i32 && B == 128", "CAUSAL == 1i32 || B == 64", "!(CAUSAL == 0i32)"]
)
def test_boolean_connectives_of_constants_fold(condition: str) -> None:
    text = src(f"if {condition} {{", "} else {", "    let v = not_defined;", "}", generics=CONST_IF)
    k = typed(text, B="128", CAUSAL="1")
    (branch,) = nodes(k, A.IfExpr)
    assert k.body.folded_ifs[branch] is True


def test_conditions_on_locals_never_fold() -> None:
    k = typed(src("let c = 1i32;", "if c == 1i32 {", "}"))
    (branch,) = nodes(k, A.IfExpr)
    assert branch not in k.body.folded_ifs and branch in k.body.carried


def test_a_constant_non_bool_condition_is_a_type_error() -> None:
    assert codes_of(failing(src("if B {", "}"))) == ["E0308"]


# ----------------------------------------------------------------------------- continue / return


def test_trailing_continue_and_return_are_accepted() -> None:
    typed(
        kernel(
            body(
                "let t = x.load_like(z);",
                "let mut s = 0i32;",
                "for i in 0..3 {",
                "    s += i;",
                "    continue;",
                "}",
                "while s < 10i32 {",
                "    s += 1i32;",
                "    continue;",
                "}",
                "z.store(t);",
                "return;",
            )
        )
    )


@pytest.mark.parametrize(
    ("lines", "what"),
    [
        (("for i in 0..3 {", "    break;", "}"), "`break` out of a `for` loop"),
        (("return;", "let j = 1i32;"), "`return` before the end of the function"),
    ],
)
def test_early_exits_are_unsupported(lines: tuple[str, ...], what: str) -> None:
    (diagnostic,) = errors(failing(src(*lines)))
    assert diagnostic.code.id == "CT0002" and what in diagnostic.message


# ----------------------------------------------------------------------------- casts


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("n as i64", Elem.I64),
        ("n as i8", Elem.I8),
        ("n as u32", Elem.U32),
        ("n as f32", Elem.F32),
        ("n as f16", Elem.F16),
        ("f as i32", Elem.I32),
        ("f as f64", Elem.F64),
        ("n as usize", Elem.U64),
        ("n as isize", Elem.I64),
        ("n as E", Elem.BF16),
        ("(n as i64) as u8", Elem.U8),
    ],
)
def test_as_casts_between_scalar_numbers(expr: str, expected: Elem) -> None:
    text = src(
        "let n = 3i32;",
        "let f = 2.5f32;",
        f"let c = {expr};",
        generics="<E: ElementType, const B: i32>",
    )
    k = typed(text, B="128", E="bf16")
    assert by_text(k)[expr] == ScalarTy(expected)


@pytest.mark.parametrize(
    ("expr", "shown"),
    [
        ("t as f16", "Tile<f32, {[128]}>"),
        ("x as f32", "&Tensor<f32, {[-1]}>"),
        ("1i32 as foo", "i32"),
    ],
)
def test_casts_of_non_scalars_or_to_non_scalars_are_e0369(expr: str, shown: str) -> None:
    (diagnostic,) = errors(failing(src(f"let c = {expr};")))
    assert diagnostic.code.id == "E0369"
    assert diagnostic.message.startswith(f"cannot cast `{shown}` as")


def test_casts_of_constants_fold() -> None:
    k = typed(src("let c = B as i64;"), B="128")
    cast = next(e for e in k.expr_types if isinstance(e, A.Cast))
    assert k.body.consts[cast] == 128


# ----------------------------------------------------------------------------- arrays, indexing

ARRAYS = "<const B: i32, const S: [i32; 2]>"


def test_array_literals_are_typed_as_fixed_arrays() -> None:
    k = typed(src("let (q, _, _) = get_tile_block_id();", "let a = [q, 2i32, 3];"))
    assert by_text(k)["[q, 2i32, 3]"] == ArrayTy(I32, 3)


def test_const_generic_arrays_index_to_constants() -> None:
    k = typed(src("let m = S[0];", "let n = S[1] * S[0];", generics=ARRAYS), B="128", S="[4, 8]")
    consts = {e.span.text: k.body.consts.get(e) for e in k.expr_types}
    assert consts["S[0]"] == 4 and consts["S[1] * S[0]"] == 32
    assert by_text(k)["S"] == ArrayTy(I32, 2)


def test_shape_indexing_types_as_i32() -> None:
    text = kernel(
        body("let m = x.shape()[0];", "let n = x.shape()[1];", "let s = z.shape()[1];"),
        sig="z: &mut Tensor<f32, { [4, 8] }>, x: &Tensor<f32, { [-1, 8] }>",
        generics="",
    )
    k = typed(text, NONE="")
    types = by_text(k)
    assert types["x.shape()[0]"] == types["x.shape()[1]"] == I32
    assert types["z.shape()"] == ShapeTy((4, 8))


@pytest.mark.parametrize(
    ("lines", "code", "message"),
    [
        (("let a = S[2];",), "E0308", "index 2 is out of bounds for length 2"),
        (
            ("let (q, _, _) = get_tile_block_id();", "let a = S[q];"),
            "CT0002",
            "compile-time constant",
        ),
        (("let n = 1i32;", "let a = n[0];"), "CT0002", "indexing a value of type `i32`"),
        (("let a = [1i32, 2i64];",), "E0308", "expected `i32`, found `i64`"),
    ],
)
def test_array_and_index_errors(lines: tuple[str, ...], code: str, message: str) -> None:
    result = check(src(*lines, generics=ARRAYS), "f", {"B": "128", "S": "[4, 8]"})
    (diagnostic,) = errors(result)
    assert diagnostic.code.id == code and message in diagnostic.message


def test_a_failed_block_const_does_not_cascade() -> None:
    result = check(
        src("const K: i32 = nothing;", "let a = S[K];", generics=ARRAYS),
        "f",
        {"B": "128", "S": "[4, 8]"},
    )
    assert len(errors(result)) == 1


# ----------------------------------------------------------------------------- consts, markers


def test_block_consts_are_scoped_typed_and_usable_in_shapes() -> None:
    k = typed(
        src(
            "const K: i32 = B / 4;",
            "let s = const_shape![K, 2 * K];",
            "let v = K + 1i32;",
        ),
        B="128",
    )
    types = by_text(k)
    assert types["const_shape![K, 2 * K]"] == ShapeTy((32, 64))
    assert types["K + 1i32"] == I32
    result = check(src("{", "    const K: i32 = 4;", "}", "let v = K;"), "f", {"B": "128"})
    assert codes_of(result) == ["E0425"]


def test_mode_markers_are_values_of_their_own_type() -> None:
    k = typed(src("let m = ftz::Enabled;", "let r = rounding::NearestEven;"))
    types = by_text(k)
    assert types["ftz::Enabled"] == MarkerTy("ftz", "Enabled")
    assert types["rounding::NearestEven"] == MarkerTy("rounding", "NearestEven")


@pytest.mark.parametrize(
    ("expr", "elem", "value"),
    [
        ("f32::NEG_INFINITY", Elem.F32, -math.inf),
        ("f32::INFINITY", Elem.F32, math.inf),
        ("i32::MAX", Elem.I32, 2**31 - 1),
        ("i32::MIN", Elem.I32, -(2**31)),
        ("u8::MAX", Elem.U8, 255),
        ("E::MAX", Elem.F16, 65504.0),
        ("E::ZERO", Elem.F16, 0.0),
    ],
)
def test_associated_constants_fold(expr: str, elem: Elem, value: float) -> None:
    text = src(f"let c = {expr};", generics="<E: ElementType, const B: i32>")
    k = typed(text, B="128", E="f16")
    path = next(e for e in k.expr_types if e.span.text == expr)
    assert k.expr_types[path] == ScalarTy(elem)
    assert k.body.consts[path] == value


@pytest.mark.parametrize("expr", ["f32::FOO", "ftz::Maybe", "bool::MAX", "nothing::Enabled"])
def test_unknown_markers_and_constants_are_e0425(expr: str) -> None:
    assert codes_of(failing(src(f"let c = {expr};"))) == ["E0425"]
