"""Type checking calls: device functions inlined per call (generic inference, turbofish,
tuple returns, recursion, diagnostics that carry the call site), several modules and
source files, and the partition intrinsics (`partition`, `load`, `num_tiles`,
`partition_mut` + `store`, `MappedPartitionMut` with `iter_indices`)."""

from __future__ import annotations

import re
import time

import pytest

from lowering.pipeline import CompileRequest, CompileResult, Stage, compile_kernel
from parser import ast_nodes as A
from parser import codes
from parser.inline_budget import MAX_INLINE_DEPTH
from parser.render import render
from parser.spans import SourceFile
from parser.typed_kernel import TypedKernel
from parser.types import (
    ArrayTy,
    Elem,
    MappedTy,
    PartitionIndexTy,
    PartitionTy,
    ScalarTy,
    TileTy,
    TupleTy,
)
from tests.parser.support import check, codes_of, errors, full_text, kernel, line_of, where

I32 = ScalarTy(Elem.I32)
TILE = TileTy(Elem.F32, (128,))


def body(*lines: str) -> str:
    return "\n".join(f"        {line}" for line in lines)


def with_devices(devices: str, *lines: str, **kw: str) -> str:
    """Kernel `f(z, x)` with B generic; `devices` are device functions in the same module."""
    return kernel(body(*lines), extra=devices, **kw)


def typed(text: str, generics: dict[str, str] | None = None) -> TypedKernel:
    result = check(text, "f", generics)
    assert result.ok, [render(d) for d in result.diagnostics]
    assert isinstance(result.kernel, TypedKernel)
    return result.kernel


def failing(text: str, generics: dict[str, str] | None = None) -> CompileResult:
    result = check(text, "f", generics)
    assert not result.ok and result.kernel is None
    return result


def calls_named(k: TypedKernel, name: str) -> list[A.Call]:
    calls = [
        c for c in k.body.inlined if isinstance(c.function, A.PathExpr) and c.function.name == name
    ]
    return sorted(calls, key=lambda c: c.span.start)


def let_type(k: TypedKernel, name: str) -> object:
    return [v for vs in k.lets.values() for v in vs if v.name == name][-1].type


# ----------------------------------------------------------------------------- device functions

TWICE = """
    fn twice<E: ElementType, const N: i32>(t: Tile<E, { [N] }>) -> Tile<E, { [N] }> {
        let u = t + t;
        return u;
    }
"""


def test_a_device_function_is_inlined_once_per_call_with_that_calls_generics() -> None:
    text = with_devices(
        TWICE,
        "let t = x.load_like(z);",
        "let u = twice(t);",
        "let h = x.partition(const_shape![64]).load([0i32]);",
        "let v = twice(h);",
        "z.store(u);",
    )
    k = typed(text)
    first, second = calls_named(k, "twice")
    assert dict(k.body.inlined[first].generics) == {"E": Elem.F32, "N": 128}
    assert dict(k.body.inlined[second].generics) == {"E": Elem.F32, "N": 64}
    assert k.expr_types[first] == TILE
    assert k.expr_types[second] == TileTy(Elem.F32, (64,))
    # each call has its own checked body: the `t + t` inside is typed per call
    for call, n in ((first, 128), (second, 64)):
        inner = k.body.inlined[call].body
        adds = [ty for e, ty in inner.expr_types.items() if e.span.text == "t + t"]
        assert adds == [TileTy(Elem.F32, (n,))]
    assert not k.calls.get(first)  # not a prelude call


def test_turbofish_binds_generics_explicitly() -> None:
    text = with_devices(
        TWICE + "    fn zero<E: ElementType>() -> E { E::ZERO }\n",
        "let t = x.load_like(z);",
        "let u = twice::<f32, 128>(t);",
        "let h = zero::<f16>();",
        "z.store(u);",
    )
    k = typed(text)
    (call,) = calls_named(k, "twice")
    assert dict(k.body.inlined[call].generics) == {"E": Elem.F32, "N": 128}
    assert let_type(k, "h") == ScalarTy(Elem.F16)


def test_a_turbofish_value_that_disagrees_with_the_argument_is_a_mismatch() -> None:
    text = with_devices(TWICE, "let t = x.load_like(z);", "let u = twice::<f32, 64>(t);")
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code.id == "E0308"
    assert "expected `Tile<f32, {[64]}>`, found `Tile<f32, {[128]}>`" in diagnostic.message
    assert "parameter declared here" in full_text(diagnostic)


def test_tuple_returns_and_const_generic_values() -> None:
    pair = """
    fn pair<const N: i32>(t: Tile<f32, { [N] }>) -> (Tile<f32, { [N] }>, i32) {
        (t + t, N)
    }
"""
    k = typed(with_devices(pair, "let t = x.load_like(z);", "let (u, n) = pair(t);", "z.store(u);"))
    (call,) = calls_named(k, "pair")
    assert k.expr_types[call] == TupleTy((TILE, I32))
    assert let_type(k, "n") == I32


