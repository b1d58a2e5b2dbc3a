"""Typing of `cuda_tile_print!` / `cuda_tile_assert!`, `Shape`/`Array` struct literals,
view annotations (`Partition`, `PartitionMut`, `Array`, `PartitionIndex`), and the raw
view loads `load_view_tko` / `load_pipelined` and `get_shape_dim`."""

from __future__ import annotations

import pytest

from lowering.pipeline import Stage
from parser import codes
from parser.printf_format import conversion, format_pieces, printf_format, unescape
from parser.render import render
from parser.types import (
    ArrayTy,
    Elem,
    OptionTy,
    PartitionIndexTy,
    PartitionTy,
    ScalarTy,
    ShapeTy,
    TileTy,
)
from tests.parser.prelude_support import compile_body, lets, primary_text, the_error
from tests.parser.support import check, full_text, kernel

I32 = ScalarTy(Elem.I32)
PARTITION = "let p = x.partition(const_shape![4, 64]);"
LOAD = "load_view_tko(&p, [0i32, 1i32], ordering::Weak, scope::TileBlock, {latency}, {tma})"


def ok(body: str, **kw: object) -> None:
    result = compile_body(body, **kw)  # type: ignore[arg-type]
    assert result.ok, [d.message for d in result.diagnostics]


# ----------------------------------------------------------------------------- format strings


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (r"a\nb", "a\nb"),
        (r"tab\t\"q\" \\ \0", 'tab\t"q" \\ \0'),
        (r"\x41\u{1F600}\u{4_1}", "A\U0001f600A"),
        ("line \\\n      next", "line next"),
        (r"\q", None),
        (r"\u{110000}", None),
        (r"\x4", None),
    ],
)
def test_unescape_follows_rust_string_escapes(raw: str, text: str | None) -> None:
    assert unescape(raw) == text


def test_format_pieces_split_placeholders_and_keep_brace_escapes() -> None:
    assert format_pieces(r"x={} {{y}} {}\n") == ["x=", None, " {y} ", None, "\n"]
    assert format_pieces("no args") == ["no args"]
    assert "`{:?}`" in format_pieces("{:?}")  # type: ignore[operator]
    assert "`{0}`" in format_pieces("a {0}")  # type: ignore[operator]
    assert "unmatched `}`" in format_pieces("a } b")  # type: ignore[operator]
    assert "escape" in format_pieces(r"\q")  # type: ignore[operator]


@pytest.mark.parametrize(
    ("elem", "spec"),
    [
        (Elem.F32, "%f"),
        (Elem.F16, "%f"),
        (Elem.BF16, "%f"),
        (Elem.F64, "%f"),
        (Elem.I32, "%i"),
        (Elem.I8, "%i"),
        (Elem.BOOL, "%i"),
        (Elem.U32, "%u"),
        (Elem.U8, "%u"),
        (Elem.I64, "%lli"),
        (Elem.U64, "%llu"),
    ],
)
def test_each_placeholder_becomes_the_conversion_of_its_element_type(elem: Elem, spec: str) -> None:
    assert conversion(elem) == spec


def test_printf_format_escapes_percent_signs() -> None:
    pieces = format_pieces(r"{}% of {}\n")
    assert not isinstance(pieces, str)
    assert printf_format(pieces, [Elem.F32, Elem.I64]) == "%f%% of %lli\n"


# ----------------------------------------------------------------------------- print / assert


def test_print_and_assert_accept_scalars_and_tiles() -> None:
    ok(
        """
        let pid: (i32, i32, i32) = get_tile_block_id();
        cuda_tile_print!("block {} of {}: {} {}\\n", pid.0, n, s, t);
        cuda_tile_print!("no arguments, {{braces}}\\n");
        cuda_tile_print!("{}", 3u64);
        cuda_tile_assert!(pid.0 >= 0i32, "negative block id");
        cuda_tile_assert!(eq_tile(t, t), "a NaN");
        cuda_tile_assert!(true, "always");
        """
    )


