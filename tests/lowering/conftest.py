"""Fixtures for the lowering tests: small kernels built with our IR and Builder.

Every kernel takes three 1-D f32 tensors (ptr, len, stride each, as cuTile's ABI does)
and works on 1024-element tiles. Tests import nothing from here; they use the fixtures.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from lowering.ir import ops_arith as arith
from lowering.ir import ops_compare as compare
from lowering.ir import ops_control as control
from lowering.ir import ops_convert as convert
from lowering.ir import ops_core as core
from lowering.ir import ops_math as mathops
from lowering.ir import ops_memory as memory
from lowering.ir.attributes import Bounded, ComparisonPredicate, DivBy, EntryHints, RoundingMode
from lowering.ir.core import Builder, Function, Module, Region, Value
from lowering.ir.types import (
    I1,
    I32,
    TOKEN,
    ElementType,
    PartitionViewType,
    PointerType,
    TensorViewType,
    TileType,
)
from lowering.tileiras import Tileiras

TILE = 1024
F32 = ElementType.F32
PTR_F32 = TileType(PointerType(F32))
DATA = TileType(F32, (TILE,))
TENSOR_VIEW = TensorViewType(F32, (None,), (1,))
PARTITION = PartitionViewType((TILE,), TENSOR_VIEW, (0,))


@dataclass(frozen=True)
class Kernel:
    """A function under construction: its builder, params, token, views and block id."""

    b: Builder
    params: tuple[Value, ...]
    token: Value
    views: tuple[Value, ...]
    block: Value

    def load(self, k: int, index: Value) -> Value:
        op = self.b.emit(
            memory.LoadViewTko,
            tile=DATA,
            result_token=TOKEN,
            view=self.views[k],
            index=(index,),
            token=self.token,
        )
        return op.tile

    def store(self, k: int, tile: Value, index: Value) -> None:
        self.b.emit(
            memory.StoreViewTko,
            result_token=TOKEN,
            tile=tile,
            view=self.views[k],
            index=(index,),
            token=self.token,
        )

    def const(self, ty: TileType, value: float | int) -> Value:
        return self.b.emit(core.Constant, result=ty, values=(value,)).result

    def finish(self, name: str, hints: tuple[EntryHints, ...] = ()) -> Module:
        self.b.emit(core.Return)
        return Module((Function(name, self.params, self.b.finish(self.params), hints=hints),))


def start_kernel() -> Kernel:
    """Parameters, token, assumptions, tensor and partition views, block id."""
    b = Builder()
    params = tuple(b.value(t) for t in (PTR_F32, I32, I32) * 3)
    token = b.emit(core.MakeToken, result=TOKEN).result
    views = []
    for k in range(3):
        base = b.emit(core.Assume, result=PTR_F32, predicate=DivBy(16), value=params[3 * k])
        length = b.emit(core.Assume, result=I32, predicate=Bounded(0), value=params[3 * k + 1])
        view = b.emit(
            memory.MakeTensorView,
            result=TENSOR_VIEW,
            base=base.result,
            dynamic_shape=(length.result,),
        )
        views.append(view.result)
    block = b.emit(core.GetTileBlockId, x=I32, y=I32, z=I32).x
    parts = tuple(
        b.emit(memory.MakePartitionView, result=PARTITION, tensor_view=v).result for v in views
    )
    return Kernel(b, params, token, parts, block)


def build_vadd(name: str = "vadd_ir") -> Module:
    k = start_kernel()
    total = k.b.emit(arith.AddF, result=DATA, lhs=k.load(0, k.block), rhs=k.load(1, k.block))
    k.store(2, total.result, k.block)
    return k.finish(name)


def build_for_loop(name: str = "sum_tiles", iters: int = 4) -> Module:
    """c[bid] = sum of a[bid*iters + i] for i < iters: a loop-carried accumulator."""
    k = start_kernel()
    lower, step, count = (k.const(I32, v) for v in (0, 1, iters))
    base = k.b.emit(arith.MulI, result=I32, lhs=k.block, rhs=count).result
    zero = k.const(DATA, 0.0)

    def body(args: tuple[Value, ...]) -> None:
        iv, acc = args
        index = k.b.emit(arith.AddI, result=I32, lhs=base, rhs=iv).result
        total = k.b.emit(arith.AddF, result=DATA, lhs=acc, rhs=k.load(0, index)).result
        k.b.emit(control.Continue, values=(total,))

    region = k.b.region([I32, DATA], body)
    loop = k.b.emit(
        control.For,
        outputs=(DATA,),
        lower=lower,
        upper=count,
        step=step,
        init_values=(zero,),
        body=region,
    )
    k.store(2, loop.outputs[0], k.block)
    return k.finish(name)


def build_if_else(name: str = "neg_odd") -> Module:
    """c = a on block 0, -a elsewhere: an if/else yielding a value."""
    k = start_kernel()
    a = k.load(0, k.block)
    one = k.const(I32, 1)
    cond = k.b.emit(
        compare.CmpI, result=I1, predicate=ComparisonPredicate.LT, lhs=k.block, rhs=one
    ).result
    then = k.b.region([], lambda _: k.b.emit(control.Yield, values=(a,)))

    def otherwise(_: tuple[Value, ...]) -> None:
        negated = k.b.emit(mathops.NegF, result=DATA, source=a).result
        k.b.emit(control.Yield, values=(negated,))

    branch = k.b.emit(
        control.If,
        outputs=(DATA,),
        condition=cond,
        then_region=then,
        else_region=k.b.region([], otherwise),
    )
    k.store(2, branch.outputs[0], k.block)
    return k.finish(name)


def build_loop_break(name: str = "count_up", limit: int = 4) -> Module:
    """`loop` counting to `limit` with `break` inside an else-less `if`."""
    k = start_kernel()
    zero, one, stop = (k.const(I32, v) for v in (0, 1, limit))

    def body(args: tuple[Value, ...]) -> None:
        (count,) = args
        done = k.b.emit(
            compare.CmpI, result=I1, predicate=ComparisonPredicate.GE, lhs=count, rhs=stop
        ).result
        leave = k.b.region([], lambda _: k.b.emit(control.Break, values=(count,)))
        k.b.emit(control.If, outputs=(), condition=done, then_region=leave, else_region=Region(()))
        nxt = k.b.emit(arith.AddI, result=I32, lhs=count, rhs=one).result
        k.b.emit(control.Continue, values=(nxt,))

    loop = k.b.emit(control.Loop, outputs=(I32,), init_values=(zero,), body=k.b.region([I32], body))
    index = k.b.emit(arith.AddI, result=I32, lhs=k.block, rhs=loop.outputs[0]).result
    k.store(2, k.load(0, index), k.block)
    return k.finish(name)


def build_all_ops(name: str = "all_ops") -> Module:
    """One use of every math, comparison and conversion op, all feeding the store."""
    k = start_kernel()
    x, y = k.load(0, k.block), k.load(1, k.block)
    f = _float_chain(k, x, y)
    i = _int_chain(k, f)
    k.store(2, i, k.block)
    return k.finish(name, hints=(EntryHints("sm_90", num_cta_in_cga=1),))


def _float_chain(k: Kernel, x: Value, y: Value) -> Value:
    def un(op: type, src: Value, **kw: object) -> Value:
        return k.b.emit(op, result=DATA, source=src, **kw).result

    def bin_(op: type, lhs: Value, rhs: Value, **kw: object) -> Value:
        return k.b.emit(op, result=DATA, lhs=lhs, rhs=rhs, **kw).result

    a = un(mathops.AbsF, un(mathops.NegF, x))
    e = un(mathops.Exp, a, rounding=RoundingMode.APPROX)
    logs = bin_(arith.AddF, un(mathops.Log, e), un(mathops.Log2, un(mathops.Exp2, a)))
    roots = bin_(arith.MulF, un(mathops.Sqrt, a), un(mathops.Rsqrt, e))
    trig = bin_(mathops.MaxF, un(mathops.Sin, x), un(mathops.Cos, y), propagate_nan=True)
    low = bin_(mathops.MinF, un(mathops.Tanh, x), logs)
    fused = k.b.emit(mathops.Fma, result=DATA, lhs=trig, rhs=low, acc=roots).result
    ratio = bin_(arith.DivF, bin_(arith.SubF, fused, y), y)
    mask = TileType(ElementType.I1, (TILE,))
    less = k.b.emit(
        compare.CmpF, result=mask, predicate=ComparisonPredicate.LT, lhs=ratio, rhs=y
    ).result
    chosen = k.b.emit(compare.Select, result=DATA, condition=less, if_true=ratio, if_false=y)
    half = k.b.emit(convert.FToF, result=TileType(ElementType.F16, (TILE,)), source=chosen.result)
    return k.b.emit(convert.FToF, result=DATA, source=half.result).result


def _int_chain(k: Kernel, f: Value) -> Value:
    ints = TileType(ElementType.I32, (TILE,))
    wide = TileType(ElementType.I64, (TILE,))
    i = k.b.emit(convert.FToI, result=ints, source=f).result
    n = k.b.emit(mathops.NegI, result=ints, source=i).result
    hi = k.b.emit(mathops.MaxI, result=ints, lhs=i, rhs=n).result
    lo = k.b.emit(mathops.MinI, result=ints, lhs=hi, rhs=i).result
    w = k.b.emit(convert.ExtI, result=wide, source=lo).result
    t = k.b.emit(convert.TruncI, result=ints, source=w).result
    back = k.b.emit(convert.IToF, result=DATA, source=t).result
    bits = k.b.emit(convert.Bitcast, result=DATA, source=t).result
    return k.b.emit(arith.AddF, result=DATA, lhs=back, rhs=bits).result


KERNELS: dict[str, Callable[[], Module]] = {
    "vadd": build_vadd,
    "for_loop": build_for_loop,
    "if_else": build_if_else,
    "loop_break": build_loop_break,
    "all_ops": build_all_ops,
}


@pytest.fixture
def vadd_module() -> Module:
    return build_vadd()


@pytest.fixture
def for_module() -> Module:
    return build_for_loop()


@pytest.fixture
def if_module() -> Module:
    return build_if_else()


@pytest.fixture
def all_ops_module() -> Module:
    return build_all_ops()


@pytest.fixture(params=sorted(KERNELS))
def any_kernel(request: pytest.FixtureRequest) -> tuple[str, Module]:
    """Each sample kernel in turn, as (name, module)."""
    return request.param, KERNELS[request.param]()


@pytest.fixture(scope="session")
def tileirdisasm(tileiras: Tileiras) -> str:
    """The tileirdisasm next to tileiras (skips when it is missing)."""
    path = os.path.join(os.path.dirname(tileiras.path), "tileirdisasm")
    if not os.access(path, os.X_OK):
        pytest.skip("tileirdisasm not installed next to tileiras")
    return path


@pytest.fixture
def disassemble(tileirdisasm: str, tmp_path: Path) -> Callable[[bytes], str]:
    """bytecode -> tileirdisasm's text (fails the test when tileirdisasm rejects it)."""

    def run(bytecode: bytes) -> str:
        path = tmp_path / "module.tileirbc"
        path.write_bytes(bytecode)
        done = subprocess.run([tileirdisasm, str(path)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    return run