def test_whole_array_generics_and_dynamic_tensor_parameters() -> None:
    devices = """
    fn dbl<E: ElementType, const S: [i32; 1]>(t: Tile<E, S>) -> Tile<E, S> { t + t }
    fn get(o: &mut Tensor<f32, { [128] }>, i: &Tensor<f32, { [-1] }>) -> Tile<f32, { [128] }> {
        i.load_like(o)
    }
"""
    k = typed(with_devices(devices, "let t = get(z, x);", "z.store(dbl(t));"))
    (call,) = calls_named(k, "dbl")
    assert dict(k.body.inlined[call].generics) == {"E": Elem.F32, "S": (128,)}


def test_mut_parameters_and_unit_device_functions() -> None:
    devices = """
    fn acc(mut t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> {
        for i in 0..3 {
            t = t + t;
        }
        t
    }
    fn put(o: &mut Tensor<f32, { [128] }>, t: Tile<f32, { [128] }>) {
        o.store(t);
    }
"""
    typed(with_devices(devices, "let t = x.load_like(z);", "put(z, acc(t));"))


@pytest.mark.parametrize(
    ("devices", "call", "code", "message"),
    [
        (
            "    fn put(o: &mut Tensor<f32, { [128] }>, t: Tile<f32, { [128] }>) { o.store(t); }\n",
            "put(x, t);",
            "E0308",
            "expected `&mut Tensor<f32, {[128]}>`, found `&Tensor<f32, {[-1]}>`",
        ),
        (
            "    fn id(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { t }\n",
            "let u = id(t, t);",
            "E0061",
            "`id` takes 1 argument(s) but 2 were supplied",
        ),
        (
            "    fn make<const N: i32>(v: i32) -> i32 { v }\n",
            "let u = make(1i32);",
            "E0282",
            "cannot infer generic `N` of `make`",
        ),
        (
            "    fn both<const N: i32>(a: Tile<f32, { [N] }>, b: Tile<f32, { [N] }>) {}\n",
            "both(t, x.partition(const_shape![64]).load([0i32]));",
            "E0308",
            "generic `N` of `both` would need two different values",
        ),
        (
            "    fn id(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { t }\n",
            "let u = di(t);",
            "E0425",
            "cannot find function `di`",
        ),
    ],
)
def test_call_errors_point_at_the_call(devices: str, call: str, code: str, message: str) -> None:
    text = with_devices(devices, "let t = x.load_like(z);", call)
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code.id == code
    assert message in diagnostic.message
    assert where(diagnostic)[0] == line_of(text, call)


def test_conflicting_inferred_generics_are_named() -> None:
    devices = "    fn both<const N: i32>(a: Tile<f32, { [N] }>, b: Tile<f32, { [N] }>) {}\n"
    text = with_devices(
        devices, "let t = x.load_like(z);", "both(t, x.partition(const_shape![64]).load([0i32]));"
    )
    (diagnostic,) = errors(failing(text))
    assert "generic `N` of `both` would need two different values" in diagnostic.message


def test_wrong_argument_count_shows_the_definition() -> None:
    devices = "    fn id(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { t }\n"
    text = with_devices(devices, "let t = x.load_like(z);", "let u = id();")
    (diagnostic,) = errors(failing(text))
    secondary = [lb for lb in diagnostic.labels if not lb.primary]
    assert [(lb.span.text, lb.message) for lb in secondary] == [("id", "defined here")]


def test_callee_bodies_see_module_consts_but_not_the_callers_names() -> None:
    devices = "    const K: i32 = 3;\n    fn k() -> i32 { K }\n    fn peek() -> i32 { B }\n"
    typed(with_devices(devices, "let v = k();", "let t = x.load_like(z);", "z.store(t);"))
    text = with_devices(devices, "let v = peek();", "let t = x.load_like(z);", "z.store(t);")
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code.id == "E0425"
    assert where(diagnostic)[0] == line_of(text, "fn peek()")


# ----------------------------------------------------------------------------- recursion


@pytest.mark.parametrize(
    "devices",
    [
        "    fn rec(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { rec(t) }\n",
        "    fn ping(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { pong(t) }\n"
        "    fn pong(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { ping(t) }\n",
    ],
    ids=["direct", "mutual"],
)
def test_recursion_is_rejected_once(devices: str) -> None:
    name = "rec" if "rec" in devices else "ping"
    text = with_devices(devices, "let t = x.load_like(z);", f"z.store({name}(t));")
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code.id == "CT0002"
    assert "a recursive call of" in diagnostic.message
    assert where(diagnostic)[0] < line_of(text, "fn f<")  # inside a device function