@pytest.mark.parametrize(
    ("body", "wanted", "given"),
    [
        ('cuda_tile_print!("{} {}\\n", n);', 2, 1),
        ('cuda_tile_print!("{}\\n", n, s);', 1, 2),
        ('cuda_tile_print!("hello\\n", n);', 0, 1),
    ],
)
def test_print_placeholders_must_match_the_arguments(body: str, wanted: int, given: int) -> None:
    error = the_error(body)
    assert error.code is codes.WRONG_ARG_COUNT
    assert error.message == (
        f"the format string has {wanted} `{{}}` placeholder(s) but {given} argument(s) "
        "were supplied"
    )
    assert primary_text(error) == body.rstrip(";")


@pytest.mark.parametrize(
    ("body", "code", "text", "culprit"),
    [
        ('cuda_tile_print!("{:?}", n);', codes.UNSUPPORTED_SYNTAX, "`{:?}`", '"{:?}"'),
        ('cuda_tile_print!("a } b");', codes.UNSUPPORTED_SYNTAX, "unmatched `}`", '"a } b"'),
        (r'cuda_tile_print!("\q");', codes.UNSUPPORTED_SYNTAX, "escape", r'"\q"'),
        ("cuda_tile_print!(n);", codes.MISMATCHED_TYPES, "must be a string literal", "n"),
        ('cuda_tile_print!("{}", x);', codes.MISMATCHED_TYPES, "scalars and tiles", "x"),
        ("cuda_tile_assert!(n > 0i32);", codes.WRONG_ARG_COUNT, "1 was supplied", None),
        (
            'cuda_tile_assert!(n > 0i32, "a", "b");',
            codes.WRONG_ARG_COUNT,
            "3 were supplied",
            None,
        ),
        ("cuda_tile_assert!(n > 0i32, n);", codes.MISMATCHED_TYPES, "string literal", "n"),
        ('cuda_tile_assert!(n, "m");', codes.MISMATCHED_TYPES, "found `i32`", "n"),
        ('cuda_tile_assert!(t, "m");', codes.MISMATCHED_TYPES, "Tile<f32", "t"),
    ],
)
def test_print_and_assert_errors(
    body: str, code: codes.DiagnosticCode, text: str, culprit: str | None
) -> None:
    error = the_error(body)
    assert error.code is code
    assert text in full_text(error)
    assert primary_text(error) == (culprit or body.rstrip(";"))


# ----------------------------------------------------------------------------- struct literals


def test_shape_and_array_literals_take_the_static_entries_from_their_generic() -> None:
    types = lets(
        """
        let rows: i32 = n * 2i32;
        let a = Shape::<{ [-1, -1, D] }> { dims: &[rows, n] };
        let b = Array::<{ [-1, -1, 1] }> { dims: &[n * D, D] };
        let c = Array::<{ [1, 0] }> { dims: &[] };
        let d = Array::<{ [1, 0] }> { dims: &[1i32, 0i32] };
        let e = Shape::<{ [4, 64] }> { dims: &[] };
        let f: Shape<{ [-1, 64] }> = Shape::<{ [-1, 64] }> { dims: &[n] };
        """,
        params="<const D: i32>",
        values={"D": "64"},
    )
    assert types["a"] == ShapeTy((-1, -1, 64))
    strides, swap, same = types["b"], types["c"], types["d"]
    assert isinstance(strides, ArrayTy) and isinstance(swap, ArrayTy) and isinstance(same, ArrayTy)
    assert strides == ArrayTy(I32, 3) and strides.dims == (-1, -1, 1)
    assert swap.dims == same.dims == (1, 0)
    assert str(types["c"]) == "Array<{[1, 0]}>"
    assert types["e"] == ShapeTy((4, 64))
    assert types["f"] == ShapeTy((-1, 64))


def test_static_literals_fold_and_work_where_const_shape_and_const_array_do() -> None:
    types = lets(
        """
        let swap = Array::<{ [1, 0] }> { dims: &[1i32, 0i32] };
        let u: Tile<f32, { [64, 4] }> = permute(t, swap);
        let v: Tile<f32, { [64, 4] }> = permute(t, Array::<{ [1, 0] }> { dims: &[] });
        let w = t.reshape(Shape::<{ [16, 16] }> { dims: &[] });
        """
    )
    assert types["u"] == types["v"] == TileTy(Elem.F32, (64, 4))
    assert types["w"] == TileTy(Elem.F32, (16, 16))


