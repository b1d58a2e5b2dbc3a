"""Shape ops: permute, cat, extract, iota and the view shape queries, read back by
tileirdisasm and assembled; their verifier rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from lowering.bytecode.writer import write_bytecode
from lowering.ir import ops_core as core
from lowering.ir import ops_memory as memory
from lowering.ir.core import Builder, Function, Module, Op, Value
from lowering.ir.ops_shape import Cat, Extract, GetTensorShape, Iota, Permute
from lowering.ir.printer import print_module
from lowering.ir.types import I32, ElementType, TensorViewType, TileType
from lowering.ir.verify import verify_module
from lowering.tileiras import Tileiras
from tests.lowering.view_kernels import start_view_kernel

F32 = ElementType.F32


def build_shapes() -> Module:
    """transpose, cat two halves, extract one back, iota and the shape queries."""
    k = start_view_kernel(TileType(F32, (64, 32)), TileType(F32, (32, 128)))
    x = k.load(0)
    t = k.b.emit(Permute, result=TileType(F32, (32, 64)), permutation=(1, 0), source=x).result
    both = k.b.emit(Cat, result=TileType(F32, (32, 128)), dim=1, lhs=t, rhs=t).result
    one = k.const(I32, 1)
    half = k.b.emit(Extract, result=TileType(F32, (32, 64)), source=both, indices=(k.zero, one))
    again = k.b.emit(Cat, result=TileType(F32, (32, 128)), dim=1, lhs=half.result, rhs=t).result
    k.b.emit(Iota, result=TileType(ElementType.I32, (128,)))
    k.b.emit(GetTensorShape, extents=(I32, I32), view=k.tensors[0])
    k.b.emit(memory.GetIndexSpaceShape, counts=(I32, I32), view=k.views[0])
    k.store(1, again)
    return k.finish("shapes")


@pytest.mark.tileiras
def test_shape_ops_disassemble_and_assemble(
    disassemble: Callable[[bytes], str], tileiras: Tileiras
) -> None:
    module = build_shapes()
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module))
    for spelled in (
        "%1 = permute %tile [1, 0] : tile<64x32xf32> -> tile<32x64xf32>",
        "%2 = cat %1, %1 dim = 1 : tile<32x64xf32>, tile<32x64xf32> -> tile<32x128xf32>",
        "%3 = extract %2[%cst_0_i32, %cst_1_i32] : tile<32x128xf32> -> tile<32x64xf32>",
        "%5 = iota : tile<128xi32>",
        "%6:2 = get_tensor_shape %tview : tensor_view<?x?xf32, strides=[?,1]> -> tile<i32>",
        "%7:2 = get_index_space_shape %pview : partition_view<tile=(64x32),",
    ):
        assert spelled in text, spelled
    for sm in ("sm_80", "sm_90"):
        tileiras.assemble(write_bytecode(module), arch=sm)


@pytest.mark.tileiras
@pytest.mark.parametrize("version", [(13, 1), (13, 4)])
def test_shape_ops_in_other_versions(version: tuple[int, int], tileiras: Tileiras) -> None:
    tileiras.assemble(write_bytecode(build_shapes(), version), arch="sm_90")


def test_printed_forms() -> None:
    text = print_module(build_shapes())
    assert "%21 = permute %19 {permutation = [1, 0]} : tile<32x64xf32>\n" in text
    assert "%22 = cat %21, %21 {dim = 1} : tile<32x128xf32>\n" in text
    assert "%24 = extract %22, indices[%18, %23] : tile<32x64xf32>\n" in text
    assert "%26 = iota : tile<128xi32>\n" in text
    assert "%27, %28 = get_tensor_shape %10 : tile<i32>, tile<i32>\n" in text


def _errors(op_class: type[Op], sources: tuple[Any, ...], **fields: Any) -> list[str]:
    """Errors of one op whose operands are constants (tiles) or parameters (views)."""
    b = Builder()
    params = tuple(b.value(t) for t in sources if isinstance(t, TensorViewType))
    values = iter(params)

    def make(t: Any) -> Value:
        if isinstance(t, TensorViewType):
            return next(values)
        return b.emit(core.Constant, result=t, values=(0,)).result

    made = {name: make(t) for name, t in fields.pop("operands").items()}
    if "indices" in fields:
        made["indices"] = tuple(make(t) for t in fields.pop("indices"))
    b.emit(op_class, **made, **fields)
    b.emit(core.Return)
    fn = Function("k", params, b.finish(params), is_entry=False)
    return [e.removeprefix(f"@k: {op_class.NAME}: ") for e in verify_module(Module((fn,)))]


def _t(*shape: int, element: ElementType = F32) -> TileType:
    return TileType(element, shape)


def test_permute_rules() -> None:
    def permute(perm: tuple[int, ...], src: TileType, dst: TileType) -> list[str]:
        return _errors(Permute, (), operands={"source": src}, permutation=perm, result=dst)

    assert permute((1, 0), _t(4, 8), _t(8, 4)) == []
    assert permute((2, 0, 1), _t(2, 4, 8), _t(8, 2, 4)) == []
    assert permute((0, 1), _t(4, 8), _t(8, 4)) == [
        "result must be tile<4x8xf32>, got tile<8x4xf32>"
    ]
    assert permute((1, 1), _t(4, 8), _t(8, 4)) == [
        "permutation [1, 1] is not a permutation of 0..1"
    ]
    assert permute((0,), _t(8), _t(8)) == ["needs rank 2 or more, got tile<8xf32>"]
    assert permute((1, 0), _t(4, 8), _t(8, 4, element=ElementType.F16)) == [
        "source and result element types differ: tile<4x8xf32> -> tile<8x4xf16>"
    ]


def test_cat_rules() -> None:
    def cat(dim: int, lhs: TileType, rhs: TileType, dst: TileType) -> list[str]:
        return _errors(Cat, (), operands={"lhs": lhs, "rhs": rhs}, dim=dim, result=dst)

    assert cat(0, _t(4, 8), _t(4, 8), _t(8, 8)) == []
    assert cat(1, _t(4, 8), _t(4, 8), _t(8, 8)) == [
        "result must be tile<4x16xf32>, got tile<8x8xf32>"
    ]
    assert cat(0, _t(4, 8), _t(4, 4), _t(8, 8)) == [
        "shapes differ outside dim 0: tile<4x8xf32>, tile<4x4xf32>"
    ]
    assert cat(2, _t(4, 8), _t(4, 8), _t(4, 8)) == ["dim 2 is out of range for rank 2"]


def test_extract_rules() -> None:
    def extract(src: TileType, dst: TileType, indices: tuple[TileType, ...]) -> list[str]:
        return _errors(Extract, (), operands={"source": src}, indices=indices, result=dst)

    i32 = I32
    assert extract(_t(32, 8), _t(4, 2), (i32, i32)) == []
    assert extract(_t(32, 8), _t(4, 4, 2), (i32, i32)) == [
        "source and result ranks differ: tile<32x8xf32> -> tile<4x4x2xf32>"
    ]
    assert extract(_t(32, 8), _t(64, 2), (i32, i32)) == [
        "result shape must divide the source shape: tile<32x8xf32> -> tile<64x2xf32>"
    ]
    assert extract(_t(32, 8), _t(4, 2), (i32,)) == ["expected 2 indices, got 1"]
    assert extract(_t(32, 8), _t(4, 2), (i32, _t(2, element=ElementType.I32))) == [
        "indices must be tile<i32>"
    ]


def test_iota_rules() -> None:
    def iota(ty: TileType) -> list[str]:
        return _errors(Iota, (), operands={}, result=ty)

    assert iota(_t(128, element=ElementType.I32)) == []
    assert iota(_t(128)) == ["result must be a rank-1 integer tile, got tile<128xf32>"]
    assert iota(_t(4, 4, element=ElementType.I32)) == [
        "result must be a rank-1 integer tile, got tile<4x4xi32>"
    ]
    assert iota(_t(512, element=ElementType.I8)) == ["512 elements do not fit i8"]


def test_get_tensor_shape_rules() -> None:
    view = TensorViewType(F32, (None, None), (None, 1))

    def query(*extents: TileType) -> list[str]:
        return _errors(GetTensorShape, (view,), operands={"view": view}, extents=extents)

    assert query(I32, I32) == []
    assert query(TileType(ElementType.I64), TileType(ElementType.I64)) == []
    assert query(I32) == ["expected 2 results, got 1"]
    assert query(I32, TileType(ElementType.I64)) == [
        "results must be rank-0 integer tiles of one type"
    ]
    assert query(TileType(F32), TileType(F32)) == [
        "results must be rank-0 integer tiles of one type"
    ]