# ----------------------------------------------------------------------------- inlining limits


def chain(levels: int, calls_per_level: int) -> str:
    """Device functions d0..d{levels}: each calls the next `calls_per_level` times."""

    def calls(i: int) -> str:
        return " + ".join([f"d{i + 1}(x)"] * calls_per_level)

    fns = "".join(f"    fn d{i}(x: i32) -> i32 {{ {calls(i)} }}\n" for i in range(levels))
    return fns + f"    fn d{levels}(x: i32) -> i32 {{ x }}\n"


def test_exponential_inlining_stops_at_the_budget_with_one_diagnostic() -> None:
    """Thirty functions that each call the next twice used to inline 2^30 copies."""
    text = with_devices(chain(12, 2), "let a = d0(1);", "z.store(x.load_like(z));")
    started = time.perf_counter()
    (diagnostic,) = errors(failing(text))
    assert time.perf_counter() - started < 5
    assert diagnostic.code is codes.INLINE_LIMIT
    assert re.fullmatch(
        r"inlining `d\d+` here passes the inlining budget of this kernel", diagnostic.message
    )
    callee = diagnostic.message.split("`")[1]
    assert diagnostic.primary_span.text == f"{callee}(x)"  # type: ignore[union-attr]
    assert diagnostic.notes[0].startswith("the chain of calls: `d0` -> `d1` -> ")
    assert diagnostic.notes[0].endswith(f"-> `{callee}`")


def test_a_deep_chain_that_is_not_recursive_is_reported_as_deep() -> None:
    deep = with_devices(chain(MAX_INLINE_DEPTH, 1), "let a = d0(1);", "z.store(x.load_like(z));")
    (diagnostic,) = errors(failing(deep))
    assert diagnostic.code is codes.INLINE_LIMIT
    assert diagnostic.message == (
        f"device-function calls nest deeper than {MAX_INLINE_DEPTH} levels"
    )
    assert diagnostic.primary_span.text == f"d{MAX_INLINE_DEPTH}(x)"  # type: ignore[union-attr]
    assert "recursive" not in full_text(diagnostic)
    # d0 .. d15: sixteen nested device functions are allowed
    typed(
        with_devices(chain(MAX_INLINE_DEPTH - 1, 1), "let a = d0(1);", "z.store(x.load_like(z));")
    )


def test_repeated_calls_within_the_budget_inline() -> None:
    k = typed(with_devices(chain(5, 2), "let a = d0(1);", "z.store(x.load_like(z));"))
    assert len(calls_named(k, "d0")) == 1


# ----------------------------------------------------------------------------- call sites

BAD = """
    fn bad<const N: i32>(t: Tile<f32, { [N] }>) -> Tile<f32, { [N] }> {
        t + 1i32
    }
"""


def test_an_error_inside_a_callee_points_at_the_callee_and_carries_the_call_site() -> None:
    text = with_devices(BAD, "let t = x.load_like(z);", "let a = bad(t);", "z.store(t);")
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code.id == "E0308"
    line, _ = where(diagnostic)
    assert line == line_of(text, "t + 1i32")
    site = diagnostic.primary_span.call_site
    assert site is not None and site.text == "bad(t)"
    call_line, call_col = site.start_line_col
    assert call_line == line_of(text, "let a = bad(t);")
    rendered = render(diagnostic)
    assert f" --> k.rs:{line}:" in rendered
    assert f"= note: inlined from the call at k.rs:{call_line}:{call_col}" in rendered
    assert all(lb.span.call_site is not None for lb in diagnostic.labels)


def test_each_call_of_a_failing_callee_reports_its_own_call_site() -> None:
    text = with_devices(
        BAD, "let t = x.load_like(z);", "let a = bad(t);", "let b = bad(t);", "z.store(t);"
    )
    result = failing(text)
    assert codes_of(result) == ["E0308", "E0308"]
    sites = [d.primary_span.call_site.start_line_col[0] for d in errors(result)]
    assert sites == [line_of(text, "let a = bad(t);"), line_of(text, "let b = bad(t);")]
    assert {where(d) for d in errors(result)} == {where(errors(result)[0])}


def test_an_error_in_a_callee_only_for_one_calls_types_names_that_call() -> None:
    devices = """
    fn half<const N: i32>(t: Tile<f32, { [N] }>) -> Tile<f32, { [64] }> {
        t
    }
"""
    text = with_devices(
        devices,
        "let h = x.partition(const_shape![64]).load([0i32]);",
        "let ok = half(h);",
        "let t = x.load_like(z);",
        "let bad = half(t);",
    )
    (diagnostic,) = errors(failing(text))
    assert diagnostic.code.id == "E0308"
    assert "expected `Tile<f32, {[64]}>`, found `Tile<f32, {[128]}>`" in diagnostic.message


