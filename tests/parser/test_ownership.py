"""Borrows, moves and `unsafe` (`parser.checks.ownership`): each rule, its labels, and the
controls that must stay clean (every catalog example, NLL-accepted code)."""

from __future__ import annotations

import pytest

from lowering.pipeline import CompileRequest, CompileResult, Stage, compile_kernel
from parser.checks import ownership
from parser.diagnostics import Diagnostic, Severity
from parser.render import render
from parser.spans import SourceFile
from rust_examples.catalog import Specialization, specializations
from tests.parser.support import kernel, source

ONE = "let one = constant(1.0f32, const_shape![16]);"
STORE_TWICE = """
    fn store_twice<const N: i32>(
        a: &mut Tensor<f32, { [N] }>, b: &mut Tensor<f32, { [N] }>, t: Tile<f32, { [N] }>
    ) {
        a.store(t);
        b.store(t);
    }
"""
SHARED_AND_MUT = """
    fn fill_like<const N: i32>(dst: &mut Tensor<f32, { [N] }>, like: &Tensor<f32, { [N] }>) {
        dst.store(constant(0.0f32, like.shape()));
    }
"""
BY_VALUE = """
    fn first_tile(p: Partition<f32, { [16] }>) -> Tile<f32, { [16] }> {
        p.load([0i32])
    }
"""
UNSAFE_STORE = """
    unsafe fn raw_store<const N: i32>(out: &mut Tensor<f32, { [N] }>, t: Tile<f32, { [N] }>) {
        out.store(t);
    }
"""


def check(body: str, extra: str = "", fn: str = "fn") -> CompileResult:
    text = kernel(body, extra=extra, fn=fn)
    request = CompileRequest((source(text),), "f", (("B", "128"),))
    return compile_kernel(request, stop_after=Stage.CHECK)


def errors(body: str, extra: str = "", fn: str = "fn") -> list[Diagnostic]:
    return [d for d in check(body, extra, fn).diagnostics if d.is_error]


def codes_of(body: str, extra: str = "", fn: str = "fn") -> list[str]:
    return [d.code.id for d in errors(body, extra, fn)]


def clean(body: str, extra: str = "", fn: str = "fn") -> None:
    result = check(body, extra, fn)
    assert result.ok and result.kernel is not None, [render(d) for d in result.diagnostics]
    assert not result.diagnostics, [render(d) for d in result.diagnostics]


def labels(diagnostic: Diagnostic) -> list[str]:
    return [label.message for label in diagnostic.labels]


# ----------------------------------------------------------------------------- controls


@pytest.mark.parametrize("spec", specializations(), ids=lambda s: f"{s.file}:{s.label}")
def test_every_catalog_example_passes_the_checks(spec: Specialization) -> None:
    request = CompileRequest(
        (SourceFile(spec.file, spec.path.read_text()),), spec.entry, spec.generics
    )
    result = compile_kernel(request, stop_after=Stage.CHECK)
    assert result.ok and result.kernel is not None
    assert not result.diagnostics, [render(d) for d in result.diagnostics]


def test_a_partition_mut_is_dead_after_its_last_use() -> None:
    clean(
        f"let mut p = z.partition_mut(const_shape![16]);\n{ONE}\np.store(one, [0i32]);\n"
        "let t = x.load_like(z);\nz.store(t);"
    )


def test_a_partition_mut_made_inside_the_loop_is_fresh_each_iteration() -> None:
    clean(
        "for i in 0i32..8i32 {\n"
        "    let mut p = z.partition_mut(const_shape![16]);\n"
        f"    {ONE}\n    p.store(one, [i]);\n"
        "    let s = z.shape();\n"
        "}"
    )


def test_the_other_branch_of_an_if_does_not_keep_the_borrow_alive() -> None:
    clean(
        "let mut p = z.partition_mut(const_shape![16]);\n"
        "let (pid, _, _) = get_tile_block_id();\n"
        f"{ONE}\n"
        "if pid > 0i32 { p.store(one, [0i32]); } else { let t = x.load_like(z); z.store(t); }"
    )


def test_shared_reads_during_a_two_phase_receiver_borrow_are_fine() -> None:
    clean("z.store(load_tile_like(x, z) + x.load_like(z));")


def test_shared_references_are_copy() -> None:
    clean(
        "let y = x;\nlet t = x.load_like(z);\nlet u = y.load_like(z);\nz.store(t + u);",
    )


def test_mutable_references_are_reborrowed_by_calls() -> None:
    callee = UNSAFE_STORE.replace("unsafe fn raw_store", "fn put")
    clean("let t = x.load_like(z);\nput(z, t);\nput(z, t);\nz.store(t);", extra=callee)


# ----------------------------------------------------------------------------- E0499 / E0502


