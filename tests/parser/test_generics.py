"""Binding an entry's generic parameters to request values (by name or by position)."""

from __future__ import annotations

import pytest

from parser import codes
from parser.diagnostics import DiagnosticSink
from parser.generics import bind_generics, canonical_text
from parser.types import Elem
from tests.parser.support import full_text, kernel, line_of, only_function, where

GENERICS = "<E: ElementType, const B: i32, const S: [i32; 2], const F: bool>"
TEXT = kernel("", generics=GENERICS, sig="z: &mut Tensor<E, S>")
FUNCTION = only_function(TEXT)
FN_LINE = line_of(TEXT, "fn f<")
GOOD = {"E": "f16", "B": "4", "S": "[64, 32]", "F": "true"}


def bind(
    named: dict[str, str] | None = None, positional: tuple[str, ...] = (), text: str | None = None
) -> tuple[dict | None, DiagnosticSink]:
    function = FUNCTION if text is None else only_function(text)
    sink = DiagnosticSink()
    bound = bind_generics(function, tuple((named or {}).items()), positional, sink)
    return bound, sink


def column_of(needle: str) -> int:
    return TEXT.splitlines()[FN_LINE - 1].index(needle) + 1


def test_by_name() -> None:
    bound, sink = bind(GOOD)
    assert list(sink) == []
    assert bound == {"E": Elem.F16, "B": 4, "S": (64, 32), "F": True}


def test_by_name_in_any_order() -> None:
    bound, _ = bind({"F": "false", "S": "[1,2]", "B": "-7", "E": "u8"})
    assert bound == {"E": Elem.U8, "B": -7, "S": (1, 2), "F": False}


def test_by_position_with_the_array_whole() -> None:
    bound, sink = bind(positional=("bf16", "128", "[16, 8]", "false"))
    assert list(sink) == []
    assert bound == {"E": Elem.BF16, "B": 128, "S": (16, 8), "F": False}


def test_by_position_with_the_array_flattened() -> None:
    bound, sink = bind(positional=("f32", "128", "16", "8", "true"))
    assert list(sink) == []
    assert bound == {"E": Elem.F32, "B": 128, "S": (16, 8), "F": True}


def test_flattened_arrays_with_several_array_parameters() -> None:
    text = kernel("", generics="<const A: [i32; 3], const C: [i32; 1], const D: i32>")
    bound, sink = bind(positional=("1", "2", "3", "4", "5"), text=text)
    assert list(sink) == []
    assert bound == {"A": (1, 2, 3), "C": (4,), "D": 5}


def test_no_generic_parameters_and_no_values() -> None:
    bound, sink = bind(text=kernel("", generics=""))
    assert bound == {}
    assert list(sink) == []


@pytest.mark.parametrize(
    ("name", "elem"),
    [
        ("f16", Elem.F16),
        ("bf16", Elem.BF16),
        ("f32", Elem.F32),
        ("f64", Elem.F64),
        ("i8", Elem.I8),
        ("i16", Elem.I16),
        ("i32", Elem.I32),
        ("i64", Elem.I64),
        ("u8", Elem.U8),
        ("u16", Elem.U16),
        ("u32", Elem.U32),
        ("u64", Elem.U64),
        ("bool", Elem.BOOL),
    ],
)
def test_every_element_type_binds_a_type_parameter(name: str, elem: Elem) -> None:
    bound, _ = bind({**GOOD, "E": f" {name} "})
    assert bound is not None and bound["E"] is elem


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0", 0),
        ("-1", -1),
        ("0x40", 64),
        ("1_024", 1024),
        ("128i32", 128),
        ("2147483647", 2**31 - 1),
        ("-2147483648", -(2**31)),
    ],
)
def test_i32_values(text: str, value: int) -> None:
    bound, sink = bind({**GOOD, "B": text})
    assert list(sink) == []
    assert bound is not None and bound["B"] == value


@pytest.mark.parametrize("text", ["[64,32]", "[ 64 , 32 ]", "[0x10, 1_0]"])
def test_const_array_spellings(text: str) -> None:
    bound, _ = bind({**GOOD, "S": text})
    assert bound is not None and bound["S"] in ((64, 32), (16, 10))