def test_a_return_type_mismatch_in_a_callee_carries_the_call_site() -> None:
    devices = "    fn g(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { 1i32 }\n"
    text = with_devices(devices, "let t = x.load_like(z);", "z.store(g(t));")
    (diagnostic,) = errors(failing(text))
    assert where(diagnostic)[0] == line_of(text, "fn g(")
    assert "inlined from the call at" in render(diagnostic)


def test_nested_inlining_renders_every_call_site() -> None:
    devices = """
    fn inner(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { t + 1i32 }
    fn outer(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { inner(t) }
"""
    text = with_devices(devices, "let t = x.load_like(z);", "z.store(outer(t));")
    (diagnostic,) = errors(failing(text))
    rendered = render(diagnostic)
    inner_call = line_of(text, "{ inner(t) }")
    entry_call = line_of(text, "z.store(outer(t));")
    assert f"inlined from the call at k.rs:{inner_call}:" in rendered
    assert f"inlined from the call at k.rs:{entry_call}:" in rendered


def test_an_invalid_turbofish_value_is_one_error() -> None:
    devices = "    fn sz<const N: i32>() -> i32 { N }\n"
    text = with_devices(devices, "let u = sz::<nope>();", "let t = x.load_like(z);", "z.store(t);")
    assert codes_of(failing(text)) == ["CT0102"]


def test_a_type_where_a_const_generic_goes_is_one_error() -> None:
    """`sz::<&&N>()`: a reference type in a const generic's place (found by the fuzzer: it
    was an internal error)."""
    devices = "    fn sz<const N: i32>() -> i32 { N }\n"
    body = ("const N: i32 = 4;", "let u = sz::<&&N>();", "let t = x.load_like(z);", "z.store(t);")
    assert codes_of(failing(with_devices(devices, *body))) == ["CT0102"]


# ----------------------------------------------------------------------------- modules, files

HELPERS = """#[cutile::module]
mod helpers {
    use cutile::core::*;
    fn double(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { t + t }
}
"""
ENTRY = """#[cutile::module]
mod kernel {
    use cutile::core::*;
    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>, x: &Tensor<f32, { [-1] }>) {
        z.store(triple(double(x.load_like(z))));
    }
}
"""
MORE = """#[cutile::module]
mod more {
    use cutile::core::*;
    fn triple(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { t + t + t }
    #[cutile::entry()]
    fn g(z: &mut Tensor<f32, { [128] }>, x: &Tensor<f32, { [-1] }>) {
        z.store(x.load_like(z));
    }
}
"""


def compile_sources(entry: str, *files: tuple[str, str]) -> CompileResult:
    request = CompileRequest(tuple(SourceFile(n, t) for n, t in files), entry)
    return compile_kernel(request, stop_after=Stage.CHECK)


@pytest.mark.parametrize("entry", ["f", "kernel::f", "g", "more::g"])
def test_modules_across_files_link_into_one_program(entry: str) -> None:
    result = compile_sources(entry, ("a.rs", HELPERS + ENTRY), ("b.rs", MORE))
    assert result.ok, [render(d) for d in result.diagnostics]
    if entry.endswith("f"):
        names = sorted(c.function.name for c in result.kernel.body.inlined)
        assert names == ["double", "triple"]
        module_of = {
            c.function.name: i.function.module_path for c, i in result.kernel.body.inlined.items()
        }
        assert module_of == {"double": ("helpers",), "triple": ("more",)}


def test_a_function_from_a_file_not_in_the_request_is_unresolved() -> None:
    result = compile_sources("f", ("a.rs", HELPERS + ENTRY))
    (diagnostic,) = errors(result)
    assert diagnostic.code.id == "E0425" and "`triple`" in diagnostic.message
    assert diagnostic.primary_span.file_name == "a.rs"


def test_errors_in_a_callee_from_another_module_are_reported_at_the_call() -> None:
    """As cuTile Rust reports them: at the call in the caller's module, with the place
    inside the callee (here in another file) as a secondary label."""
    broken = MORE.replace("t + t + t", "t + 1i32")
    result = compile_sources("f", ("a.rs", HELPERS + ENTRY), ("b.rs", broken))
    (diagnostic,) = errors(result)
    assert diagnostic.primary_span.file_name == "a.rs"
    assert diagnostic.primary_span.text == "triple(double(x.load_like(z)))"
    inside = [lb.span for lb in diagnostic.labels if not lb.primary]
    assert {s.file_name for s in inside} == {"b.rs"}
    assert all(s.call_site is not None and s.call_site.file_name == "a.rs" for s in inside)
    text = render(diagnostic)
    assert "--> a.rs:11:17" in text and "::: b.rs:4:66" in text
    assert "in this call of `more::triple`" in text


