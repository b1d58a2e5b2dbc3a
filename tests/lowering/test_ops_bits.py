"""Integer bit ops (andi/ori/xori/shli/shri/absi/mulhii): disassembly, assembly, rules."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lowering.bytecode.writer import SUPPORTED_VERSIONS, write_bytecode
from lowering.ir import ops_compare as compare
from lowering.ir import ops_core as core
from lowering.ir.attributes import ComparisonPredicate, IntegerOverflow, Signedness
from lowering.ir.core import Builder, Function, Module, Op, Value
from lowering.ir.ops_bits import AbsI, AndI, MulhiI, OrI, ShLI, ShRI, XOrI
from lowering.ir.printer import print_op
from lowering.ir.types import ElementType, TileType
from lowering.ir.verify import verify_module
from lowering.tileiras import Tileiras
from tests.lowering.view_kernels import start_view_kernel

INTS = TileType(ElementType.I32, (128,))
MASK = TileType(ElementType.I1, (128,))


def build_bits() -> Module:
    k = start_view_kernel(INTS, INTS, INTS)
    x, y = k.load(0), k.load(1)

    def bin_(op: type[Op], lhs: Value, rhs: Value, **kw: object) -> Value:
        return k.b.emit(op, result=lhs.type, lhs=lhs, rhs=rhs, **kw).results[0]

    v = bin_(AndI, x, y)
    v = bin_(OrI, v, y)
    v = bin_(XOrI, v, x)
    v = bin_(ShLI, v, y, overflow=IntegerOverflow.NSW)
    v = bin_(ShRI, v, y, signedness=Signedness.UNSIGNED)
    v = bin_(ShRI, v, y)
    v = bin_(MulhiI, v, x)
    v = k.b.emit(AbsI, result=INTS, source=v).result
    # masks are i1 tiles: and/or/xor work on them too
    zero = k.const(INTS, 0)
    pos = k.b.emit(compare.CmpI, result=MASK, predicate=ComparisonPredicate.GT, lhs=x, rhs=zero)
    neg = k.b.emit(compare.CmpI, result=MASK, predicate=ComparisonPredicate.LT, lhs=y, rhs=zero)
    both = bin_(XOrI, bin_(AndI, pos.result, neg.result), bin_(OrI, pos.result, neg.result))
    v = k.b.emit(compare.Select, result=INTS, condition=both, if_true=v, if_false=x).result
    k.store(2, v)
    return k.finish("bits")


@pytest.mark.tileiras
def test_bit_ops_disassemble_and_assemble(
    disassemble: Callable[[bytes], str], tileiras: Tileiras
) -> None:
    module = build_bits()
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    for spelled in (
        "%1 = andi %tile, %tile_6 : tile<128xi32>",
        "%2 = ori %1, %tile_6 : tile<128xi32>",
        "%3 = xori %2, %tile : tile<128xi32>",
        "%4 = shli %3, %tile_6 overflow<no_signed_wrap> : tile<128xi32>",
        "%5 = shri %4, %tile_6 unsigned : tile<128xi32>",
        "%6 = shri %5, %tile_6 signed : tile<128xi32>",
        "%7 = mulhii %6, %tile : tile<128xi32>",
        "%8 = absi %7 : tile<128xi32>",
        "andi %9, %10 : tile<128xi1>",
    ):
        assert spelled in text, spelled
    for sm in ("sm_80", "sm_90"):
        tileiras.assemble(write_bytecode(module), arch=sm)


@pytest.mark.tileiras
@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_bit_ops_in_every_version(version: tuple[int, int], tileiras: Tileiras) -> None:
    tileiras.assemble(write_bytecode(build_bits(), version), arch="sm_90")


def test_printed_forms() -> None:
    b = Builder()
    x = b.value(INTS)
    assert print_op(b.emit(ShLI, result=INTS, lhs=x, rhs=x)) == (
        "%1 = shli %0, %0 {overflow = none} : tile<128xi32>"
    )
    assert print_op(b.emit(ShRI, result=INTS, lhs=x, rhs=x)) == (
        "%2 = shri %0, %0 {signedness = signed} : tile<128xi32>"
    )
    assert print_op(b.emit(AbsI, result=INTS, source=x)) == "%3 = absi %0 : tile<128xi32>"


@pytest.mark.parametrize("op_class", [AndI, OrI, XOrI, ShLI, ShRI, MulhiI])
def test_binary_rules(op_class: type[Op]) -> None:
    floats = TileType(ElementType.F32, (128,))
    for lhs, rhs, res, message in (
        (floats, floats, floats, "needs integer operands, got tile<128xf32>"),
        (INTS, TileType(ElementType.I64, (128,)), INTS, "operand and result types differ"),
    ):
        b = Builder()
        a, c = b.value(lhs), b.value(rhs)
        b.emit(op_class, result=res, lhs=a, rhs=c)
        b.emit(core.Return)
        fn = Function("k", (a, c), b.finish((a, c)), is_entry=False)
        assert verify_module(Module((fn,))) == [f"@k: {op_class.NAME}: {message}"]
