"""tree-sitter CST → kernel AST: module discovery, items, expressions, spans, errors."""

from __future__ import annotations

import dataclasses
import time

import pytest
from tree_sitter import Node

from lowering.pipeline import Stage
from parser import ast_nodes as A
from parser import codes
from parser.cst_to_ast import (
    MAX_NESTING_DEPTH,
    MAX_SYNTAX_ERRORS,
    PARSE_BYTES_PER_STEP,
    PARSE_STEPS_BASE,
    _parser,
    parse_file,
)
from parser.diagnostics import DiagnosticSink
from parser.spans import SourceFile
from tests.parser.support import EXAMPLES, check, kernel, line_of, only_function, parse, where


def fn_body(body: str, **kwargs: str) -> A.Block:
    parsed, diagnostics = parse(kernel(body, **kwargs))
    assert not diagnostics, [d.message for d in diagnostics]
    return parsed.modules[0].functions[0].body


def let_value(body: str, index: int = 0) -> A.Expr:
    statement = fn_body(body).statements[index]
    assert isinstance(statement, A.Let) and statement.value is not None
    return statement.value


# ----------------------------------------------------------------------------- modules


def test_add_example_has_one_module_with_five_entries() -> None:
    parsed, diagnostics = parse((EXAMPLES / "add.rs").read_text(), "add.rs")
    assert diagnostics == []
    (module,) = parsed.modules
    assert module.path == ("kernel",)
    assert [f.name for f in module.functions] == [
        "add",
        "add_tuned",
        "add_clustered",
        "add_generic",
        "add_generic_tuned",
    ]
    assert all(f.entry is not None for f in module.functions)
    assert [u.path for u in module.uses] == [("cutile", "core", "*")]
    assert module.span.text.startswith("mod kernel {")


@pytest.mark.parametrize(
    "header",
    [
        "#[cutile::module]\npub mod k",
        "#[cutile::module]\npub(crate) mod k",
        "/// Doc comment.\n/// More.\n#[cutile::module]\nmod k",
        "#[allow(dead_code)]\n#[cutile::module]\n#[rustfmt::skip]\nmod k",
        "#[cutile::module]\n// a comment between the attribute and the module\n/* block */\nmod k",
        '#[doc = "docs"]\n#[cutile::module]\n/// trailing doc\nmod k',
    ],
)
def test_module_detection_tolerates_visibility_attributes_and_comments(header: str) -> None:
    parsed, diagnostics = parse(f"{header} {{\n    fn g() {{}}\n}}\n")
    assert diagnostics == []
    assert [m.path for m in parsed.modules] == [("k",)]
    assert [f.name for f in parsed.modules[0].functions] == ["g"]


@pytest.mark.parametrize(
    "header",
    [
        "mod k",
        "#[cfg(test)]\nmod k",
        "#[other::module]\nmod k",
        "#[cutile::module]\nfn unrelated() {}\nmod k",  # the attribute belongs to the fn
        "#[cutile::entry()]\nmod k",
    ],
)
def test_modules_without_the_kernel_attribute_are_not_kernels(header: str) -> None:
    parsed, diagnostics = parse(f"{header} {{\n    fn g() {{ let c = |x| x; }}\n}}\n")
    assert diagnostics == []
    assert parsed.modules == ()


def test_nested_inline_modules_get_qualified_paths() -> None:
    text = """
mod host {
    #[cutile::module]
    pub mod outer {
        #[cutile::entry()]
        fn a() {}
        mod inner {
            #[cutile::entry()]
            fn b() {}
            pub mod deepest { fn c() {} }
        }
    }
}
"""
    parsed, diagnostics = parse(text)
    assert diagnostics == []
    assert [m.path for m in parsed.modules] == [
        ("host", "outer"),
        ("host", "outer", "inner"),
        ("host", "outer", "inner", "deepest"),
    ]
    functions = {f.name: f for m in parsed.modules for f in m.functions}
    assert functions["b"].module_path == ("host", "outer", "inner")
    assert functions["b"].qualified_name == "host::outer::inner::b"
    assert functions["c"].entry is None


def test_several_kernel_modules_in_one_file() -> None:
    text = "#[cutile::module]\nmod a { fn f() {} }\nfn main() {}\n#[cutile::module]\nmod b { }\n"
    parsed, _ = parse(text)
    assert [m.path for m in parsed.modules] == [("a",), ("b",)]