def test_errors_in_a_callee_of_the_same_module_point_into_its_body() -> None:
    broken = ENTRY.replace(
        "    #[cutile::entry()]",
        "    fn triple(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { t + 1i32 }\n"
        "    #[cutile::entry()]",
    )
    result = compile_sources("f", ("a.rs", HELPERS + broken))
    (diagnostic,) = errors(result)
    assert diagnostic.primary_span.text == "t + 1i32"
    assert diagnostic.primary_span.call_site.text == "triple(double(x.load_like(z)))"
    assert "inlined from the call at a.rs:" in render(diagnostic)


def test_a_device_function_defined_twice_is_an_error() -> None:
    other = MORE.replace("fn triple", "fn double").replace("t + t + t", "t * t")
    result = compile_sources(
        "f", ("a.rs", HELPERS + ENTRY.replace("triple(", "(")), ("c.rs", other)
    )
    assert not result.ok


# ----------------------------------------------------------------------------- partitions

SIG2 = "z: &mut Tensor<f32, { [64, 64] }>, x: &Tensor<f32, { [-1, -1] }>"


def part_kernel(*lines: str) -> str:
    return kernel(body(*lines), sig=SIG2, generics="")


def test_partition_load_and_num_tiles_types() -> None:
    k = typed(
        part_kernel(
            "let px = x.partition(const_shape![32, 16]);",
            "let n = num_tiles(&px, 1);",
            "let t = px.load([0i32, n]);",
            "let u = x.load_tile(const_shape![32, 16], [0i32, n]);",
            "let extents: [i32; 2] = get_tensor_shape(x);",
            "let tiles: [i32; 2] = get_index_space_shape(&px);",
        ),
        {},
    )
    assert let_type(k, "u") == TileTy(Elem.F32, (32, 16))
    assert let_type(k, "extents") == ArrayTy(I32, 2) == let_type(k, "tiles")
    assert let_type(k, "px") == PartitionTy(Elem.F32, (32, 16), mutable=False)
    assert let_type(k, "n") == I32
    assert let_type(k, "t") == TileTy(Elem.F32, (32, 16))
    resolved = {c.span.text: r.intrinsic for c, r in k.calls.items()}
    assert resolved["px.load([0i32, n])"] == "partition_load"
    assert resolved["num_tiles(&px, 1)"] == "num_tiles"


def test_partition_mut_is_a_slab_of_sub_tiles_with_local_store_indices() -> None:
    k = typed(
        part_kernel(
            "let px = x.partition(const_shape![32, 32]);",
            "let mut pz = z.partition_mut(const_shape![32, 32]);",
            "for i in 0i32..2i32 {",
            "    pz.store(px.load([i, 0i32]), [i, 1]);",
            "}",
            "pz.store(px.load([0i32, 0i32]), [1, 0]);",
        ),
        {},
    )
    pz = let_type(k, "pz")
    assert pz == PartitionTy(Elem.F32, (32, 32), mutable=True, slab=(64, 64))
    assert pz.grid == (2, 2)
    assert sorted(r.intrinsic for r in k.calls.values()).count("partition_store") == 2