def test_a_run_time_value_at_a_static_entry_takes_the_types_extent() -> None:
    """As in cuTile Rust (basics_and_inlining's `Shape::<{[128, 256]}> { dims:
    &[num_pid.0, 256i32] }`): the type's static entries are the ones used."""
    types = lets("let a = Shape::<{ [-1, 64] }> { dims: &[n, n] };")
    assert types["a"] == ShapeTy((-1, 64))
    text = kernel(
        "        let n: i32 = get_num_tile_blocks().0;\n"
        "        let s: Shape<{ [128] }> = Shape::<{ [128] }> { dims: &[n] };\n"
        "        z.store(x.load_like(z).reshape(s));"
    )
    result = check(text, stop_after=Stage.IR)
    assert result.ok, [render(d) for d in result.diagnostics]


@pytest.mark.parametrize(
    ("body", "code", "text", "culprit"),
    [
        (
            "let a = Shape::<{ [-1, 64] }> { dims: &[] };",
            codes.MISMATCHED_TYPES,
            "`Shape<{[-1, 64]}>` has 1 runtime (`-1`) entry, but `dims` lists 0 values",
            "&[]",
        ),
        (
            "let a = Shape::<{ [-1, -1, 4] }> { dims: &[n] };",
            codes.MISMATCHED_TYPES,
            "has 2 runtime (`-1`) entries, but `dims` lists 1 value",
            "&[n]",
        ),
        (
            "let a = Array::<{ [1, 0] }> { dims: &[0i32, 1i32] };",
            codes.MISMATCHED_TYPES,
            "entry 0 of `dims` must be 1",
            "&[0i32, 1i32]",
        ),
        ("let a = Shape::<{ [-1] }> { dims: &[s] };", codes.MISMATCHED_TYPES, "`f32`", "s"),
        ("let a = Array::<{ [1] }> { size: &[] };", codes.UNKNOWN_FIELD, "`size`", "&[]"),
        ("let a = Array::<{ [1] }> { };", codes.MISSING_FIELD, "`dims`", None),
        ("let a = Array { dims: &[] };", codes.UNSUPPORTED_SYNTAX, "const generic", None),
        ("let a = Point { dims: &[] };", codes.UNSUPPORTED_SYNTAX, "`Point`", None),
        ("let a = Shape::<{ [-1] }> { dims: t };", codes.MISMATCHED_TYPES, "`&[i32]`", "t"),
    ],
)
def test_struct_literal_errors(
    body: str, code: codes.DiagnosticCode, text: str, culprit: str | None
) -> None:
    error = the_error(body)
    assert error.code is code
    assert text in full_text(error)
    if culprit is not None:
        assert primary_text(error) == culprit
    else:
        assert primary_text(error) == body.split(" = ", 1)[1].rstrip(";")


# ----------------------------------------------------------------------------- annotations


def test_view_annotations_resolve_to_the_values_types() -> None:
    types = lets(
        """
        let p: Partition<f32, { [BM, 64] }> = x.partition(const_shape![BM, 64]);
        let q: Partition<'a, f32, { [BM, 32] }> = x.partition(const_shape![BM, 32]);
        let mut pz: PartitionMut<f32, { [2, 64] }> = z.partition_mut(const_shape![2, 64]);
        let perm: Array<{ [1, 0] }> = const_array![1, 0];
        let cgen: Array<{ [BM, 1] }> = const_array![4, 1];
        let dyn_strides: Array<{ [-1, 1] }> = Array::<{ [-1, 1] }> { dims: &[n] };
        """,
        params="<const BM: i32>",
        values={"BM": "4"},
    )
    assert types["p"] == PartitionTy(Elem.F32, (4, 64), mutable=False)
    assert types["q"] == PartitionTy(Elem.F32, (4, 32), mutable=False)
    assert types["pz"] == PartitionTy(Elem.F32, (2, 64), mutable=True, slab=(4, 64))
    assert types["perm"].dims == (1, 0)  # type: ignore[union-attr]
    assert types["cgen"].dims == (4, 1)  # type: ignore[union-attr]
    assert types["dyn_strides"].dims == (-1, 1)  # type: ignore[union-attr]


def test_a_partition_mut_annotation_keeps_the_slab_so_stores_are_checked() -> None:
    error = the_error(
        """
        let mut pz: PartitionMut<f32, { [2, 64] }> = z.partition_mut(const_shape![2, 64]);
        pz.store(constant(0.0f32, const_shape![2, 64]), [2, 0]);
        """
    )
    assert error.code is codes.PARTITION_OUT_OF_BOUNDS
    assert primary_text(error) == "[2, 0]"