def test_second_partition_mut_while_the_first_is_live() -> None:
    found = errors(
        "let mut a = z.partition_mut(const_shape![16]);\n"
        "let mut b = z.partition_mut(const_shape![32]);\n"
        f"{ONE}\na.store(one, [0i32]);\nb.store(constant(1.0f32, const_shape![32]), [0i32]);"
    )
    assert [d.code.id for d in found] == ["E0499"]
    assert "cannot borrow `*z` as mutable more than once at a time" in found[0].message
    assert labels(found[0]) == [
        "second mutable borrow occurs here",
        "first mutable borrow occurs here",
        "first borrow later used here",
    ]


def test_store_and_shared_reads_while_partitioned() -> None:
    body = (
        "let mut p = z.partition_mut(const_shape![16]);\n"
        "let t = x.load_like(z);\nz.store(t);\nlet s = z.shape();\n"
        f"{ONE}\np.store(one, [0i32]);"
    )
    assert codes_of(body) == ["E0502", "E0499", "E0502"]
    shared = errors(body)[0]
    assert "as immutable because it is also borrowed as mutable" in shared.message
    assert labels(shared)[1:] == ["mutable borrow occurs here", "mutable borrow later used here"]


def test_a_use_at_the_top_of_a_loop_keeps_the_borrow_alive_at_its_bottom() -> None:
    found = errors(
        f"let mut p = z.partition_mut(const_shape![16]);\n{ONE}\n"
        "for i in 0i32..8i32 {\n    p.store(one, [i]);\n    let t = z.load();\n}"
    )
    assert [d.code.id for d in found] == ["E0499"]
    assert "first borrow later used here, in later iteration of loop" in labels(found[0])


def test_the_same_output_twice_in_one_call() -> None:
    found = errors("let t = x.load_like(z);\nstore_twice(z, z, t);", extra=STORE_TWICE)
    assert [d.code.id for d in found] == ["E0499"]
    assert "first borrow later used by call" in labels(found[0])
    assert codes_of("fill_like(z, z);", extra=SHARED_AND_MUT) == ["E0502"]


def test_a_mutable_borrow_inside_the_arguments_of_a_mutable_argument() -> None:
    found = errors("store_tile(z, load_tile_mut(z));")
    assert [d.code.id for d in found] == ["E0499"]
    assert "first borrow later used by call" in labels(found[0])
    # the method form is a two-phase borrow, accepted on purpose (rustc: E0499)
    clean("z.store(z.load());")


def test_a_returned_reference_keeps_its_argument_borrowed() -> None:
    pick = """
    fn pick<const N: i32>(a: &mut Tensor<f32, { [N] }>) -> &mut Tensor<f32, { [N] }> {
        a
    }
"""
    body = "let t = x.load_like(z);\nlet w = pick(z);\nz.store(t);\nw.store(t);"
    assert codes_of(body, extra=pick) == ["E0499"]
    clean("let t = x.load_like(z);\nlet w = pick(z);\nw.store(t);\nz.store(t);", extra=pick)


def test_borrow_errors_inside_a_device_function_are_reported_once() -> None:
    callee = """
    fn fill<const N: i32>(out: &mut Tensor<f32, { [N] }>, t: Tile<f32, { [N] }>) {
        let mut part = out.partition_mut(const_shape![16]);
        out.store(t);
        part.store(constant(0.0f32, const_shape![16]), [0i32]);
    }
"""
    found = errors("let t = x.load_like(z);\nfill(z, t);\nfill(z, t);", extra=callee)
    assert [d.code.id for d in found] == ["E0499"]
    assert found[0].primary_span is not None and found[0].primary_span.call_site is not None


# ----------------------------------------------------------------------------- moves


def test_use_after_move_into_a_device_function() -> None:
    found = errors(
        "let p = x.partition(const_shape![16]);\nlet a = first_tile(p);\nlet b = p.load([1i32]);",
        extra=BY_VALUE,
    )
    assert [d.code.id for d in found] == ["E0382"]
    assert found[0].message == "borrow of moved value: `p`"
    assert labels(found[0]) == ["value borrowed here after move", "value moved here"]
    assert "does not implement the `Copy` trait" in found[0].notes[0]


def test_move_in_a_loop_is_a_use_after_move_on_the_next_iteration() -> None:
    found = errors(
        "let p = x.partition(const_shape![16]);\nfor i in 0i32..4i32 { let t = first_tile(p); }",
        extra=BY_VALUE,
    )
    assert [d.code.id for d in found] == ["E0382"]
    # rustc's one label: the use after the move is the move of the previous iteration
    assert labels(found[0]) == ["value moved here, in previous iteration of loop"]
    assert found[0].primary_span.text == "p"  # type: ignore[union-attr]
    clean(
        "for i in 0i32..4i32 {\n    let p = x.partition(const_shape![16]);\n"
        "    let t = first_tile(p);\n}",
        extra=BY_VALUE,
    )


