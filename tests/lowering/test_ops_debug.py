"""`print_tko` and `assert`: disassembly, assembly, format checking, version gates."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lowering.bytecode.tables import BytecodeError
from lowering.bytecode.writer import write_bytecode
from lowering.ir import ops_compare as compare
from lowering.ir import ops_core as core
from lowering.ir.attributes import ComparisonPredicate
from lowering.ir.core import Builder, Function, Module
from lowering.ir.ops_debug import Assert, PrintTko, count_format_args
from lowering.ir.printer import print_op
from lowering.ir.types import I1, I32, TOKEN, ElementType, TileType
from lowering.ir.verify import verify_module
from lowering.tileiras import Tileiras
from tests.lowering.view_kernels import start_view_kernel

DATA = TileType(ElementType.F32, (128,))


def build_debug() -> Module:
    k = start_view_kernel(DATA, DATA)
    x = k.load(0)
    first = k.b.emit(
        PrintTko, result_token=TOKEN, format="block %d: x=%f 100%%\n", args=(k.block, x)
    )
    k.b.emit(PrintTko, result_token=TOKEN, format="after\n", token=first.result_token)
    ok = k.b.emit(
        compare.CmpI, result=I1, predicate=ComparisonPredicate.GE, lhs=k.block, rhs=k.zero
    )
    k.b.emit(Assert, message='block id "negative"', condition=ok.result)
    positive = k.b.emit(
        compare.CmpF,
        result=TileType(ElementType.I1, (128,)),
        predicate=ComparisonPredicate.GE,
        lhs=x,
        rhs=x,
    )
    k.b.emit(Assert, message="x is nan", condition=positive.result)
    k.store(1, x)
    return k.finish("debug")


@pytest.mark.tileiras
def test_debug_ops_disassemble_and_assemble(
    disassemble: Callable[[bytes], str], tileiras: Tileiras
) -> None:
    module = build_debug()
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    for spelled in (
        '%1 = print_tko "block %d: x=%f 100%%\\0A", %blockId_x, %tile'
        " : tile<i32>, tile<128xf32> -> token",
        '%2 = print_tko "after\\0A" token=%1 -> token',
        'assert %3, "block id \\22negative\\22" : tile<i1>',
        'assert %4, "x is nan" : tile<128xi1>',
    ):
        assert spelled in text, spelled
    for sm in ("sm_80", "sm_90"):
        tileiras.assemble(write_bytecode(module), arch=sm)


@pytest.mark.tileiras
def test_print_needs_13_2(tileiras: Tileiras) -> None:
    with pytest.raises(BytecodeError, match=r"print_tko: a result token needs bytecode 13.2"):
        write_bytecode(build_debug(), (13, 1))
    for version in ((13, 2), (13, 4)):
        tileiras.assemble(write_bytecode(build_debug(), version), arch="sm_90")


def test_printed_forms() -> None:
    b = Builder()
    x = b.value(I32)
    op = b.emit(PrintTko, result_token=TOKEN, format='n="%d"\n', args=(x,))
    assert print_op(op) == '%1 = print_tko args[%0] {format = "n=\\"%d\\"\\n"} : token'
    cond = b.value(I1)
    assert print_op(b.emit(Assert, message="m", condition=cond)) == 'assert %2 {message = "m"}'


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("", 0),
        ("%d", 1),
        ("%%", 0),
        ("%5.2f and %+08.3e %s", 3),
        ("100%% %x", 1),
        ("%", None),
        ("%5.", None),
    ],
)
def test_count_format_args(text: str, count: int | None) -> None:
    assert count_format_args(text) == count


def _errors(fmt: str, n_args: int, cond: TileType = I1) -> list[str]:
    b = Builder()
    args = tuple(b.value(I32) for _ in range(n_args))
    c = b.value(cond)
    b.emit(PrintTko, result_token=TOKEN, format=fmt, args=args)
    b.emit(Assert, message="m", condition=c)
    b.emit(core.Return)
    params = (*args, c)
    return verify_module(Module((Function("k", params, b.finish(params), is_entry=False),)))


def test_rules() -> None:
    assert _errors("%d %d", 2) == []
    assert _errors("%d %d", 1) == ["@k: print_tko: format takes 2 arguments, got 1"]
    assert _errors("50%", 0) == ["@k: print_tko: unterminated format expression in '50%'"]
    assert _errors("", 0, cond=I32) == ["@k: assert: condition must be an i1 tile, got tile<i32>"]