@pytest.mark.parametrize(
    ("lines", "code", "message"),
    [
        (
            ("let p = z.partition_mut(const_shape![32, 32]);", "p.store(t, [0, 0]);"),
            "E0596",
            "cannot borrow `p` as mutable",
        ),
        (
            ("let mut p = z.partition_mut(const_shape![32, 32]);", "p.store(t, [2, 0]);"),
            "CT0207",
            "index 2 on axis 0 is outside this block's 2 tiles",
        ),
        (
            ("let mut p = z.partition_mut(const_shape![32, 32]);", "p.store(t, [0, -1]);"),
            "CT0207",
            "index -1 on axis 1",
        ),
        (
            ("let mut p = z.partition_mut(const_shape![32, 32]);", "let u = p.load([0, 0]);"),
            "E0133",
            "call to unsafe function `load` is unsafe",
        ),
        (("let u = px.load([0i32]);",), "E0308", "expected a tile index `[i32; 2]`"),
        (("let u = px.load(0i32);",), "E0308", "expected a tile index"),
        (("let q = x.partition(const_shape![32]);",), "E0308", "needs a rank-2 tile shape"),
        (("let q = x.load_tile(const_shape![32], [0]);",), "E0308", "needs a rank-2 tile shape"),
        (
            ("let q = x.partition_permuted(const_shape![32, 32], const_array![1, 1]);",),
            "E0308",
            "the dim map must be a compile-time permutation of 0..2",
        ),
        (
            ("let q = x.partition_permuted(const_shape![32, 32], [1i32, 0i32]);",),
            "E0308",
            "the dim map must be a compile-time permutation",
        ),
        (("let q = load_tile(x, const_shape![32, 32], [0]);",), "E0308", "expected a tile index"),
        (("let q = x.partition(const_shape![24, 32]);",), "CT0202", "not a positive power of two"),
        (("let q = z.partition(const_shape![32, 32]);",), "CT0002", "`partition` of a `&mut"),
        (("let q = x.partition_mut(const_shape![32, 32]);",), "E0596", "behind a `&` reference"),
        (("px.store(t, [0, 0]);",), "E0596", "cannot store through a read-only `Partition`"),
        (("let n = num_tiles(&px, 2);",), "CT0102", "the axis must be a constant in 0..2"),
        (("let n = num_tiles(t, 0);",), "E0308", "expected a partition"),
        (
            (
                "let mut p = z.partition_mut(const_shape![32, 32]);",
                "p.store(t + t, [0, 0]);",
                "p.store(w, [0, 0]);",
            ),
            "E0308",
            "expected `Tile<f32, {[32, 32]}>`, found `Tile<f32, {[64, 32]}>`",
        ),
    ],
)
def test_partition_errors(lines: tuple[str, ...], code: str, message: str) -> None:
    text = part_kernel(
        "let px = x.partition(const_shape![32, 32]);",
        "let t = px.load([0i32, 0i32]);",
        "let w = x.partition(const_shape![64, 32]).load([0i32, 0i32]);",
        *lines,
    )
    (diagnostic,) = errors(failing(text, {}))
    assert diagnostic.code.id == code
    assert message in diagnostic.message
    assert where(diagnostic)[0] == line_of(text, lines[-1])


def test_constant_indices_inside_the_slab_pass_and_each_outside_one_is_reported() -> None:
    text = part_kernel(
        "let px = x.partition(const_shape![32, 32]);",
        "let t = px.load([0i32, 0i32]);",
        "let mut p = z.partition_mut(const_shape![32, 32]);",
        "p.store(t, [1, 1]);",
        "p.store(t, [2, 0]);",
        "p.store(t, [0, 5]);",
    )
    result = failing(text, {})
    assert codes_of(result) == ["CT0207", "CT0207"]
    assert "a block may only write the tiles of its own output slab" in full_text(errors(result)[0])


# ----------------------------------------------------------------------------- mapped partitions

MAPPED_SIG = (
    "mut z: MappedPartitionMut<f32, { [BM, BN] }, MAP>, "
    "mut w: MappedPartitionMut<f32, { [BM, BN] }, MAP>, "
    "x: &Tensor<f32, { [-1, -1] }>"
)
MAPPED_GENERICS = "<const BM: i32, const BN: i32, const MAP: [i32; 2]>"
MAPPED_VALUES = {"BM": "64", "BN": "64", "MAP": "[4, 1]"}


def mapped_kernel(*lines: str, sig: str = MAPPED_SIG) -> str:
    return kernel(
        body("let px = x.partition(const_shape![BM, BN]);", *lines),
        sig=sig,
        generics=MAPPED_GENERICS,
    )


def test_iter_indices_mints_branded_indices() -> None:
    k = typed(
        mapped_kernel(
            "for idx in z.iter_indices() {",
            "    let (m, n) = idx.components();",
            "    let c = idx.coords();",
            "    z.store(px.load([m, n]), idx);",
            "}",
        ),
        MAPPED_VALUES,
    )
    z = k.params[0]
    assert z.type == MappedTy(Elem.F32, (64, 64), (4, 1)) and z.mutable
    (loop,) = k.body.persistent_loops
    assert k.body.persistent_loops[loop] is z
    idx = k.body.loop_vars[loop]
    assert idx.type == PartitionIndexTy(2, z.id)
    assert let_type(k, "m") == I32
    assert let_type(k, "c") == ArrayTy(I32, 2)
    assert "mapped_store" in {r.intrinsic for r in k.calls.values()}


def test_coords_can_index_a_partition_and_rank_one_maps_work() -> None:
    typed(
        mapped_kernel(
            "for idx in z.iter_indices() {",
            "    z.store(px.load(idx.coords()), idx);",
            "}",
        ),
        MAPPED_VALUES,
    )
    rank1 = kernel(
        body(
            "let px = x.partition(const_shape![64]);",
            "for idx in z.iter_indices() {",
            "    let (m,) = idx.components();",
            "    z.store(px.load([m]), idx);",
            "}",
        ),
        sig="mut z: MappedPartitionMut<f32, { [64] }, { [1] }>, x: &Tensor<f32, { [-1] }>",
        generics="",
    )
    typed(rank1, {})


