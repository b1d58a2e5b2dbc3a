"""The front end through lowering (no tileiras): the examples lower to the expected tile IR,
the output is deterministic, and no input makes `compile_kernel` raise."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest

from lowering.ir.printer import print_module
from lowering.pipeline import CompileRequest, CompileResult, Stage, compile_kernel
from parser import codes
from parser.render import render, render_all, to_json
from parser.spans import SourceFile

EXAMPLES = Path(__file__).resolve().parent.parent / "rust_examples"
ADD = (EXAMPLES / "add.rs").read_text()
SAXPY = (EXAMPLES / "saxpy.rs").read_text()

_OP = re.compile(r"^\s*(?:(?P<results>%\d+(?:, %\d+)*) = )?(?P<name>[a-z_]+)(?P<rest>.*)$")


def lower(text: str, entry: str, generics: dict[str, str], name: str = "k.rs") -> CompileResult:
    # plain kernels: the IR as the front end lowers it, before the early-launch pass orders
    # every access after a wait (tests/lowering/test_grid_dependency.py)
    request = CompileRequest(
        (SourceFile(name, text),), entry, tuple(generics.items()), early_launch=False
    )
    return compile_kernel(request, stop_after=Stage.IR)


def ir_text(text: str, entry: str, generics: dict[str, str]) -> str:
    result = lower(text, entry, generics)
    assert result.ok, render_all(result.diagnostics)
    assert result.stage_reached is Stage.IR
    assert result.ir is not None and result.bytecode is None and result.cubin is None
    return print_module(result.ir)


def ops(ir: str) -> list[tuple[tuple[str, ...], str, str]]:
    """(results, op name, rest of the line) for every op line of a printed function body."""
    out = []
    for line in ir.splitlines()[1:]:
        match = _OP.match(line)
        if match and match["name"] not in ("entry", "func"):
            results = tuple(match["results"].split(", ")) if match["results"] else ()
            out.append((results, match["name"], match["rest"]))
    return out


def in_order(names: list[str], expected: list[str]) -> bool:
    """Whether `expected` occurs in `names` as a subsequence."""
    position = iter(names)
    return all(any(n == want for n in position) for want in expected)


def only(found: list, what: str) -> tuple[tuple[str, ...], str, str]:
    assert len(found) == 1, f"expected one {what}, found {len(found)}"
    return found[0]


# ----------------------------------------------------------------------------- examples

ADD_CASES = [
    ("add", {"B": "128"}, "f32", 128),
    ("add", {"B": "1024"}, "f32", 1024),
    ("add_generic", {"E": "f16", "B": "128"}, "f16", 128),
    ("add_generic", {"E": "bf16", "B": "1024"}, "bf16", 1024),
    ("add_generic", {"E": "f32", "B": "256"}, "f32", 256),
]


@pytest.mark.parametrize(("entry", "generics", "elem", "tile"), ADD_CASES)
def test_add_lowers_to_loads_an_add_and_a_store(
    entry: str, generics: dict[str, str], elem: str, tile: int
) -> None:
    ir = ir_text(ADD, entry, generics)
    body = ops(ir)
    names = [name for _, name, _ in body]
    assert in_order(
        names,
        [
            "make_tensor_view",
            "make_partition_view",
            "load_view_tko",
            "load_view_tko",
            "addf",
            "store_view_tko",
            "return",
        ],
    ), names
    assert names.count("make_tensor_view") == 3
    assert names.count("load_view_tko") == 2
    loads = [results for results, name, _ in body if name == "load_view_tko"]
    add_results, _, add_rest = only([op for op in body if op[1] == "addf"], "addf")
    # the add consumes the two loaded tiles and produces a tile of the output's shape
    assert add_rest.split("{")[0].split() == [f"{loads[0][0]},", loads[1][0]]
    assert add_rest.endswith(f": tile<{tile}x{elem}>")
    _, _, store_rest = only([op for op in body if op[1] == "store_view_tko"], "store")
    assert store_rest.split()[0] == f"{add_results[0]},"  # stores the sum
    assert re.search(r"token\(%\d+\)", store_rest), store_rest  # ordered by a token
    assert store_rest.endswith(": token")
    assert f"tile=({tile})" in ir
    assert f"tensor_view<?x{elem}" in ir


@pytest.mark.parametrize("elem", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("tile", [128, 1024])
def test_saxpy_lowers_to_broadcast_multiply_add_store(elem: str, tile: int) -> None:
    ir = ir_text(SAXPY, "saxpy", {"E": elem, "B": str(tile)})
    body = ops(ir)
    names = [name for _, name, _ in body]
    assert in_order(
        names,
        [
            "make_tensor_view",
            "broadcast",
            "make_partition_view",
            "load_view_tko",
            "load_view_tko",
            "mulf",
            "addf",
            "store_view_tko",
        ],
    ), names
    mul_results, _, mul_rest = only([op for op in body if op[1] == "mulf"], "mulf")
    add_results, _, add_rest = only([op for op in body if op[1] == "addf"], "addf")
    assert add_rest.split()[0] == f"{mul_results[0]},"  # (a * x) + y
    assert mul_rest.endswith(f": tile<{tile}x{elem}>")
    _, _, store_rest = only([op for op in body if op[1] == "store_view_tko"], "store")
    assert store_rest.split()[0] == f"{add_results[0]},"
    # y is read and then written: the store waits on the token of y's load
    y_load = [op for op in body if op[1] == "load_view_tko" and "token(" in op[2]]
    load_results, _, _ = only(y_load, "load of y ordered by a token")
    assert f"token({load_results[1]})" in store_rest


@pytest.mark.parametrize("elem", ["i32", "u8", "i64"])
def test_integer_add_uses_addi(elem: str) -> None:
    names = [name for _, name, _ in ops(ir_text(ADD, "add_generic", {"E": elem, "B": "64"}))]
    assert "addi" in names and "addf" not in names


def test_specializations_lower_to_different_tiles_and_symbols() -> None:
    small = ir_text(ADD, "add", {"B": "128"})
    large = ir_text(ADD, "add", {"B": "1024"})
    assert small.splitlines()[0] != large.splitlines()[0]  # the entry symbol differs
    assert "tile<128xf32>" in small and "tile<1024xf32>" in large


def test_the_front_end_is_deterministic() -> None:
    for entry, generics, _, _ in ADD_CASES:
        first = ir_text(ADD, entry, generics)
        assert ir_text(ADD, entry, generics) == first
        assert ir_text(str(ADD), entry, generics) == first  # a fresh SourceFile
    assert ir_text(SAXPY, "saxpy", {"E": "f16", "B": "128"}) == ir_text(
        SAXPY, "saxpy", {"E": "f16", "B": "128"}
    )


def test_diagnostics_are_deterministic() -> None:
    broken = ADD.replace("z.store(tx + ty);", "x.store(tx + 1.0f32);\n        z.nope();")
    first = render_all(lower(broken, "add", {"B": "128"}).diagnostics)
    assert first == render_all(lower(broken, "add", {"B": "128"}).diagnostics)
    assert first.count("error[") == 3  # E0596, E0308 and E0599


def test_positional_generics_lower_like_named_ones() -> None:
    named = ir_text(SAXPY, "saxpy", {"E": "bf16", "B": "256"})
    request = CompileRequest(
        (SourceFile("k.rs", SAXPY),), "saxpy", (), ("bf16", "256"), early_launch=False
    )
    positional = compile_kernel(request, stop_after=Stage.IR)
    assert positional.ok
    assert print_module(positional.ir) == named


def test_check_stage_stops_before_lowering() -> None:
    request = CompileRequest((SourceFile("a.rs", ADD),), "add", (("B", "128"),))
    result = compile_kernel(request, stop_after=Stage.CHECK)
    assert result.ok and result.stage_reached is Stage.CHECK
    assert result.kernel is not None and result.ir is None


def test_crlf_source_lowers_identically() -> None:
    assert ir_text(ADD.replace("\n", "\r\n"), "add", {"B": "128"}) == ir_text(
        ADD, "add", {"B": "128"}
    )


def test_byte_order_mark_is_accepted() -> None:
    assert ir_text("\ufeff" + ADD, "add", {"B": "128"}) == ir_text(ADD, "add", {"B": "128"})


# ----------------------------------------------------------------------------- robustness

GARBAGE = [
    "",
    " ",
    "\n\n\n",
    "\x00",
    "\x00\x01\x02\x7f",
    "fn",
    "}}}}",
    "{{{{",
    "#[cutile::module]",
    "#[cutile::module] mod",
    "#[cutile::module] mod k",
    "#[cutile::module] mod k {",
    "#[cutile::module] mod k { #[cutile::entry()] }",
    "#[cutile::module] mod k { #[cutile::entry( fn f() {} }",
    "#[cutile::module] mod k { #[cutile::entry()] fn f(",
    "#[cutile::module] mod k { #[cutile::entry()] fn f<const B: i32>(z: &mut Tensor<",
    "#[cutile::module] mod k { #[cutile::entry()] fn f() { const_shape![ } }",
    '#[cutile::module] mod k { #[cutile::entry()] fn f() { let x = "🙂\u202e"; } }',
    "#[cutile::module] mod k { #[cutile::entry()] fn f(z: &mut Tensor<f32, { [] }>) { } }",
    "#[cutile::module] mod k { #[cutile::entry()] fn f(z: &mut Tensor) { z.store(z); } }",
    "#[cutile::module] mod k { #[cutile::entry()] fn f(z: &mut Tensor<f32, {[4]}>) { z.z.z; } }",
    "#[cutile::module] mod k { #[cutile::entry(=)] fn f() {} }",
    "#[cutile::module] mod k { #[cutile::entry()] fn f(z: &mut Tensor<f32, {[4]}>) { (); } }",
    "#[cutile::module] mod k { #[cutile::entry()] fn f() -> ! { loop {} } }",
    "mod k { #[cutile::module] mod j { use ::{}; } }",
    "é🙂\u200d\u202e\ufeff\ufffd",
    "\u0301\u0301 fn ́f() {}",
    'r#"unterminated',
    "/* unterminated comment",
    "'",
    '"',
    "b'\\xff'",
    "\r\r\r",
    "\t\v\f",
    "🙂" * 500,
    "(" * 300,
    "[" * 300 + "]" * 300,
    "#[cutile::module] mod k { fn f() { " + "{" * 200 + "}" * 200 + " } }",
    "#[cutile::module] mod k {" * 50 + "}" * 50,
]


def assert_graceful(result: CompileResult) -> None:
    assert isinstance(result, CompileResult)
    if not result.ok:
        assert result.diagnostics
    for diagnostic in result.diagnostics:
        text = render(diagnostic)
        assert text.startswith(f"{diagnostic.severity.value}[{diagnostic.code.id}]")
        assert to_json(diagnostic)["rendered"] == text
    render_all(result.diagnostics)


@pytest.mark.parametrize("text", GARBAGE, ids=range(len(GARBAGE)))
@pytest.mark.parametrize("entry", ["f", "k::f", ""])
def test_garbage_never_raises(text: str, entry: str) -> None:
    result = lower(text, entry, {"B": "128"})
    assert_graceful(result)
    assert codes.INTERNAL_ERROR not in [d.code for d in result.diagnostics], render_all(
        result.diagnostics
    )


def test_random_bytes_never_raise() -> None:
    rng = random.Random(20240601)
    for _ in range(60):
        raw = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        result = lower(raw.decode("utf-8", errors="replace"), "add", {"B": "128"})
        assert_graceful(result)
        assert codes.INTERNAL_ERROR not in [d.code for d in result.diagnostics]


_TOKENS = [
    "{", "}", "(", ")", "[", "]", ";", ",", "::", "<", ">", "&", "mut", "-1", "'a", '"s"',
    "_", "..", "as", "=", "+", "*", "!", "fn", "let", "if", "match", "é", "🙂", "\r\n",
    "const_shape![", "B", "E", "f16", "Tile", "Tensor", "x.", "load_like", "|x|", "?",
    "unsafe", "struct", "impl", "mod", "use", "pub", "->", "true", "0x1F", "1_000", "2.5",
]  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_mutated_examples_never_raise(seed: int) -> None:
    rng = random.Random(seed)
    base = ADD + SAXPY.replace("mod kernel", "mod kernel2")
    for _ in range(40):
        text = base
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(text))
            roll = rng.random()
            if roll < 0.45:
                text = text[:at] + rng.choice(_TOKENS) + text[at:]
            elif roll < 0.75:
                text = text[:at] + text[at + rng.randint(1, 6) :]
            else:
                start = rng.randrange(len(text))
                text = text[:at] + text[start : start + rng.randint(1, 12)] + text[at:]
        entry = rng.choice(["add", "add_generic", "saxpy", "kernel::add", "kernel2::saxpy"])
        generics = rng.choice([{"B": "128"}, {"E": "f16", "B": "64"}, {"B": "3"}, {}])
        result = lower(text, entry, generics)
        assert_graceful(result)
        assert codes.INTERNAL_ERROR not in [d.code for d in result.diagnostics], (
            text,
            render_all(result.diagnostics),
        )


@pytest.mark.parametrize("depth", [1000, 3000])
def test_deeply_nested_expressions_never_raise(depth: int) -> None:
    body = "let a = " + " + ".join(["1"] * depth) + ";"
    text = ADD.replace("let tx = x.load_like(z);", body + "\n        let tx = x.load_like(z);")
    assert_graceful(lower(text, "add", {"B": "128"}))


@pytest.mark.parametrize("expression", [" + ".join(["1"] * 1000), "(" * 1000 + "1" + ")" * 1000])
def test_deeply_nested_expressions_are_not_internal_errors(expression: str) -> None:
    text = ADD.replace(
        "let tx = x.load_like(z);", f"let a = {expression};\n        let tx = x.load_like(z);"
    )
    result = lower(text, "add", {"B": "128"})
    assert codes.INTERNAL_ERROR not in [d.code for d in result.diagnostics]


def test_a_file_of_thousands_of_entries_compiles_one_in_linear_time() -> None:
    """Every function of a file is converted, so work grows with the file (the service
    caps sources at 1 MiB); an empty `#[cutile::entry()]` is no longer parsed twice."""
    body = "(z: &mut Tensor<f32, { [128] }>) { z.store(z.load()); }"
    entries = "".join(f"    #[cutile::entry()]\n    fn e{i}{body}\n" for i in range(4000))
    text = f"#[cutile::module]\nmod kernel {{\n    use cutile::core::*;\n{entries}}}\n"
    started = time.process_time()
    result = lower(text, "e0", {})
    assert result.ok, render_all(result.diagnostics)
    assert time.process_time() - started < 10  # about 1 s here
