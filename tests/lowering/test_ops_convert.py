"""Verifier rules of the conversion ops that carry low-precision types: `ftof` to the scale
type, and the byte (re)packing `pack` / `unpack` (encoders: 13.3 only)."""

from __future__ import annotations

import pytest

from lowering.bytecode.tables import BytecodeError
from lowering.bytecode.writer import write_bytecode
from lowering.ir import ops_core as core
from lowering.ir.attributes import RoundingMode
from lowering.ir.core import Builder, Function, Module, Op
from lowering.ir.ops_convert import FToF, Pack, Unpack
from lowering.ir.types import ElementType, TileType
from lowering.ir.verify import verify_module

E = ElementType


def _module(op_class: type[Op], source: TileType, result: TileType, **fields: object) -> Module:
    b = Builder()
    zero = 0.0 if isinstance(source.element, E) and source.element.is_float else 0
    value = b.emit(core.Constant, result=source, values=(zero,)).result
    b.emit(op_class, result=result, source=value, **fields)
    b.emit(core.Return)
    return Module((Function("k", (), b.finish(())),))


def _errors(op_class: type[Op], source: TileType, result: TileType, **fields: object) -> list:
    module = _module(op_class, source, result, **fields)
    return [e.removeprefix(f"@k: {op_class.NAME}: ") for e in verify_module(module)]


@pytest.mark.parametrize(
    ("rounding", "ok"),
    [
        (RoundingMode.ZERO, True),
        (RoundingMode.POSITIVE_INF, True),
        (RoundingMode.NEAREST_EVEN, False),
        (RoundingMode.NEGATIVE_INF, False),
    ],
)
def test_ftof_to_the_scale_type_rounds_down_or_up(rounding: RoundingMode, ok: bool) -> None:
    errors = _errors(FToF, TileType(E.F32, (8,)), TileType(E.F8E8M0FNU, (8,)), rounding=rounding)
    assert errors == (
        []
        if ok
        else [f"ftof to f8E8M0FNU rounds zero or positive_inf, not {rounding.name.lower()}"]
    )


def test_ftof_to_fp8_rounds_to_nearest_even() -> None:
    assert _errors(FToF, TileType(E.F32, (8,)), TileType(E.F8E4M3FN, (8,))) == []
    errors = _errors(
        FToF, TileType(E.F32, (8,)), TileType(E.F8E5M2, (8,)), rounding=RoundingMode.ZERO
    )
    assert errors == ["ftof to f8E5M2 rounds nearest_even, not zero"]


@pytest.mark.parametrize(
    ("op_class", "source", "result", "message"),
    [
        (Pack, TileType(E.F4E2M1FN, (64,)), TileType(E.I8, (32,)), None),
        (Pack, TileType(E.I32, (16,)), TileType(E.I8, (64,)), None),
        (Unpack, TileType(E.I8, (64,)), TileType(E.I4, (128,)), None),
        (Unpack, TileType(E.I8, (64,)), TileType(E.F16, (32,)), None),
        (Pack, TileType(E.I32, (4, 4)), TileType(E.I8, (64,)), "needs rank-1 tiles"),
        (Pack, TileType(E.I32, (16,)), TileType(E.I16, (32,)), "must be i8 bytes"),
        (Pack, TileType(E.F8E4M3FN, (16,)), TileType(E.I8, (16,)), "is a bitcast"),
        (Pack, TileType(E.I32, (16,)), TileType(E.I8, (32,)), "keeps the number of bits"),
        (Unpack, TileType(E.I16, (16,)), TileType(E.I4, (64,)), "source of unpack must be i8"),
    ],
)
def test_pack_and_unpack_rules(op_class, source, result, message) -> None:
    errors = _errors(op_class, source, result)
    if message is None:
        assert errors == []
        assert write_bytecode(_module(op_class, source, result), (13, 3))
        with pytest.raises(BytecodeError, match=r"needs bytecode 13\.3"):
            write_bytecode(_module(op_class, source, result), (13, 2))
    else:
        assert any(message in e for e in errors), errors