@pytest.mark.parametrize(
    ("lines", "code", "message"),
    [
        (
            ("for idx in z.iter_indices() {", "    w.store(px.load(idx.coords()), idx);", "}"),
            "CT0208",
            "index was produced by a different mapped partition",
        ),
        (
            (
                "for idx in z.iter_indices() {",
                "    let (m, n) = idx.components();",
                "    z.store(px.load([m, n]), [m, n]);",
                "}",
            ),
            "CT0208",
            "requires an index produced by this partition's",
        ),
        (
            (
                "for idx in z.iter_indices() {",
                "    for jdx in w.iter_indices() {",
                "        w.store(px.load(idx.coords()), idx);",
                "    }",
                "}",
            ),
            "CT0208",
            "index was produced by a different mapped partition",
        ),
        (("let it = z.iter_indices();",), "CT0002", "only supported as the iterator of a `for`"),
        (("for (a, b) in z.iter_indices() {", "}"), "CT0002", "must bind a simple index"),
        (("for i in px.iter_indices() {", "}"), "CT0002", "on anything but a `MappedPartitionMut`"),
        (
            (
                "for idx in z.iter_indices() {",
                "    z.store(px.load([0i32, 0i32]) + 1.0f32, idx);",
                "}",
            ),
            "E0308",
            "`+` needs operands of the same type",
        ),
    ],
)
def test_mapped_partition_errors(lines: tuple[str, ...], code: str, message: str) -> None:
    text = mapped_kernel(*lines)
    result = failing(text, MAPPED_VALUES)
    assert codes_of(result) in ([code], [code, code]), [d.message for d in errors(result)]
    diagnostic = errors(result)[0]
    assert message in diagnostic.message


def test_a_mapped_store_needs_a_mut_binding() -> None:
    text = mapped_kernel(
        "for idx in z.iter_indices() {",
        "    z.store(px.load(idx.coords()), idx);",
        "}",
        sig=MAPPED_SIG.replace("mut z", "z"),
    )
    (diagnostic,) = errors(failing(text, MAPPED_VALUES))
    assert diagnostic.code.id == "E0596"
    assert diagnostic.message == "cannot borrow `z` as mutable, as it is not declared as mutable"
    assert "`mut z: MappedPartitionMut<..>`" in full_text(diagnostic)


@pytest.mark.parametrize(
    ("map_shape", "code"),
    [
        ("[2, 2]", None),
        ("[0, 1]", None),  # axis 0 OWNED: one work item per column of tiles
        ("[0, 0]", "CT0102"),  # nothing streamed
        ("[1, -1]", "CT0102"),
        ("[4]", "CT0102"),
        ("[1, 8]", None),
        ("[1, 1]", None),
    ],
)
def test_supported_map_shapes(map_shape: str, code: str | None) -> None:
    text = mapped_kernel(
        "for idx in z.iter_indices() {", "    z.store(px.load(idx.coords()), idx);", "}"
    )
    result = check(text, "f", {**MAPPED_VALUES, "MAP": map_shape})
    assert set(codes_of(result)) == ({code} if code else set())  # one per mapped param


def test_num_tiles_of_a_mapped_partition() -> None:
    k = typed(mapped_kernel("let n = num_tiles(z, 0);"), MAPPED_VALUES)
    assert let_type(k, "n") == I32


def test_num_tiles_of_a_borrowed_mapped_partition() -> None:
    typed(mapped_kernel("let n = num_tiles(&z, 0);"), MAPPED_VALUES)


def test_a_mapped_output_cannot_be_mixed_with_a_partitioned_output() -> None:
    text = kernel(
        body(
            "let px = x.partition(const_shape![64, 64]);",
            "for idx in z.iter_indices() {",
            "    z.store(px.load(idx.coords()), idx);",
            "}",
            "w.store(load_tile_like(x, w));",
        ),
        sig="mut z: MappedPartitionMut<f32, { [64, 64] }, { [4, 1] }>, "
        "w: &mut Tensor<f32, { [64, 64] }>, x: &Tensor<f32, { [-1, -1] }>",
        generics="",
    )
    assert not check(text, "f", {}).ok


TWO_MODULES = """
#[cutile::module]
mod first {
    use cutile::core::*;
    fn helper(t: Tile<f32, { [64] }>) -> Tile<f32, { [64] }> { t + t }
    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [64] }>, x: &Tensor<f32, { [-1] }>) {
        z.store(helper(load_tile_like(x, z)));
    }
}
#[cutile::module]
mod second {
    use cutile::core::*;
    fn helper(t: Tile<f32, { [64] }>) -> Tile<f32, { [64] }> { t * t }
    #[cutile::entry()]
    fn g(z: &mut Tensor<f32, { [64] }>, x: &Tensor<f32, { [-1] }>) {
        z.store(helper(load_tile_like(x, z)));
    }
}
"""