@pytest.mark.parametrize(
    "text", ["\u0661\u0662\u0668", "\U0001d7cf\U0001d7d0\U0001d7d6", "12\u0668"]
)
def test_digits_of_other_scripts_are_no_integer(text: str) -> None:
    bound, sink = bind({**GOOD, "B": text})
    assert bound is None and [d.code for d in sink] == [codes.GENERIC_ARGUMENT]


@pytest.mark.parametrize(
    ("spellings", "canonical"),
    [
        (("128", " 128", "128 ", "+128", "1_28", "128_", "0x80", "128i32"), "128"),
        (("[64, 32]", "[64,32]", " [ 0x40 , 3_2, ] "), "[64, 32]"),
        ((" f16 ", "f16"), "f16"),
        (("true",), "true"),
        (("\u0661\u0662\u0668",), "\u0661\u0662\u0668"),  # no integer: kept, then refused
    ],
)
def test_every_spelling_of_a_value_has_one_canonical_text(
    spellings: tuple[str, ...], canonical: str
) -> None:
    assert {canonical_text(text) for text in spellings} == {canonical}
    for text in spellings:  # and the front end reads it as it reads the original
        if "[" in text:
            assert bind({**GOOD, "S": canonical_text(text)})[0] == bind({**GOOD, "S": text})[0]
        elif canonical_text(text).isdecimal():
            assert bind({**GOOD, "B": canonical_text(text)})[0] == bind({**GOOD, "B": text})[0]


def test_unknown_name_is_reported_at_the_function_with_the_parameter_list() -> None:
    bound, sink = bind({**GOOD, "Q": "1"})
    assert bound is None
    (diagnostic,) = sink
    assert diagnostic.code is codes.GENERIC_ARGUMENT
    assert diagnostic.message == "`f` has no generic parameter `Q`"
    assert where(diagnostic) == (FN_LINE, column_of("f<"))
    assert diagnostic.notes == ("its generic parameters are: `E`, `B`, `S`, `F`",)
    assert diagnostic.help == ()  # nothing like `Q`


def test_a_misspelled_generic_name_gets_the_closest_parameter() -> None:
    text = kernel("", generics="<const BLOCK: i32, const TILE_K: i32>")
    bound, sink = bind({"BLOCK": "1", "TILEK": "2"}, text=text)
    assert bound is None
    (diagnostic,) = sink
    assert diagnostic.message == "`f` has no generic parameter `TILEK`"
    assert diagnostic.help == ("a similar name exists: `TILE_K`",)


def test_unknown_name_on_a_function_without_generics() -> None:
    bound, sink = bind({"B": "1"}, text=kernel("", generics=""))
    assert bound is None
    assert sink.items[0].notes == ("its generic parameters are: none",)


def test_missing_parameter_is_reported_at_its_declaration() -> None:
    bound, sink = bind({"E": "f32", "B": "4", "S": "[1, 1]"})
    assert bound is None
    (diagnostic,) = sink
    assert diagnostic.code is codes.GENERIC_ARGUMENT
    assert diagnostic.message == "missing generic argument `F`"
    assert diagnostic.primary_span.text == "const F: bool"  # type: ignore[union-attr]
    assert where(diagnostic) == (FN_LINE, column_of("const F"))
    assert diagnostic.notes == ("expected `F` (true or false)",)


def test_every_missing_parameter_is_reported() -> None:
    bound, sink = bind({"B": "4"})
    assert bound is None
    assert [d.message for d in sink] == [
        "missing generic argument `E`",
        "missing generic argument `S`",
        "missing generic argument `F`",
    ]


