"""The float math ops added beside the originals: tan, sinh, cosh, ceil, floor, remf,
pow and atan2 (bytecode 13.2+)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lowering.bytecode.tables import BytecodeError
from lowering.bytecode.writer import write_bytecode
from lowering.ir import ops_core as core
from lowering.ir.core import Builder, Function, Module, Op, Value
from lowering.ir.ops_math import Atan2, Ceil, Cosh, Floor, Pow, RemF, Sinh, Tan
from lowering.ir.types import ElementType, TileType
from lowering.ir.verify import verify_module
from lowering.tileiras import Tileiras
from tests.lowering.view_kernels import start_view_kernel

DATA = TileType(ElementType.F32, (128,))


def build_math(atan2: bool = True) -> Module:
    k = start_view_kernel(DATA, DATA, DATA)
    x, y = k.load(0), k.load(1)
    v = x
    for op in (Tan, Sinh, Cosh, Ceil, Floor):
        v = k.b.emit(op, result=DATA, source=v).result
    v = k.b.emit(RemF, result=DATA, lhs=v, rhs=y).result
    v = k.b.emit(Pow, result=DATA, source=v, exponent=y).result
    if atan2:
        v = k.b.emit(Atan2, result=DATA, x=v, y=y).result
    k.store(2, v)
    return k.finish("math")


@pytest.mark.tileiras
def test_math_ops_disassemble_and_assemble(
    disassemble: Callable[[bytes], str], tileiras: Tileiras
) -> None:
    module = build_math()
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    for spelled in (
        "%1 = tan %tile : tile<128xf32>",
        "%2 = sinh %1",
        "%3 = cosh %2",
        "%4 = ceil %3",
        "%5 = floor %4",
        "%6 = remf %5, %tile_6",
        "%7 = fpowf %6, %tile_6",  # tileirdisasm 13.5 prints 13.3's `pow` (0x54) as fpowf
        "%8 = atan2 %7, %tile_6",
    ):
        assert spelled in text, spelled
    for sm in ("sm_80", "sm_90"):
        tileiras.assemble(write_bytecode(module), arch=sm)


@pytest.mark.tileiras
def test_atan2_needs_13_2(tileiras: Tileiras) -> None:
    with pytest.raises(BytecodeError, match=r"atan2: this op needs bytecode 13.2 or later"):
        write_bytecode(build_math(), (13, 1))
    tileiras.assemble(write_bytecode(build_math(atan2=False), (13, 1)), arch="sm_90")
    tileiras.assemble(write_bytecode(build_math(), (13, 2)), arch="sm_90")


@pytest.mark.parametrize("op_class", [Tan, Sinh, Cosh, Ceil, Floor])
def test_unary_ops_need_floats(op_class: type[Op]) -> None:
    b = Builder()
    x = b.value(TileType(ElementType.I32, (4,)))
    b.emit(op_class, result=x.type, source=x)
    b.emit(core.Return)
    errors = verify_module(Module((Function("k", (x,), b.finish((x,)), is_entry=False),)))
    assert errors == [f"@k: {op_class.NAME}: needs float operands, got tile<4xi32>"]


@pytest.mark.parametrize(
    ("op_class", "names"), [(RemF, ("lhs", "rhs")), (Pow, ("source", "exponent")), (Atan2, "xy")]
)
def test_binary_ops_need_one_float_type(op_class: type[Op], names: tuple[str, str]) -> None:
    b = Builder()
    x: Value = b.value(DATA)
    y: Value = b.value(TileType(ElementType.F16, (128,)))
    b.emit(op_class, result=DATA, **dict(zip(names, (x, y), strict=True)))
    b.emit(core.Return)
    errors = verify_module(Module((Function("k", (x, y), b.finish((x, y)), is_entry=False),)))
    assert errors == [f"@k: {op_class.NAME}: operand and result types differ"]