@pytest.mark.parametrize(("entry", "module"), [("f", ("first",)), ("g", ("second",))])
def test_a_name_resolves_in_the_callers_module_first(entry: str, module: tuple[str, ...]) -> None:
    result = check(TWO_MODULES, entry, {})
    assert result.ok, [render(d) for d in result.diagnostics]
    (inlined,) = result.kernel.body.inlined.values()  # type: ignore[union-attr]
    assert inlined.function.module_path == module


def test_permute_array_reorders_an_index_array() -> None:
    k = typed(
        part_kernel(
            "let a: [i32; 3] = [1i32, 2i32, 3i32];",
            "let b = permute_array(a, const_array![2, 0, 1]);",
        ),
        {},
    )
    assert let_type(k, "b") == ArrayTy(I32, 3)


def test_the_callers_module_shadows_a_function_of_the_same_name_elsewhere() -> None:
    """As in Rust, `double` in `kernel` calls `kernel::double`, not `helpers::double`."""
    own = ENTRY.replace(
        "    #[cutile::entry()]",
        "    fn double(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { t * t }\n"
        "    fn triple(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> { t }\n"
        "    #[cutile::entry()]",
    )
    result = compile_sources("f", ("a.rs", HELPERS + own), ("b.rs", MORE))
    assert result.ok, [render(d) for d in result.diagnostics]
    inlined = result.kernel.body.inlined  # type: ignore[union-attr]
    assert {call.function.module_path for call in inlined.values()} == {("kernel",)}


def test_a_slice_parameter_takes_an_array_of_any_length() -> None:
    k = typed(
        with_devices(
            "    fn first(dims: &[i32]) -> i32 { dims[0] * dims[2] }",
            "let dims: &[i32] = &[n, 2i32, 3i32];",
            "let a = first(dims);",
            "let b = first(&[n, n, n, n]);",
            "let c = first(&dims);",
            sig="z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>, n: i32",
        ),
        {"B": "128"},
    )
    assert str(let_type(k, "dims")) == "[i32; 3]"
    assert let_type(k, "a") == let_type(k, "b") == let_type(k, "c") == I32


def test_a_host_function_called_through_super_is_unresolved_at_the_call() -> None:
    text = kernel(body("let v = super::host_helper();", "z.store(x.load_like(z));"))
    result = check(text)
    (diagnostic,) = errors(result)
    assert diagnostic.code.id == "E0425" and "`host_helper`" in diagnostic.message
    assert where(diagnostic) == (line_of(text, "super::host_helper"), 17)
    assert "is not a kernel function" in diagnostic.notes[0]


CLOSURE_HELPER = """    fn twice<E: ElementType, F>(a: Tile<E, { [128] }>, f: F)
        -> Tile<E, { [128] }>
    where
        F: Fn(Tile<E, { [128] }>) -> Tile<E, { [128] }>,
    {
        let once = f(a);
        f(once)
    }
"""


def test_a_closure_argument_is_inlined_where_the_callee_calls_it() -> None:
    """`F: Fn(..)` parameters take closures; each call of one checks the closure's body
    with that call's argument types and the variables it captured."""
    text = kernel(
        body(
            "let t = x.load_like(z);",
            "let two = constant(2.0f32, const_shape![128]);",
            "let r = twice(t, |v| v * two);",
            "z.store(r);",
        ),
        extra=CLOSURE_HELPER,
    )
    k = typed(text)
    (outer,) = k.body.inlined.values()
    closure_calls = list(outer.body.inlined.values())
    assert [c.function.name for c in closure_calls] == ["{closure}", "{closure}"]
    assert [p.type for c in closure_calls for p in c.params] == [TILE, TILE]
    result = check(text, stop_after=Stage.IR)
    assert result.ok
    assert str(result.ir).count("MulF(") == 2


def test_an_underscore_in_a_turbofish_is_inferred() -> None:
    lines = ("let r = twice::<f32, _>(x.load_like(z), |v| v + v);", "z.store(r);")
    result = check(kernel(body(*lines), extra=CLOSURE_HELPER))
    assert result.ok, [render(d) for d in result.diagnostics]


def test_a_closure_called_with_the_wrong_arity_is_e0061() -> None:
    helper = CLOSURE_HELPER.replace("let once = f(a);", "let once = f(a, a);")
    text = kernel(body("let r = twice(x.load_like(z), |v| v);", "z.store(r);"), extra=helper)
    result = failing(text)
    assert [d.code.id for d in errors(result)] == ["E0061"]
    assert "this closure takes 1 argument(s) but 2 were supplied" in errors(result)[0].message
