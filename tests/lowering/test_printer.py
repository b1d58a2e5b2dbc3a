"""The IR printer: stable, readable text with nested regions indented."""

from __future__ import annotations

import dataclasses
import re

from lowering.ir.attributes import ComparisonPredicate, EntryHints, MemoryOrdering
from lowering.ir.core import Builder, Function, Module
from lowering.ir.ops_arith import AddI
from lowering.ir.ops_core import Return
from lowering.ir.printer import format_attribute, print_module, print_op
from lowering.ir.types import I32


def test_vadd_prints_expected_lines(vadd_module: Module) -> None:
    text = print_module(vadd_module)
    assert text.startswith("entry @vadd_ir(%0: tile<ptr<f32>>, %1: tile<i32>, %2: tile<i32>,")
    assert "  %9 = make_token : token\n" in text
    assert "  %10 = assume %0 {predicate = div_by<16>} : tile<ptr<f32>>\n" in text
    assert "  %11 = assume %1 {predicate = bounded<0, ?>} : tile<i32>\n" in text
    assert "make_tensor_view %10, dynamic_shape[%11], dynamic_strides[]" in text
    assert "%19, %20, %21 = get_tile_block_id : tile<i32>, tile<i32>, tile<i32>" in text
    assert (
        "%25, %26 = load_view_tko %22, index[%19], token(%9) {ordering = weak}"
        " : tile<1024xf32>, token"
    ) in text
    assert text.endswith("  return\n}\n")


def test_printing_is_deterministic(vadd_module: Module) -> None:
    first = print_module(vadd_module)
    assert first == print_module(vadd_module)
    assert not re.search(r"0x[0-9a-f]{6,}", first), "no object ids in the text"


def test_regions_are_indented_under_their_op(for_module: Module) -> None:
    lines = print_module(for_module).splitlines()
    head = next(i for i, line in enumerate(lines) if " = for " in line)
    assert lines[head].startswith("  %") and lines[head].endswith(": tile<1024xf32>")
    assert "init_values[" in lines[head] and "{unsigned_cmp = false}" in lines[head]
    assert lines[head + 1] == "    body {"
    assert lines[head + 2].startswith("    ^bb0(%") and ": tile<1024xf32>):" in lines[head + 2]
    assert lines[head + 3].startswith("      %")
    assert any(line.startswith("      continue %") for line in lines[head:])


def test_if_prints_both_regions(if_module: Module) -> None:
    text = print_module(if_module)
    assert "    then_region {\n" in text and "    else_region {\n" in text
    assert re.search(r"^      yield %\d+$", text, re.M)


def test_print_op_at_an_indent() -> None:
    b = Builder()
    x = b.value(I32)
    op = b.emit(AddI, result=I32, lhs=x, rhs=x)
    assert print_op(op) == "%1 = addi %0, %0 {overflow = none} : tile<i32>"
    assert print_op(op, 2) == "    %1 = addi %0, %0 {overflow = none} : tile<i32>"


def test_function_kinds_and_hints() -> None:
    b = Builder()
    b.emit(Return)
    body = b.finish(())
    entry = Function("k", (), body, hints=(EntryHints("sm_90", num_cta_in_cga=2),))
    helper = dataclasses.replace(entry, name="h", is_entry=False, hints=())
    text = print_module(Module((entry, helper)))
    assert text == (
        "entry @k() optimization_hints=<sm_90 = {num_cta_in_cga = 2}> {\n  return\n}\n"
        "\nfunc @h() {\n  return\n}\n"
    )


def test_attribute_formatting() -> None:
    assert format_attribute(True) == "true"
    assert format_attribute(MemoryOrdering.ACQ_REL) == "acq_rel"
    assert format_attribute(ComparisonPredicate.GE) == "ge"
    assert format_attribute((1, 2.5, False)) == "[1, 2.5, false]"