def test_host_code_with_non_kernel_syntax_is_ignored() -> None:
    text = (
        (EXAMPLES / "add.rs").read_text()
        + """
struct Host { v: Vec<f32> }
impl Host {
    fn run(&self) -> Option<usize> { self.v.iter().position(|&x| x > 0.0) }
}
trait T { fn t(&self); }
enum Mode { A, B(u8) }
fn main() {
    let square = |x: i32| x * x;
    let label = match square(3) { 9 => "nine", n if n < 0 => "neg", _ => "other" };
    let text: String = format!("{label}");
    let v: Vec<_> = (0..10).map(square).collect();
    for (i, x) in v.iter().enumerate() { if let Some(y) = Some(x) { println!("{i} {y}"); } }
    let r = async { 1 };
    loop { break; }
}
"""
    )
    parsed, diagnostics = parse(text)
    assert diagnostics == []
    assert [m.path for m in parsed.modules] == [("kernel",)]


def test_host_code_ignored_through_the_whole_front_end() -> None:
    text = kernel("        let t = x.load_like(z);\n        z.store(t);") + (
        "fn main() {\n    let f = |a: f32| match a as i32 { 0 => 1.0, _ => a };\n"
        "    let s = \"string\"; let c = 'c'; let v = vec![1, 2, 3];\n}\n"
    )
    result = check(text)
    assert result.ok, [d.message for d in result.diagnostics]


# ----------------------------------------------------------------------------- items


def test_entry_options_are_parsed() -> None:
    parsed, diagnostics = parse(
        "#[cutile::module]\nmod k {\n"
        "    #[cutile::entry(unchecked_accesses = true, print_ir = false)]\n"
        "    unsafe fn e() {}\n"
        "    #[cutile::entry]\n"
        "    fn bare() {}\n"
        "    #[cutile::entry()]\n"
        "    fn empty() {}\n"
        "}\n"
    )
    assert diagnostics == []
    e, bare, empty = parsed.modules[0].functions
    assert e.is_unsafe
    assert e.entry is not None
    options = [(o.key, o.value) for o in e.entry.options]
    assert [key for key, _ in options] == ["unchecked_accesses", "print_ir"]
    values = [v for _, v in options]
    assert all(isinstance(v, A.BoolLit) for v in values)
    assert [v.value for v in values] == [True, False]  # type: ignore[union-attr]
    assert [o.span.text for o in e.entry.options] == [
        "unchecked_accesses = true",
        "print_ir = false",
    ]
    assert e.entry.options[1].span.location() == "k.rs:3:48"
    assert bare.entry is not None and bare.entry.options == ()
    assert empty.entry is not None and empty.entry.options == ()
    assert not bare.is_unsafe


def test_entry_bare_flag_option_has_no_value() -> None:
    parsed, _ = parse(
        "#[cutile::module]\nmod k {\n    #[cutile::entry(print_ir)]\n    fn e() {}\n}\n"
    )
    (option,) = parsed.modules[0].functions[0].entry.options  # type: ignore[union-attr]
    assert (option.key, option.value) == ("print_ir", None)


def test_entry_option_that_is_not_key_value_is_reported() -> None:
    text = "#[cutile::module]\nmod k {\n    #[cutile::entry(1 + 2)]\n    fn e() {}\n}\n"
    _, diagnostics = parse(text)
    assert [d.code for d in diagnostics] == [codes.INVALID_ENTRY_OPTION]
    assert diagnostics[0].primary_span.text == "1 + 2"  # type: ignore[union-attr]


def test_device_functions_params_generics_and_return_types() -> None:
    text = kernel(
        "        let t = x.load_like(z);\n        z.store(t);",
        generics="<E: ElementType + Copy, const B: i32, const S: [i32; 2]>",
        sig="z: &mut Tensor<E, S>, mut x: &Tensor<E, { [-1, B] }>, a: E",
        extra="    fn helper(v: f32, w: Tile<f32, { [4] }>) -> f32 { v }\n",
    )
    parsed, diagnostics = parse(text)
    assert diagnostics == []
    helper, entry = parsed.modules[0].functions
    assert helper.entry is None
    assert [p.name for p in helper.params] == ["v", "w"]
    assert isinstance(helper.return_type, A.PathType) and helper.return_type.name == "f32"
    assert helper.name_span.text == "helper"
    assert entry.entry is not None
    assert entry.name_span.location() == f"k.rs:{line_of(text, 'fn f<')}:8"
    e, b, s = entry.generics
    assert isinstance(e, A.TypeParam) and (e.name, e.bounds) == ("E", ("ElementType", "Copy"))
    assert isinstance(b, A.ConstParam) and isinstance(b.type, A.PathType)
    assert b.type.segments == ("i32",)
    assert isinstance(s, A.ConstParam) and isinstance(s.type, A.ArrayType)
    assert isinstance(s.type.length, A.IntLit) and s.type.length.value == 2
    z, x, a = entry.params
    assert isinstance(z.type, A.RefType) and z.type.mutable
    assert isinstance(z.type.inner, A.PathType) and z.type.inner.name == "Tensor"
    assert [type(arg) for arg in z.type.inner.args] == [A.TypeArg, A.TypeArg]
    assert (x.name, x.mutable_binding) == ("x", True)
    assert isinstance(x.type, A.RefType) and not x.type.mutable
    shape = x.type.inner.args[1]  # type: ignore[union-attr]
    assert isinstance(shape, A.ConstArg) and isinstance(shape.value, A.ArrayExpr)
    first = shape.value.elements[0]
    assert isinstance(first, A.Unary) and first.op == "-"
    assert shape.span.text == "{ [-1, B] }"
    assert (a.name, a.mutable_binding) == ("a", False)


