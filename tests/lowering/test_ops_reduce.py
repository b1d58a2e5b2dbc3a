"""`reduce` and `scan`: real row reductions and prefix sums read back by tileirdisasm and
assembled by tileiras; identity encoding; the verifier's rules for the op and its region."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from lowering.bytecode import attrs
from lowering.bytecode.encoding import svarint, uvarint
from lowering.bytecode.tables import BytecodeError, ModuleTables
from lowering.bytecode.writer import SUPPORTED_VERSIONS, write_bytecode
from lowering.cubin_info import function_symbols
from lowering.ir import ops_arith as arith
from lowering.ir import ops_compare as compare
from lowering.ir import ops_control as control
from lowering.ir import ops_core as core
from lowering.ir import ops_debug as debug
from lowering.ir import ops_math as mathops
from lowering.ir import ops_shape as shape
from lowering.ir.attributes import ComparisonPredicate, FloatAttr, IntegerAttr
from lowering.ir.core import Builder, Function, Module, Region, Value
from lowering.ir.ops_reduce import Reduce, Scan, identity_for
from lowering.ir.printer import print_module
from lowering.ir.types import I32, TOKEN, ElementType, TileType
from lowering.ir.verify import verify_module
from lowering.tileiras import Tileiras
from tests.lowering.view_kernels import start_view_kernel

F32 = ElementType.F32
ROWS = TileType(F32, (4, 128))


def build_row_reduce(kind: str = "sum", element: ElementType = F32) -> Module:
    """out[4] = reduce over dim 1 of a [4, 128] tile (sum: addf/addi, max: maxf/maxi)."""
    k = start_view_kernel(TileType(element, (4, 128)), TileType(element, (4,)))
    x = k.load(0)
    ops = {
        ("sum", True): arith.AddF,
        ("sum", False): arith.AddI,
        ("max", True): mathops.MaxF,
        ("max", False): mathops.MaxI,
    }
    body = k.combiner(ops[kind, element.is_float], element)
    red = k.b.emit(
        Reduce,
        outputs=(TileType(element, (4,)),),
        dim=1,
        identities=(identity_for(kind, element),),
        inputs=(x,),
        body=body,
    )
    k.store(1, red.outputs[0])
    return k.finish(f"row_{kind}")


def build_argmax() -> Module:
    """Two inputs reduced together: the max of 128 values and its index (from iota)."""
    k = start_view_kernel(TileType(F32, (128,)), TileType(ElementType.I32, (1,)))
    values = k.load(0)
    index = k.b.emit(shape.Iota, result=TileType(ElementType.I32, (128,))).result
    f32, i32 = TileType(F32), I32

    def body(args: tuple[Value, ...]) -> None:
        lhs, rhs, lhs_at, rhs_at = args  # pairs per input: (lhs_0, rhs_0, lhs_1, rhs_1)
        bigger = k.b.emit(
            compare.CmpF,
            result=TileType(ElementType.I1),
            predicate=ComparisonPredicate.GT,
            lhs=lhs,
            rhs=rhs,
        ).result
        top = k.b.emit(compare.Select, result=f32, condition=bigger, if_true=lhs, if_false=rhs)
        pos = k.b.emit(
            compare.Select, result=i32, condition=bigger, if_true=lhs_at, if_false=rhs_at
        )
        k.b.emit(control.Yield, values=(top.result, pos.result))

    red = k.b.emit(
        Reduce,
        outputs=(f32, i32),
        dim=0,
        identities=(identity_for("max", F32), IntegerAttr(-1, ElementType.I32)),
        inputs=(values, index),
        body=k.b.region([f32, f32, i32, i32], body),
    )
    where = k.b.emit(core.Reshape, result=TileType(ElementType.I32, (1,)), source=red.outputs[1])
    k.store(1, where.result)
    return k.finish("argmax")


def build_prefix_sum(reverse: bool = False) -> Module:
    k = start_view_kernel(ROWS, ROWS)
    x = k.load(0)
    scan = k.b.emit(
        Scan,
        outputs=(ROWS,),
        dim=1,
        reverse=reverse,
        identities=(identity_for("sum", F32),),
        inputs=(x,),
        body=k.combiner(arith.AddF, F32),
    )
    k.store(1, scan.outputs[0])
    return k.finish("cumsum")


# -- tileirdisasm and tileiras -----------------------------------------------------------


@pytest.mark.tileiras
def test_row_sum(disassemble: Callable[[bytes], str], tileiras: Tileiras) -> None:
    module = build_row_reduce("sum")
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    assert (
        "%reduce = reduce %tile dim=1 identities=[0.000000e+00 : f32]"
        " : tile<4x128xf32> -> tile<4xf32>"
    ) in text
    assert "(%reduce_lhs: tile<f32>, %reduce_rhs: tile<f32>) {" in text
    assert "addf %reduce_lhs, %reduce_rhs" in text and "yield %2 : tile<f32>" in text
    assert "store_view_tko weak %reduce," in text  # numbered after its region
    assert "row_sum" in function_symbols(tileiras.assemble(write_bytecode(module), arch="sm_90"))


@pytest.mark.tileiras
def test_row_max(disassemble: Callable[[bytes], str], tileiras: Tileiras) -> None:
    module = build_row_reduce("max")
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    assert "reduce %tile dim=1 identities=[0xFF800000 : f32]" in text  # -inf
    assert "maxf %reduce_lhs, %reduce_rhs" in text
    assert "row_max" in function_symbols(tileiras.assemble(write_bytecode(module), arch="sm_90"))


@pytest.mark.tileiras
def test_two_input_reduce(disassemble: Callable[[bytes], str], tileiras: Tileiras) -> None:
    module = build_argmax()
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    assert (
        "%reduce:2 = reduce %tile, %1 dim=0 identities=[0xFF800000 : f32, -1 : i32]"
        " : tile<128xf32>, tile<128xi32> -> tile<f32>, tile<i32>"
    ) in text
    assert (
        "(%reduce_lhs0: tile<f32>, %reduce_rhs0: tile<f32>,"
        " %reduce_lhs1: tile<i32>, %reduce_rhs1: tile<i32>)"
    ) in text
    assert "reshape %reduce#1" in text
    assert "argmax" in function_symbols(tileiras.assemble(write_bytecode(module), arch="sm_90"))


@pytest.mark.tileiras
@pytest.mark.parametrize("reverse", [False, True])
def test_prefix_sum(reverse: bool, disassemble: Callable[[bytes], str], tileiras: Tileiras) -> None:
    module = build_prefix_sum(reverse)
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    flag = "true" if reverse else "false"
    assert (
        f"scan %tile dim=1 reverse={flag} identities=[0.000000e+00 : f32]"
        " : tile<4x128xf32> -> tile<4x128xf32>"
    ) in text
    assert "cumsum" in function_symbols(tileiras.assemble(write_bytecode(module), arch="sm_90"))


@pytest.mark.tileiras
@pytest.mark.parametrize(
    ("element", "spelled"),
    [
        (ElementType.F16, "0xFC00 : f16"),
        (ElementType.BF16, "0xFF80 : bf16"),
        (ElementType.F64, "0xFFF0000000000000 : f64"),
        (ElementType.I8, "-128 : i8"),
        (ElementType.I16, "-32768 : i16"),
        (ElementType.I64, "-9223372036854775808"),
    ],
)
def test_max_identity_of_each_type(
    element: ElementType,
    spelled: str,
    disassemble: Callable[[bytes], str],
    tileiras: Tileiras,
) -> None:
    module = build_row_reduce("max", element)
    assert verify_module(module) == []
    assert f"identities=[{spelled}]" in disassemble(write_bytecode(module))
    tileiras.assemble(write_bytecode(module), arch="sm_90")


@pytest.mark.tileiras
@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_reductions_assemble_in_every_version(version: tuple[int, int], tileiras: Tileiras) -> None:
    for module in (build_row_reduce("sum"), build_prefix_sum()):
        tileiras.assemble(write_bytecode(module, version), arch="sm_90")


# -- identities ---------------------------------------------------------------------------


def test_identity_for() -> None:
    assert identity_for("sum", F32) == FloatAttr(0.0, F32)
    assert identity_for("prod", ElementType.F16) == FloatAttr(1.0, ElementType.F16)
    assert identity_for("max", F32) == FloatAttr(-math.inf, F32)
    assert identity_for("min", ElementType.F64) == FloatAttr(math.inf, ElementType.F64)
    assert identity_for("max", ElementType.I32) == IntegerAttr(-(2**31), ElementType.I32)
    assert identity_for("min", ElementType.I8) == IntegerAttr(127, ElementType.I8)
    assert identity_for("max", ElementType.I8, signed=False) == IntegerAttr(0, ElementType.I8)
    assert identity_for("min", ElementType.I16, signed=False) == IntegerAttr(
        0xFFFF, ElementType.I16
    )


def test_identity_bytes() -> None:
    tables = ModuleTables((13, 3))
    f32, f64, i32 = (tables.type(t) for t in (F32, ElementType.F64, ElementType.I32))
    assert attrs.typed(tables, FloatAttr(-math.inf, F32)) == b"\x02" + uvarint(f32) + svarint(
        0xFF800000
    )
    # f64 bits with the top bit set are zigzagged as a negative 64-bit number
    assert attrs.typed(tables, FloatAttr(-math.inf, ElementType.F64)) == (
        b"\x02" + uvarint(f64) + svarint(0xFFF0000000000000 - (1 << 64))
    )
    assert attrs.typed(tables, IntegerAttr(-1, ElementType.I32)) == (
        b"\x01" + uvarint(i32) + uvarint(0xFFFFFFFF)
    )
    with pytest.raises(BytecodeError, match="does not fit i8"):
        attrs.typed(tables, IntegerAttr(300, ElementType.I8))


# -- printer --------------------------------------------------------------------------------


def test_printed_forms() -> None:
    text = print_module(build_row_reduce("sum"))
    assert "= reduce %17 {dim = 1, identities = [0.0 : f32]} : tile<4xf32>\n" in text
    assert "    body {\n    ^bb0(%19: tile<f32>, %20: tile<f32>):\n" in text
    scan = print_module(build_prefix_sum(reverse=True))
    assert "{dim = 1, reverse = true, identities = [0.0 : f32]} : tile<4x128xf32>" in scan


# -- verifier -------------------------------------------------------------------------------


def _reduce_errors(
    op_class: type[Reduce] | type[Scan] = Reduce,
    inputs: tuple[TileType, ...] = (ROWS,),
    body: Callable[[Builder, tuple[Value, ...]], None] | None = None,
    body_types: tuple[TileType, ...] | None = None,
    **fields: Any,
) -> list[str]:
    """Errors of a module holding one reduce/scan over constants, with fields overridden."""
    b = Builder()
    sources = tuple(b.emit(core.Constant, result=t, values=(0.0,)).result for t in inputs)
    scalars = tuple(TileType(t.element) for t in inputs)
    types = body_types or tuple(s for s in scalars for _ in (0, 1))

    def default_body(b: Builder, args: tuple[Value, ...]) -> None:
        b.emit(control.Yield, values=args[0::2])

    fill = body or default_body
    region: Region = b.region(types, lambda args: fill(b, args))
    outputs = tuple(TileType(t.element, t.shape[1:]) for t in inputs)
    if op_class is Scan:
        outputs = inputs
    op_fields: dict[str, Any] = {
        "outputs": fields.pop("outputs", outputs),
        "dim": 0,
        "identities": tuple(FloatAttr(0.0, F32) for _ in inputs),
        "inputs": sources,
        "body": region,
        **fields,
    }
    b.emit(op_class, **op_fields)
    b.emit(core.Return)
    return verify_module(Module((Function("k", (), b.finish(())),)))


def test_valid_reduce_and_scan() -> None:
    assert _reduce_errors() == []
    assert _reduce_errors(Scan) == []


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"dim": 2}, "dim 2 is out of range for rank 2"),
        ({"outputs": (ROWS,)}, "result 0 must be tile<128xf32>, got tile<4x128xf32>"),
        ({"identities": (IntegerAttr(0, ElementType.I32),)}, "identity 0 must be a FloatAttr"),
        ({"identities": (FloatAttr(0.0, ElementType.F16),)}, "of type f32"),
        ({"identities": ()}, "needs 1 identities, got 0"),
        ({"body_types": (TileType(F32),)}, "body needs 2 arguments (two per input)"),
        ({"body_types": (TileType(F32, (4,)),) * 2}, "body arguments 0 and 1 must be tile<f32>"),
        ({"inputs": ()}, "needs at least one input tile"),
        ({"inputs": (ROWS, TileType(F32, (4, 64)))}, "all input tiles must have the same shape"),
        ({"inputs": (TileType(F32),)}, "inputs must have rank 1 or more"),
    ],
)
def test_reduce_rejections(fields: dict[str, Any], message: str) -> None:
    errors = _reduce_errors(**fields)
    assert any(message in e for e in errors), errors


def test_yield_must_carry_one_scalar_per_input() -> None:
    def yield_i32(b: Builder, args: tuple[Value, ...]) -> None:
        b.emit(control.Yield, values=(b.emit(core.Constant, result=I32, values=(0,)).result,))

    errors = _reduce_errors(body=yield_i32)
    assert errors == ["@k: yield: carries (tile<i32>) but reduce expects (tile<f32>)"]


def test_body_must_end_with_yield() -> None:
    def no_yield(b: Builder, args: tuple[Value, ...]) -> None:
        b.emit(control.Continue, values=args[:1])

    assert "@k: reduce: region must end with yield" in _reduce_errors(body=no_yield)


def test_body_holds_only_pure_ops() -> None:
    def prints(b: Builder, args: tuple[Value, ...]) -> None:
        b.emit(debug.PrintTko, result_token=TOKEN, format="%f", args=args[:1])
        b.emit(control.Yield, values=args[:1])

    assert _reduce_errors(body=prints) == ["@k: print_tko: only pure ops are allowed inside reduce"]


def test_scan_rules() -> None:
    two = _reduce_errors(
        Scan,
        inputs=(ROWS, ROWS),
        identities=(FloatAttr(0.0, F32),) * 2,
        outputs=(ROWS, ROWS),
    )
    assert two == []  # the docs say one input; tileiras 13.5 runs two correctly
    shrunk = _reduce_errors(Scan, outputs=(TileType(F32, (128,)),))
    assert shrunk == ["@k: scan: result 0 must be tile<4x128xf32>, got tile<128xf32>"]


@pytest.mark.tileiras
def test_two_input_scan(disassemble: Callable[[bytes], str], tileiras: Tileiras) -> None:
    """Running sum and running max of one tile in a single scan."""
    k = start_view_kernel(ROWS, ROWS, ROWS)
    x = k.load(0)
    scalar = TileType(F32)

    def body(args: tuple[Value, ...]) -> None:
        total = k.b.emit(arith.AddF, result=scalar, lhs=args[0], rhs=args[1]).result
        top = k.b.emit(mathops.MaxF, result=scalar, lhs=args[2], rhs=args[3]).result
        k.b.emit(control.Yield, values=(total, top))

    scan = k.b.emit(
        Scan,
        outputs=(ROWS, ROWS),
        dim=1,
        identities=(identity_for("sum", F32), identity_for("max", F32)),
        inputs=(x, x),
        body=k.b.region([scalar] * 4, body),
    )
    k.store(1, scan.outputs[0])
    k.store(2, scan.outputs[1])
    module = k.finish("sum_and_max")
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    assert (
        "scan %tile, %tile dim=1 reverse=false identities=[0.000000e+00 : f32, 0xFF800000" in text
    )
    tileiras.assemble(write_bytecode(module), arch="sm_90")


def test_integer_reduce_needs_integer_identities() -> None:
    ints = TileType(ElementType.I32, (4, 128))
    errors = _reduce_errors(inputs=(ints,), identities=(FloatAttr(0.0, F32),))
    assert errors == ["@k: reduce: identity 0 must be a IntegerAttr of type i32"]
    ok = _reduce_errors(
        inputs=(ints,), identities=(identity_for("max", ElementType.I32, signed=False),)
    )
    assert ok == []