@pytest.mark.parametrize(
    ("annotation", "value", "expected", "found"),
    [
        (
            "Partition<f16, { [4, 64] }>",
            "x.partition(const_shape![4, 64])",
            "Partition<f16, {[4, 64]}>",
            "Partition<f32, {[4, 64]}>",
        ),
        (
            "Partition<f32, { [4, 64] }>",
            "z.partition_mut(const_shape![4, 64])",
            "Partition<f32, {[4, 64]}>",
            "PartitionMut<f32, {[4, 64]}>",
        ),
        (
            "PartitionMut<f32, { [4, 32] }>",
            "z.partition_mut(const_shape![4, 64])",
            "PartitionMut<f32, {[4, 32]}>",
            "PartitionMut<f32, {[4, 64]}>",
        ),
        ("Array<{ [0, 1] }>", "const_array![1, 0]", "Array<{[0, 1]}>", "Array<{[1, 0]}>"),
        ("Array<{ [1, 0] }>", "[1i32, 0i32]", "Array<{[1, 0]}>", "[i32; 2]"),
        (
            "Array<{ [-1, 1] }>",
            "Array::<{ [-1, 2] }> { dims: &[n] }",
            "Array<{[-1, 1]}>",
            "Array<{[-1, 2]}>",
        ),
        ("Shape<{ [4, 64] }>", "const_shape![4, 32]", "Shape<{[4, 64]}>", "Shape<{[4, 32]}>"),
    ],
)
def test_annotation_mismatches(annotation: str, value: str, expected: str, found: str) -> None:
    error = the_error(f"let mut v: {annotation} = {value};")
    assert error.code is codes.MISMATCHED_TYPES
    assert error.message == f"mismatched types: expected `{expected}`, found `{found}`"
    assert primary_text(error) == value


def test_partition_index_annotation_takes_the_brand_from_the_value() -> None:
    sig = "mut z: MappedPartitionMut<f32, { [64, 64] }, { [4, 1] }>, x: &Tensor<f32, { [-1, -1] }>"
    body = """
        for idx in z.iter_indices() {
            let i: PartitionIndex<{ [64, 64] }> = idx;
            let (a, b) = i.components();
            z.store(px.load([a, b]), i);
        }
    """
    prelude = "let px = x.partition(const_shape![64, 64]);"
    result = compile_body(body, sig=sig, prelude=prelude)
    assert result.ok, [d.message for d in result.diagnostics]
    bindings = result.kernel.lets.values()  # type: ignore[attr-defined]
    index = next(v for vs in bindings for v in vs if v.name == "i")
    assert isinstance(index.type, PartitionIndexTy) and index.type.brand != -1
    wrong_rank = the_error(
        body.replace("PartitionIndex<{ [64, 64] }>", "PartitionIndex<{ [64] }>"),
        sig=sig,
        prelude=prelude,
    )
    assert wrong_rank.code is codes.MISMATCHED_TYPES


# ----------------------------------------------------------------------------- view loads


def test_load_view_tko_and_load_pipelined_give_the_partition_tile() -> None:
    body = "\n".join(
        (
            PARTITION,
            f"let a = {LOAD.format(latency='None', tma='tma::Enabled')};",
            f"let b = {LOAD.format(latency='Some(3)', tma='tma::Disabled')};",
            f"let c = {LOAD.format(latency='Some(L)', tma='tma::Enabled')};",
            "let d = load_view_tko(&p, [n, 0i32], ordering::Acquire, scope::Device, None, "
            "tma::Enabled);",
            "let e = p.load_pipelined::<L>([n, 1i32]);",
            "let f = p.load_pipelined::<{ L * 2 }>([n, 1i32]);",
            "let g: i32 = get_shape_dim(x.shape(), 1i32);",
            "let h = get_shape_dim(z.shape(), 0);",
        )
    )
    types = lets(body, params="<const L: i32>", values={"L": "4"})
    for name in "abcdef":
        assert types[name] == TileTy(Elem.F32, (4, 64)), name
    assert types["g"] == types["h"] == I32