def test_module_consts_are_collected() -> None:
    parsed, _ = parse("#[cutile::module]\nmod k {\n    const TILE: i32 = 64 * 2;\n}\n")
    (const,) = parsed.modules[0].consts
    assert const.name == "TILE"
    assert isinstance(const.value, A.Binary) and const.value.op == "*"


def test_use_declarations() -> None:
    text = (
        "#[cutile::module]\nmod k {\n"
        "    use cutile::core::*;\n"
        "    use super::{a, b};\n"
        "    pub use crate::helpers::load;\n"
        "    use self::inner::{x};\n"
        "}\n"
    )
    parsed, diagnostics = parse(text)
    assert diagnostics == []
    uses = parsed.modules[0].uses
    assert [u.path for u in uses] == [
        ("cutile", "core", "*"),
        ("super", "a"),
        ("super", "b"),
        ("crate", "helpers", "load"),
        ("self", "inner", "x"),
    ]
    assert uses[1].span.text == "use super::{a, b};"


def test_use_with_rename_keeps_the_imported_path() -> None:
    parsed, _ = parse("#[cutile::module]\nmod k {\n    use cutile::core::Tile as T;\n}\n")
    assert parsed.modules[0].uses[0].path[:3] == ("cutile", "core", "Tile")


def test_nested_use_groups_are_flattened() -> None:
    parsed, _ = parse("#[cutile::module]\nmod k {\n    use a::{b::{c, d}, e};\n}\n")
    assert sorted(u.path for u in parsed.modules[0].uses) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "e"),
    ]


@pytest.mark.parametrize(
    ("item", "kind"),
    [
        ("enum Mode { A }", "enum"),
        ("union U { a: i32 }", "union"),
    ],
)
def test_unsupported_items_in_a_kernel_module(item: str, kind: str) -> None:
    text = f"#[cutile::module]\nmod k {{\n    fn ok() {{}}\n    {item}\n}}\n"
    _, diagnostics = parse(text)
    assert [d.code for d in diagnostics] == [codes.UNSUPPORTED_SYNTAX]
    assert kind in diagnostics[0].message
    assert diagnostics[0].primary_span.text == item  # type: ignore[union-attr]
    assert where(diagnostics[0]) == (4, 5)


ITEMS = """#[cutile::module]
mod k {
    #![allow(unused)]
    pub struct Pair { pub a: f32, b: Tile<f32, { [4] }> }
    struct Marker;
    struct Wrap(i32, f32);
    trait Scaled {
        const FACTOR: i64;
        const ONE: i32 = 1;
        fn scale(&self) -> f32;
        fn twice(&mut self) -> f32 { 2.0 }
    }
    #[allow(dead_code)]
    impl<E: ElementType> Scaled for Tile<E, { [4] }> {
        const FACTOR: i64 = 7;
        fn scale(&self) -> f32 { 1.0 }
    }
    impl Pair {
        fn new(a: f32) -> Self { Pair { a, b: constant(0.0f32, const_shape![4]) } }
        fn by_value(mut self) {}
    }
    type Ptr = *mut f32;
    pub mod inner {
        pub const SEVEN: i32 = 7;
        pub fn helper(x: i32) -> i32 { x + 1 }
    }
}
"""


def test_structs_traits_impls_and_aliases_are_module_items() -> None:
    parsed, diagnostics = parse(ITEMS)
    assert diagnostics == []
    outer, inner = parsed.modules
    assert inner.path == ("k", "inner")
    assert [c.name for c in inner.consts] == ["SEVEN"]
    assert [(s.name, [f.name for f in s.fields]) for s in outer.structs] == [
        ("Pair", ["a", "b"]),
        ("Marker", []),
        ("Wrap", ["0", "1"]),
    ]
    (trait,) = outer.traits
    assert trait.name == "Scaled"
    assert [c.name for c in trait.consts] == ["ONE"]
    assert [f.name for f in trait.functions] == ["twice"]
    assert trait.required == ("FACTOR", "scale")
    for_tile, inherent = outer.impls
    assert for_tile.trait == "Scaled"
    assert isinstance(for_tile.self_type, A.PathType) and for_tile.self_type.name == "Tile"
    assert [g.name for g in for_tile.generics] == ["E"]
    assert [c.name for c in for_tile.consts] == ["FACTOR"]
    assert inherent.trait is None
    assert [f.name for f in inherent.functions] == ["new", "by_value"]
    (alias,) = outer.aliases
    assert alias.name == "Ptr" and isinstance(alias.type, A.PointerType)