def test_let_moves_non_copy_values() -> None:
    assert codes_of(
        "let p = x.partition(const_shape![16]);\nlet q = p;\nlet t = p.load([0i32]);"
    ) == ["E0382"]
    assert codes_of("let w = z;\nlet t = x.load_like(w);\nz.store(t);") == ["E0382"]
    clean("let p = x.partition(const_shape![16]);\nlet q = p;\nlet t = q.load([0i32]);")


def test_moving_a_borrowed_output() -> None:
    found = errors(
        f"let mut p = z.partition_mut(const_shape![16]);\nlet w = z;\n{ONE}\np.store(one, [0i32]);"
    )
    assert [d.code.id for d in found] == ["E0505"]
    assert found[0].message == "cannot move out of `z` because it is borrowed"


def test_a_moved_holder_carries_the_borrow() -> None:
    body = (
        "let mut p = z.partition_mut(const_shape![16]);\nlet mut q = p;\n"
        f"let s = z.shape();\n{ONE}\nq.store(one, [0i32]);"
    )
    assert codes_of(body) == ["E0502"]


def test_returning_a_reference_to_a_local() -> None:
    view = """
    fn view(t: &Tensor<f32, { [-1] }>) -> Partition<f32, { [16] }> {
        let p = t.partition(const_shape![16]);
        &p
    }
"""
    found = errors("let p = view(x);", extra=view)
    assert [d.code.id for d in found] == ["E0515"]
    assert "cannot return reference to local variable `p`" in found[0].message


# ----------------------------------------------------------------------------- unsafe


def test_unsafe_device_function_needs_an_unsafe_context() -> None:
    found = errors("let t = x.load_like(z);\nraw_store(z, t);", extra=UNSAFE_STORE)
    assert [d.code.id for d in found] == ["E0133"]
    assert "call to unsafe function `raw_store` is unsafe" in found[0].message
    clean("let t = x.load_like(z);\nunsafe { raw_store(z, t); }", extra=UNSAFE_STORE)
    clean("let t = x.load_like(z);\nraw_store(z, t);", extra=UNSAFE_STORE, fn="unsafe fn")


def test_unsafe_calls_inside_a_device_function() -> None:
    wrapper = UNSAFE_STORE + (
        "    fn wrapper<const N: i32>(o: &mut Tensor<f32, { [N] }>, t: Tile<f32, { [N] }>) {\n"
        "        raw_store(o, t);\n    }\n"
    )
    assert codes_of("let t = x.load_like(z);\nwrapper(z, t);", extra=wrapper) == ["E0133"]
    clean(
        "let t = x.load_like(z);\nwrapper(z, t);",
        extra=wrapper.replace("fn wrapper", "unsafe fn wrapper").replace(
            "wrapper(z, t)", "unsafe { wrapper(z, t) }"
        ),
        fn="unsafe fn",
    )


def test_an_unsafe_block_around_safe_code_is_a_warning() -> None:
    result = check("let t = x.load_like(z);\nunsafe { z.store(t); }")
    assert result.ok and result.kernel is not None
    [warning] = result.diagnostics
    assert warning.severity is Severity.WARNING
    assert warning.code.id == "CT0301" and warning.message == "unnecessary `unsafe` block"
    # the reference's `let mut p = unsafe { out.partition_mut(s) };` compiles, with the warning
    result = check(
        f"let mut p = unsafe {{ z.partition_mut(const_shape![16]) }};\n{ONE}\np.store(one, [0i32]);"
    )
    assert result.ok and [d.code.id for d in result.diagnostics] == ["CT0301"]


def test_unsafe_prelude_intrinsics_need_an_unsafe_context(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ownership, "UNSAFE_INTRINSICS", frozenset({"shape"}))
    found = errors("let s = z.shape();")
    assert [d.code.id for d in found] == ["E0133"] and "`shape`" in found[0].message
    clean("let s = unsafe { z.shape() };")


# ----------------------------------------------------------------------------- neighbours


def test_mutating_through_a_parameter_declared_shared() -> None:
    callee = """
    fn write<const N: i32>(out: &Tensor<f32, { [N] }>, t: Tile<f32, { [N] }>) {
        out.store(t);
    }
"""
    found = errors("let t = x.load_like(z);\nwrite(z, t);", extra=callee)
    assert [d.code.id for d in found] == ["E0596"]
    assert "behind a `&` reference" in found[0].message


def test_rules_enforced_by_the_type_checker_still_hold() -> None:
    assert codes_of("let a = 1i32;\na = 2i32;") == ["E0384"]
    assert codes_of("let t = x.load_like(z);\nx.store(t);") == ["E0596"]
    assert codes_of(
        f"let p = z.partition_mut(const_shape![16]);\n{ONE}\np.store(one, [0i32]);"
    ) == ["E0596"]
    assert codes_of("let t = x.load_like(z);\nstore_twice(x, z, t);", extra=STORE_TWICE) == [
        "E0308"
    ]