@pytest.mark.parametrize(
    ("call", "code", "text", "culprit"),
    [
        (
            LOAD.format(latency="None", tma="tma::Enabled").replace("Weak", "Release"),
            codes.UNSUPPORTED_TYPE,
            "does not support `ordering::Release`",
            "ordering::Release",
        ),
        (
            LOAD.format(latency="Some(0)", tma="tma::Enabled"),
            codes.GENERIC_ARGUMENT,
            "must be in 1..=10, found 0",
            "0",
        ),
        (
            LOAD.format(latency="Some(n)", tma="tma::Enabled"),
            codes.GENERIC_ARGUMENT,
            "compile-time integer",
            "n",
        ),
        (
            LOAD.format(latency="3", tma="tma::Enabled"),
            codes.MISMATCHED_TYPES,
            "`Option<i32>`",
            "3",
        ),
        (
            LOAD.format(latency="None", tma="ftz::Enabled"),
            codes.MISMATCHED_TYPES,
            "`tma::Mode` marker",
            "ftz::Enabled",
        ),
        (
            LOAD.format(latency="None", tma="tma::Enabled").replace("scope::TileBlock", "4"),
            codes.MISMATCHED_TYPES,
            "`scope::Mode` marker",
            "4",
        ),
        (
            LOAD.format(latency="None", tma="tma::Enabled").replace("[0i32, 1i32]", "[0i32]"),
            codes.MISMATCHED_TYPES,
            "tile index",
            "[0i32]",
        ),
        ("p.load_pipelined([0i32, 0i32])", codes.GENERIC_ARGUMENT, "one generic argument", None),
        ("p.load_pipelined::<11>([0i32, 0i32])", codes.GENERIC_ARGUMENT, "found 11", "11"),
        ("get_shape_dim(x.shape(), 2)", codes.MISMATCHED_TYPES, "out of range", "2"),
        ("get_shape_dim(x.shape(), n)", codes.GENERIC_ARGUMENT, "compile-time integer", "n"),
        ("get_shape_dim(x, 0)", codes.MISMATCHED_TYPES, "expects a shape", "x"),
    ],
)
def test_view_load_errors(
    call: str, code: codes.DiagnosticCode, text: str, culprit: str | None
) -> None:
    error = the_error(f"{PARTITION}\nlet v = {call};")
    assert error.code is code
    assert text in full_text(error)
    assert primary_text(error) == (culprit or call)


def test_loading_a_partition_mut_through_load_view_tko_is_refused() -> None:
    error = the_error(
        "let mut q = z.partition_mut(const_shape![4, 64]);\n"
        "let v = load_view_tko(&q, [0i32, 0i32], ordering::Weak, scope::TileBlock, None, "
        "tma::Enabled);"
    )
    assert error.code is codes.UNSAFE_REQUIRED
    assert primary_text(error) == "&q"


def test_load_view_tko_takes_exactly_six_arguments() -> None:
    error = the_error(f"{PARTITION}\nlet v = load_view_tko(&p, [0i32, 0i32]);")
    assert error.code is codes.WRONG_ARG_COUNT


# ----------------------------------------------------------------------------- Some / None


def test_options_are_built_with_some_and_none_and_passed_along() -> None:
    helper = (
        "    fn keep(v: Option<Tile<f32, { [128] }>>) -> Option<Tile<f32, { [128] }>> {\n"
        "        v\n"
        "    }\n"
    )
    text = kernel(
        "        let t = x.load_like(z);\n"
        "        let some: Option<Tile<f32, { [128] }>> = Some(t);\n"
        "        let none: Option<Tile<f32, { [128] }>> = None;\n"
        "        let a = keep(some);\n"
        "        let b = keep(none);\n"
        "        z.store(t);",
        extra=helper,
    )
    result = check(text)
    assert result.ok, [render(d) for d in result.diagnostics]
    lets = {v.name: v.type for vs in result.kernel.body.lets.values() for v in vs}  # type: ignore[union-attr]
    assert lets["a"] == lets["b"] == OptionTy(TileTy(Elem.F32, (128,)))
    assert check(text, stop_after=Stage.IR).ok


def test_a_none_with_nothing_to_go_by_needs_an_annotation() -> None:
    text = kernel("        let n = None;\n        z.store(x.load_like(z));")
    result = check(text)
    assert [d.code.id for d in result.diagnostics if d.is_error] == ["E0282"]