def test_self_parameters_read_as_a_parameter_named_self() -> None:
    parsed, _ = parse(ITEMS)
    (twice,) = parsed.modules[0].traits[0].functions
    (param,) = twice.params
    assert param.name == "self"
    assert isinstance(param.type, A.RefType) and param.type.mutable
    assert isinstance(param.type.inner, A.PathType) and param.type.inner.name == "Self"
    by_value = parsed.modules[0].impls[1].functions[1]
    assert by_value.params[0].mutable_binding
    assert isinstance(by_value.params[0].type, A.PathType)


def test_where_clause_bounds_join_the_type_parameters() -> None:
    function = only_function(
        "#[cutile::module]\nmod k {\n    fn g<T, F>(t: T, f: F) where T: ElementType, "
        "F: Fn(T, T) -> T {}\n}\n"
    )
    assert [(g.name, g.bounds) for g in function.generics] == [
        ("T", ("ElementType",)),
        ("F", ("Fn",)),
    ]


def test_unsupported_syntax_in_a_function_is_kept_with_that_function() -> None:
    """cuTile compiles only what an entry reaches: a function's unsupported syntax is
    reported when the function is compiled or called, not when the file is parsed."""
    text = kernel(extra="    fn unused() { let m = match 1 { _ => 2 }; }\n")
    sink = DiagnosticSink()
    parsed = parse_file(SourceFile("k.rs", text), sink)
    assert list(sink) == []
    unused = next(f for f in parsed.modules[0].functions if f.name == "unused")
    assert [p.code for p in unused.problems] == [codes.UNSUPPORTED_SYNTAX]
    assert check(text).ok


def test_out_of_line_module_inside_a_kernel_is_unsupported() -> None:
    _, diagnostics = parse("#[cutile::module]\nmod k {\n    mod other;\n}\n")
    assert [d.code for d in diagnostics] == [codes.UNSUPPORTED_SYNTAX]
    assert diagnostics[0].primary_span.text == "mod other;"  # type: ignore[union-attr]


def test_items_inside_a_kernel_function_are_unsupported() -> None:
    text = kernel("        struct Inner;\n        fn nested() {}")
    _, diagnostics = parse(text)
    assert [d.code for d in diagnostics] == [codes.UNSUPPORTED_SYNTAX] * 2
    assert [where(d)[0] for d in diagnostics] == [
        line_of(text, "struct Inner"),
        line_of(text, "fn nested"),
    ]


@pytest.mark.parametrize(
    ("statement", "snippet"),
    [
        ("let v = match a { _ => 1 };", "match a { _ => 1 }"),
        ("let v = async { 1 };", "async { 1 }"),
        ("let c = 'c';", "'c'"),
        ("let e = a?;", "a?"),
    ],
)
def test_unsupported_expressions_in_kernels_have_spans(statement: str, snippet: str) -> None:
    text = kernel(f"        {statement}")
    _, diagnostics = parse(text)
    assert [d.code for d in diagnostics] == [codes.UNSUPPORTED_SYNTAX]
    assert diagnostics[0].primary_span.text == snippet  # type: ignore[union-attr]
    assert where(diagnostics[0])[0] == line_of(text, statement)


def test_let_else_is_unsupported() -> None:
    _, diagnostics = parse(kernel("        let a = b else { return; };"))
    assert [d.code for d in diagnostics] == [codes.UNSUPPORTED_SYNTAX]
    assert "let ... else" in diagnostics[0].message


# ----------------------------------------------------------------------------- expressions


@pytest.mark.parametrize(
    ("literal", "value", "suffix"),
    [
        ("42", 42, None),
        ("1_000_000", 1_000_000, None),
        ("0xFF", 255, None),
        ("0xFF_u8", 255, "u8"),
        ("0x1f32", 0x1F32, None),  # hex digits, not an f32 suffix
        ("0b1010", 10, None),
        ("0o17u32", 15, "u32"),
        ("7i64", 7, "i64"),
        ("3usize", 3, "usize"),
        ("007", 7, None),
    ],
)
def test_integer_literals(literal: str, value: int, suffix: str | None) -> None:
    lit = let_value(f"        let v = {literal};")
    assert isinstance(lit, A.IntLit)
    assert (lit.value, lit.suffix) == (value, suffix)
    assert lit.span.text == literal


@pytest.mark.parametrize(
    ("literal", "value", "suffix"),
    [
        ("1.5", 1.5, None),
        ("2.0f32", 2.0, "f32"),
        ("1_000.25_f64", 1000.25, "f64"),
        ("1e3", 1000.0, None),
        ("2.5e-1f32", 0.25, "f32"),
        ("1.", 1.0, None),
        ("1e_5", 1e5, None),
        ("1E+2_f64", 100.0, "f64"),
    ],
)
def test_float_literals(literal: str, value: float, suffix: str | None) -> None:
    lit = let_value(f"        let v = {literal};")
    assert isinstance(lit, A.FloatLit)
    assert (lit.value, lit.suffix) == (value, suffix)