@pytest.mark.parametrize(
    ("param", "value", "declaration", "expected"),
    [
        ("E", "f17", "E: ElementType", "expected `E` (an element type such as f32)"),
        ("E", "Vec<f32>", "E: ElementType", "expected `E` (an element type such as f32)"),
        ("E", "128", "E: ElementType", "expected `E` (an element type such as f32)"),
        ("B", "4.5", "const B: i32", "expected `B` (an i32 value)"),
        ("B", "f32", "const B: i32", "expected `B` (an i32 value)"),
        ("B", "2147483648", "const B: i32", "expected `B` (an i32 value)"),
        ("B", "-2147483649", "const B: i32", "expected `B` (an i32 value)"),
        ("B", "", "const B: i32", "expected `B` (an i32 value)"),
        ("B", "true", "const B: i32", "expected `B` (an i32 value)"),
        ("S", "[64]", "const S: [i32; 2]", "expected `S` (an array of 2 i32, such as [64, 64])"),
        (
            "S",
            "[1, 2, 3]",
            "const S: [i32; 2]",
            "expected `S` (an array of 2 i32, such as [64, 64])",
        ),
        ("S", "[a, 2]", "const S: [i32; 2]", "expected `S` (an array of 2 i32, such as [64, 64])"),
        (
            "S",
            "[1.5, 2]",
            "const S: [i32; 2]",
            "expected `S` (an array of 2 i32, such as [64, 64])",
        ),
        ("F", "1", "const F: bool", "expected `F` (true or false)"),
        ("F", "True", "const F: bool", "expected `F` (true or false)"),
    ],
)
def test_ill_typed_values(param: str, value: str, declaration: str, expected: str) -> None:
    bound, sink = bind({**GOOD, param: value})
    assert bound is None
    (diagnostic,) = sink
    assert diagnostic.code is codes.GENERIC_ARGUMENT
    assert diagnostic.message == f"invalid value `{value.strip()}` for generic parameter `{param}`"
    assert diagnostic.primary_span.text == declaration  # type: ignore[union-attr]
    assert diagnostic.notes == (expected,)


def test_all_ill_typed_values_are_reported_together() -> None:
    bound, sink = bind({"E": "x", "B": "y", "S": "z", "F": "w"})
    assert bound is None
    assert [d.primary_span.text for d in sink] == [  # type: ignore[union-attr]
        "E: ElementType",
        "const B: i32",
        "const S: [i32; 2]",
        "const F: bool",
    ]


@pytest.mark.parametrize("values", [(), ("f32",), ("f32", "4", "[1, 1]"), ("f32",) * 6])
def test_wrong_positional_count(values: tuple[str, ...]) -> None:
    bound, sink = bind(positional=values)
    assert bound is None
    (diagnostic,) = sink
    assert diagnostic.code is codes.GENERIC_ARGUMENT
    assert diagnostic.message == f"`f` takes 4 generic argument(s) but {len(values)} were given"
    assert where(diagnostic) == (FN_LINE, column_of("f<"))
    assert diagnostic.notes[0].startswith("generic arguments: `E` (an element type such as f32)")


def test_positional_values_for_a_function_without_generics() -> None:
    bound, sink = bind(positional=("1",), text=kernel("", generics=""))
    assert bound is None
    (diagnostic,) = sink
    assert diagnostic.message == "`f` takes 0 generic argument(s) but 1 were given"
    assert diagnostic.notes == ()


def test_positional_count_matching_the_unflattened_form_is_not_flattened() -> None:
    # four values for four parameters: `S` must then be written whole
    bound, sink = bind(positional=("f16", "4", "64", "32"))
    assert bound is None
    assert {d.primary_span.text for d in sink} == {  # type: ignore[union-attr]
        "const S: [i32; 2]",
        "const F: bool",
    }


def test_a_generic_given_twice_is_an_error() -> None:
    sink = DiagnosticSink()
    bound = bind_generics(FUNCTION, (*GOOD.items(), ("B", "256")), (), sink)
    assert bound is None
    assert [d.code for d in sink] == [codes.GENERIC_ARGUMENT]


def test_const_array_elements_must_fit_i32() -> None:
    bound, sink = bind({**GOOD, "S": "[4294967296, 1]"})
    assert bound is None
    assert [d.code for d in sink] == [codes.GENERIC_ARGUMENT]


def test_unsupported_const_parameter_type_is_explained() -> None:
    text = kernel("", generics="<const N: usize>")
    bound, sink = bind({"N": "4"}, text=text)
    assert bound is None
    (diagnostic,) = sink
    explained = full_text(diagnostic)
    assert "true or false" not in explained
    assert "usize" in explained