def test_float_suffix_on_an_integer_literal() -> None:
    lit = let_value("        let v = 1f32;")
    assert isinstance(lit, A.FloatLit)
    assert (lit.value, lit.suffix) == (1.0, "f32")


@pytest.mark.parametrize("literal", ["1f32", "2_f64", "1i128", "1u128"])
def test_odd_literal_suffixes_never_cause_internal_errors(literal: str) -> None:
    text = kernel(f"        let v = {literal};\n        z.store(x.load_like(z));")
    result = check(text)
    assert codes.INTERNAL_ERROR not in [d.code for d in result.diagnostics]


@pytest.mark.parametrize(
    "literal",
    ["9" * 4400, "340282366920938463463374607431768211456", "0x" + "f" * 33, "0b1" + "0" * 128],
)
def test_integer_literals_beyond_u128_are_too_large(literal: str) -> None:
    """More than 4,300 digits used to be an internal error (Python's int-string limit)."""
    _, diagnostics = parse(kernel(f"        let v = {literal};"))
    (diagnostic,) = diagnostics
    assert diagnostic.code is codes.LITERAL_OUT_OF_RANGE
    assert diagnostic.message == "integer literal is too large"
    assert diagnostic.primary_span.text == literal  # type: ignore[union-attr]


def test_the_largest_u128_is_not_too_large() -> None:
    lit = let_value(f"        let v = {2**128 - 1};")
    assert isinstance(lit, A.IntLit) and lit.value == 2**128 - 1


@pytest.mark.parametrize(("literal", "suffix"), [("1.0f322", "f322"), ("2.5e3_f8", "f8")])
def test_an_unknown_float_suffix_is_a_syntax_error(literal: str, suffix: str) -> None:
    _, diagnostics = parse(kernel(f"        let v = {literal};"))
    (diagnostic,) = diagnostics
    assert diagnostic.code is codes.SYNTAX_ERROR
    assert diagnostic.message == f"invalid suffix `{suffix}` for float literal"
    assert diagnostic.primary_span.text == literal  # type: ignore[union-attr]
    assert diagnostic.help == ("valid suffixes are `f16`, `f32` and `f64`",)


def test_booleans_and_negative_literals() -> None:
    body = fn_body("        let a = true;\n        let b = -3;\n        let c = !a;")
    a, b, c = (s.value for s in body.statements)  # type: ignore[union-attr]
    assert isinstance(a, A.BoolLit) and a.value is True
    assert isinstance(b, A.Unary) and b.op == "-" and isinstance(b.operand, A.IntLit)
    assert isinstance(c, A.Unary) and c.op == "!"


def test_binary_precedence_and_parentheses() -> None:
    value = let_value("        let v = a + b * (c - d);")
    assert isinstance(value, A.Binary) and value.op == "+"
    assert isinstance(value.rhs, A.Binary) and value.rhs.op == "*"
    inner = value.rhs.rhs
    assert isinstance(inner, A.Binary) and inner.op == "-"
    assert inner.span.text == "c - d"  # parentheses are dropped, not a node


def test_turbofish_on_a_function_and_a_method() -> None:
    body = fn_body(
        "        let a = convert::<f16>(t);\n        let b = t.reshape::<{ [4, 4] }>(s);"
    )
    a, b = (s.value for s in body.statements)  # type: ignore[union-attr]
    assert isinstance(a, A.Call) and isinstance(a.function, A.PathExpr)
    assert a.function.segments == ("convert",)
    (arg,) = a.function.generic_args
    assert isinstance(arg, A.TypeArg) and isinstance(arg.type, A.PathType)
    assert arg.type.name == "f16"
    assert isinstance(b, A.MethodCall) and b.method == "reshape"
    (shape,) = b.generic_args
    assert isinstance(shape, A.ConstArg) and isinstance(shape.value, A.ArrayExpr)
    assert [type(e) for e in b.args] == [A.PathExpr]


def test_turbofish_method_span_is_the_method_name() -> None:
    (let,) = fn_body("        let b = t.reshape::<{ [4, 4] }>(s);").statements
    assert isinstance(let, A.Let) and isinstance(let.value, A.MethodCall)
    assert let.value.method_span.text == "reshape"


def test_lifetime_generic_parameters_are_skipped() -> None:
    parsed, diagnostics = parse(kernel("", generics="<'a, const B: i32>"))
    assert diagnostics == []
    assert [p.name for p in parsed.modules[0].functions[0].generics] == ["B"]


def test_method_chains_nest_receivers() -> None:
    value = let_value("        let v = z.load().broadcast(x.shape()).shape();")
    assert isinstance(value, A.MethodCall) and value.method == "shape"
    middle = value.receiver
    assert isinstance(middle, A.MethodCall) and middle.method == "broadcast"
    (arg,) = middle.args
    assert isinstance(arg, A.MethodCall) and arg.method == "shape"
    first = middle.receiver
    assert isinstance(first, A.MethodCall) and first.method == "load" and first.args == ()
    assert isinstance(first.receiver, A.PathExpr) and first.receiver.name == "z"
    assert first.span.text == "z.load()"
    assert middle.method_span.text == "broadcast"


def test_scoped_paths_and_tuple_fields() -> None:
    body = fn_body("        let a = f32::NEG_INFINITY;\n        let b = get_tile_block_id().0;")
    a, b = (s.value for s in body.statements)  # type: ignore[union-attr]
    assert isinstance(a, A.PathExpr) and a.segments == ("f32", "NEG_INFINITY")
    assert isinstance(b, A.FieldAccess) and b.name == "0"
    assert isinstance(b.value, A.Call)


def test_unsafe_blocks_are_marked() -> None:
    body = fn_body("        unsafe { z.store(t); }\n        { z.store(t); }")
    (statement,) = body.statements
    first, second = statement.expr, body.tail  # type: ignore[union-attr]
    # a block-like expression closing the body without `;` is its tail, as in Rust
    assert isinstance(first, A.BlockExpr) and first.unsafe
    assert isinstance(second, A.BlockExpr) and not second.unsafe
    (inner,) = first.block.statements
    assert isinstance(inner, A.ExprStmt) and isinstance(inner.expr, A.MethodCall)


def test_block_tail_and_statement_semicolons() -> None:
    body = fn_body("        z.store(t);\n        z.load()")
    (statement,) = body.statements
    assert isinstance(statement, A.ExprStmt) and statement.semicolon
    assert isinstance(body.tail, A.MethodCall) and body.tail.method == "load"


def test_compound_assignment_keeps_its_operator() -> None:
    body = fn_body("        let mut a = 1;\n        a += 2;\n        a = 3;")
    let, compound, plain = body.statements
    assert isinstance(let, A.Let) and isinstance(let.pattern, A.IdentPattern)
    assert let.pattern.mutable
    assert isinstance(compound, A.ExprStmt) and isinstance(compound.expr, A.Assign)
    assert compound.expr.op == "+"
    assert isinstance(plain, A.ExprStmt) and isinstance(plain.expr, A.Assign)
    assert plain.expr.op is None


def test_let_with_type_annotation_and_tuple_pattern() -> None:
    body = fn_body(
        "        let t: Tile<f32, { [B] }> = z.load();\n"
        "        let (bx, by, bz) = get_tile_block_id();"
    )
    typed, tupled = body.statements
    assert isinstance(typed, A.Let) and isinstance(typed.type, A.PathType)
    assert typed.type.name == "Tile" and typed.type.span.text == "Tile<f32, { [B] }>"
    assert isinstance(tupled, A.Let) and isinstance(tupled.pattern, A.TuplePattern)
    assert [p.name for p in tupled.pattern.elements] == ["bx", "by", "bz"]  # type: ignore[union-attr]


def test_wildcards_inside_tuple_patterns_are_kept() -> None:
    (let,) = fn_body("        let (bx, _, _) = get_tile_block_id();").statements
    assert isinstance(let, A.Let) and isinstance(let.pattern, A.TuplePattern)
    assert [type(p) for p in let.pattern.elements] == [
        A.IdentPattern,
        A.WildcardPattern,
        A.WildcardPattern,
    ]


def test_array_and_struct_patterns() -> None:
    array, struct = fn_body(
        "        let [i0, _, mut i2] = idx;\n        let Pair { a, b: renamed, .. } = p;"
    ).statements
    assert isinstance(array, A.Let) and isinstance(array.pattern, A.ArrayPattern)
    assert [type(p) for p in array.pattern.elements] == [
        A.IdentPattern,
        A.WildcardPattern,
        A.IdentPattern,
    ]
    assert array.pattern.elements[2].mutable  # type: ignore[union-attr]
    assert isinstance(struct, A.Let) and isinstance(struct.pattern, A.StructPattern)
    assert struct.pattern.path == ("Pair",) and struct.pattern.rest
    assert [(n, p.name) for n, p in struct.pattern.fields] == [  # type: ignore[union-attr]
        ("a", "a"),
        ("b", "renamed"),
    ]


def test_repeat_arrays_and_qualified_paths() -> None:
    repeat = let_value("        let r = [0i32; 2];")
    assert isinstance(repeat, A.ArrayRepeat)
    assert isinstance(repeat.value, A.IntLit) and repeat.value.value == 0
    assert isinstance(repeat.count, A.IntLit) and repeat.count.value == 2
    qualified = let_value("        let z = <T as ElementType>::ZERO;")
    assert isinstance(qualified, A.PathExpr) and qualified.segments == ("T", "ZERO")
    assert qualified.span.text == "<T as ElementType>::ZERO"


def test_macro_arguments_are_expressions_with_spans_into_the_file() -> None:
    text = kernel("        let é = 1; let s = /* ü */ const_shape![B, 64, B * 2];")
    parsed, diagnostics = parse(text)
    assert diagnostics == []
    let = parsed.modules[0].functions[0].body.statements[1]
    assert isinstance(let, A.Let) and isinstance(let.value, A.MacroCall)
    macro = let.value
    assert macro.name == "const_shape"
    assert macro.span.text == "const_shape![B, 64, B * 2]"
    b, sixty_four, product = macro.args
    assert isinstance(b, A.PathExpr) and b.span.text == "B"
    assert isinstance(sixty_four, A.IntLit) and sixty_four.value == 64
    assert isinstance(product, A.Binary) and product.span.text == "B * 2"
    line = line_of(text, "const_shape")
    line_text = text.splitlines()[line - 1]
    assert b.span.location() == f"k.rs:{line}:{line_text.index('B, 64') + 1}"
    assert sixty_four.span.start_line_col == (line, line_text.index("64") + 1)
    assert isinstance(product.lhs, A.PathExpr) and product.lhs.span.text == "B"


def test_nested_macro_arguments_keep_spans() -> None:
    text = kernel("        let s = outer!(inner![B, 8], 4);")
    parsed, diagnostics = parse(text)
    assert diagnostics == []
    macro = parsed.modules[0].functions[0].body.statements[0].value  # type: ignore[union-attr]
    assert isinstance(macro, A.MacroCall)
    inner, four = macro.args
    assert isinstance(inner, A.MacroCall) and inner.span.text == "inner![B, 8]"
    assert [a.span.text for a in inner.args] == ["B", "8"]
    assert four.span.text == "4"


def test_unparsable_macro_arguments_are_a_syntax_error() -> None:
    text = kernel("        let s = const_shape![B,, 4];")
    _, diagnostics = parse(text)
    assert [d.code for d in diagnostics] == [codes.SYNTAX_ERROR]
    assert diagnostics[0].primary_span.text == "[B,, 4]"  # type: ignore[union-attr]


def test_ast_nodes_are_frozen() -> None:
    value = let_value("        let v = a + 1;")
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.op = "-"  # type: ignore[union-attr, misc]


# ----------------------------------------------------------------------------- syntax errors


def test_syntax_error_has_a_location_and_yields_no_modules() -> None:
    text = "#[cutile::module]\nmod k {\n    fn f() { let x = 1 let y = 2; }\n}\n"
    parsed, diagnostics = parse(text, "bad.rs")
    assert parsed.modules == ()
    (diagnostic,) = diagnostics
    assert diagnostic.code is codes.SYNTAX_ERROR
    assert diagnostic.primary_span.location() == "bad.rs:3:23"  # type: ignore[union-attr]
    assert "`;`" in diagnostic.message


def test_unbalanced_delimiter_is_a_syntax_error_on_its_line() -> None:
    text = kernel("        z.store(t;")
    parsed, diagnostics = parse(text)
    assert parsed.modules == ()
    assert diagnostics and all(d.code is codes.SYNTAX_ERROR for d in diagnostics)
    assert where(diagnostics[0])[0] == line_of(text, "z.store(t;")


def test_syntax_errors_are_capped() -> None:
    text = "#[cutile::module]\nmod k {\n" + "    fn f() { let = ; }\n" * 40 + "}\n"
    parsed, diagnostics = parse(text)
    assert parsed.modules == ()
    assert 1 < len(diagnostics) <= MAX_SYNTAX_ERRORS
    assert all(d.code is codes.SYNTAX_ERROR for d in diagnostics)


def test_syntax_error_in_host_code_is_still_reported() -> None:
    text = (EXAMPLES / "add.rs").read_text().replace("fn main() {", "fn main() { let = ;")
    parsed, diagnostics = parse(text)
    assert [d.code for d in diagnostics] == [codes.SYNTAX_ERROR]
    assert where(diagnostics[0])[0] == line_of(text, "fn main()")
    assert parsed.modules == ()


def test_syntax_error_stops_the_compile_at_parse() -> None:
    result = check(kernel("        let t = ;"), stop_after=Stage.IR)
    assert result.stage_reached is Stage.PARSE
    assert [d.code for d in result.diagnostics] == [codes.SYNTAX_ERROR]


def test_module_statics_are_parsed_for_the_checker() -> None:
    """A `static` is kept (the checker accepts only `Global<E, {[]}>` ones)."""
    text = (
        "#[cutile::module]\nmod k {\n    static C: Global<i32, { [] }> = Global::new(7);\n"
        "    static mut N: i32 = 1;\n}\n"
    )
    parsed, diagnostics = parse(text)
    assert not diagnostics
    (module,) = parsed.modules
    assert [(s.name, s.type.span.text, s.mutable) for s in module.statics] == [
        ("C", "Global<i32, { [] }>", False),
        ("N", "i32", True),
    ]


# ----------------------------------------------------------------------------- limits


def _deepest_level(node: Node, level: int = 0) -> int:
    """Levels as MAX_NESTING_DEPTH counts them: the file and module bodies are not levels."""
    level += node.type not in ("source_file", "declaration_list")
    return max([level, *(_deepest_level(child, level) for child in node.children)])


def _parens_in_a_kernel(count: int) -> str:
    return kernel(f"        let a = {'(' * count}1{')' * count};")


def _tree_depth(text: str) -> int:
    return _deepest_level(_parser().parse(text.encode()).root_node)


def test_code_nested_exactly_to_the_limit_passes_and_one_level_more_does_not() -> None:
    count = next(n for n in range(150, 250) if _tree_depth(_parens_in_a_kernel(n)) == 200)
    _, diagnostics = parse(_parens_in_a_kernel(count))
    assert diagnostics == []
    text = _parens_in_a_kernel(count + 1)
    assert _tree_depth(text) == MAX_NESTING_DEPTH + 1
    _, diagnostics = parse(text)
    (diagnostic,) = diagnostics
    assert diagnostic.code is codes.LIMIT_EXCEEDED
    assert diagnostic.message == f"this code nests deeper than {MAX_NESTING_DEPTH} levels"
    innermost = text.index("1)")
    assert diagnostic.primary_span.start in (innermost - 1, innermost)  # type: ignore[union-attr]


def test_module_bodies_are_not_levels() -> None:
    count = next(n for n in range(150, 250) if _tree_depth(_parens_in_a_kernel(n)) == 200)
    body = _parens_in_a_kernel(count).replace("mod kernel {", "mod kernel { mod inner {")
    _, diagnostics = parse(body + "}\n")
    assert [d.code for d in diagnostics] == [codes.LIMIT_EXCEEDED]  # `mod inner` is one level
    _, diagnostics = parse(_parens_in_a_kernel(count))
    assert diagnostics == []


@pytest.mark.parametrize(
    "arguments", [" + ".join(["1"] * 3000), "-" * 3000 + "1", "(" * 300 + "1" + ")" * 300]
)
def test_macro_arguments_count_their_levels_from_the_macro(arguments: str) -> None:
    """Macro arguments are parsed a second time, flat in the file's tree; their levels add to
    the macro's (3,000 terms used to overflow Python's recursion in the converter)."""
    text = kernel(f'        cuda_tile_print!("{{}}", {arguments});')
    _, diagnostics = parse(text)
    (diagnostic,) = diagnostics
    assert diagnostic.code is codes.LIMIT_EXCEEDED
    assert diagnostic.primary_span.text in arguments  # type: ignore[union-attr]


def test_the_deepest_macro_argument_within_the_limit_parses() -> None:
    def text(count: int) -> str:
        return kernel(f'        cuda_tile_print!("{{}}", {"(" * count}1{")" * count});')

    ok = max(n for n in range(150, 200) if not parse(text(n))[1])
    assert _tree_depth(kernel(f"        f({'(' * ok}1{')' * ok});")) == MAX_NESTING_DEPTH
    assert [d.code for d in parse(text(ok + 1))[1]] == [codes.LIMIT_EXCEEDED]


@pytest.mark.parametrize("unit", [">&", "- = ", "-,"])
def test_text_that_makes_the_parser_backtrack_is_stopped_early(unit: str) -> None:
    """Error recovery on these repeats grows faster than the square of their length (4,000
    `>&` took 20 s); the step budget stops it in a fraction of a second."""
    text = "fn f() { let y = " + unit * 100_000
    started = time.perf_counter()
    _, diagnostics = parse(text)
    assert time.perf_counter() - started < 5
    (diagnostic,) = diagnostics
    assert diagnostic.code is codes.LIMIT_EXCEEDED
    assert diagnostic.message == "this text is too costly to parse"
    assert 0 < diagnostic.primary_span.start < 2000  # type: ignore[union-attr]


def test_every_example_parses_well_within_the_step_budget() -> None:
    for path in sorted(EXAMPLES.glob("*.rs")):
        data = path.read_bytes()
        ratios: list[float] = []

        def progress(offset: int, _error: bool, ratios: list[float] = ratios) -> bool:
            ratios.append((len(ratios) + 1) / (PARSE_STEPS_BASE + offset / PARSE_BYTES_PER_STEP))
            return False

        _parser().parse(
            lambda at, _point, data=data: data[at : at + 4096], progress_callback=progress
        )
        assert max(ratios, default=0) < 0.05, path.name
