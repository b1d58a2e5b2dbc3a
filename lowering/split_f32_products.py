"""Multiply f32 tiles on the tensor cores: every `mmaf` of f32 operands becomes three TF32
`mmaf`s summed in f32 (one pass over the tile IR).

tileiras 13.5 compiles an f32 x f32 `mmaf` to scalar FFMA: cutile-rs's `gemm.rs`, whose host
code launches it on f32, ran at 0.06x torch's f32 matmul (6.1 TFLOP/s at 64x64x32 tiles and
4096^3 on an H100, against cuBLAS's 50), its cubin at 255 registers a thread with over a
hundred spill instructions. TF32 operands take the tensor cores (`HGMMA.64x128x8.F32.TF32`)
but keep 11 of f32's 24 significant bits. So each f32 operand `x` is split into a TF32 head
and a TF32 tail, `hi = tf32(x)` and `lo = tf32(x - f32(hi))` (the subtraction is exact), and
`a @ b + acc` becomes

    acc + (a.lo @ b.hi + a.hi @ b.lo + a.hi @ b.hi)

the three products (small terms first) summed on the tensor cores from zero, their sum added
to `acc` by an f32 `addf`. That drops only `a.lo @ b.lo` and the tail's rounding (each product
within about 2^-21 of the exact one, against f32's 2^-24), and it keeps the tensor cores'
accumulation, which does not round to nearest, to one k-tile: chained into `acc` across a
4096-long k-loop it cost 2.8e-5 of relative error (61 TFLOP/s), summed per k-tile 5.0e-7,
as exact FFMA's 4.7e-7 and better than cuBLAS f32's 2.4e-6, at 52.8 TFLOP/s (1.06x cuBLAS; H100,
128x128x32 tiles, 2026-12-05, BENCHMARKS.md). Where the two differ: an operand within 2^-11
of f32::MAX rounds to infinity in its head, and an infinite or NaN operand makes its tail NaN,
so such products are NaN where FFMA gives an infinity. `CompileRequest.exact_f32_products`
turns the pass off.

Only products tileiras puts on the tensor cores are split (elsewhere the three products
would triple FFMA work): of the TF32 products compiled (K = 8 and 16, `cuobjdump -sass`),
M >= 64 with N >= 8 became `HGMMA` (64x8, 64x16, 128x8, 256x8 and up) and M, N >= 16 with at
least 512 outputs `HMMA` (16x32, 32x16, 16x64, 32x32 and up), while 16x16, 32x8, 8x64, 8x128,
128x4, 64x4, 256x2, 2x256 and 512x1 stayed on FFMA (`on_tensor_cores`).

An operand split once is reused by later products of the same block and the blocks nested
after it (a loop's body splits its tiles once per iteration); a product whose accumulator is
a zero constant starts from it and needs no `addf`.
"""

from __future__ import annotations

from lowering.ir.core import Block, FreshIds, Module, Op, Value, map_bodies, map_regions
from lowering.ir.ops_arith import AddF, SubF
from lowering.ir.ops_convert import FToF
from lowering.ir.ops_core import Constant
from lowering.ir.ops_matmul import MmaF
from lowering.ir.types import ElementType, TileType

F32, TF32 = ElementType.F32, ElementType.TF32


def split_f32_products(module: Module) -> Module:
    """`module` with every f32 x f32 `mmaf` the tensor cores take computed as three TF32
    products."""
    return map_bodies(module, lambda body, ids: _block(body, ids, None))


Split = tuple[Value, Value]  # (hi, lo), both TF32


class _Scope:
    """What the ops before a point (and around its block) define: operands already split and
    zero constants, by id."""

    def __init__(self, outer: _Scope | None = None) -> None:
        self.splits: dict[int, Split] = dict(outer.splits) if outer else {}
        self.zeros: set[int] = set(outer.zeros) if outer else set()


def _block(block: Block, ids: FreshIds, outer: _Scope | None) -> Block:
    """`block` rewritten, in the scope of the ops that dominate it."""
    scope = _Scope(outer)
    ops: list[Op] = []
    changed = False
    for op in block.ops:
        if op.regions:
            rewritten = map_regions(op, lambda inner: _block(inner, ids, scope))
            changed = changed or rewritten is not op
            ops.append(rewritten)
        elif _is_f32_product(op):
            assert isinstance(op, MmaF)
            ops.extend(_three_products(op, ids, scope, ops))
            changed = True
        else:
            if isinstance(op, Constant) and all(v == 0 for v in op.values):
                scope.zeros.add(op.result.id)
            ops.append(op)
    return Block(block.args, tuple(ops)) if changed else block


def _is_f32_product(op: Op) -> bool:
    if not isinstance(op, MmaF):
        return False
    if not all(_element(v) is F32 for v in (op.lhs, op.rhs, op.acc)):
        return False
    m, n = op.acc.type.shape[-2:]  # type: ignore[union-attr]
    return on_tensor_cores(m, n)


def on_tensor_cores(m: int, n: int) -> bool:
    """Whether tileiras 13.5 multiplies a TF32 [M, K] x [K, N] product on the tensor cores:
    a wgmma from M = 64 (N >= 8), an mma.sync from 16 x 16 up past 512 outputs."""
    return (m >= 64 and n >= 8) or (m >= 16 and n >= 16 and m * n >= 512)


def _three_products(mma: MmaF, ids: FreshIds, scope: _Scope, ops: list[Op]) -> list[Op]:
    """The ops replacing `mma` (after appending the splits it needs to `ops`); the last one
    defines `mma`'s result."""
    a_hi, a_lo = _split(mma.lhs, ids, scope, ops, mma)
    b_hi, b_lo = _split(mma.rhs, ids, scope, ops, mma)
    tile = mma.result.type
    from_zero = mma.acc.id in scope.zeros
    start = mma.acc if from_zero else ids.value(tile)
    small, both_small = ids.value(tile), ids.value(tile)
    total = mma.result if from_zero else ids.value(tile)
    products: list[Op] = [
        MmaF(result=small, lhs=a_lo, rhs=b_hi, acc=start, span=mma.span),
        MmaF(result=both_small, lhs=a_hi, rhs=b_lo, acc=small, span=mma.span),
        MmaF(result=total, lhs=a_hi, rhs=b_hi, acc=both_small, span=mma.span),
    ]
    if from_zero:
        return products
    zero = Constant(result=start, values=(0.0,), span=mma.span)
    added = AddF(result=mma.result, lhs=mma.acc, rhs=total, span=mma.span)
    return [zero, *products, added]


def _split(value: Value, ids: FreshIds, scope: _Scope, ops: list[Op], at: MmaF) -> Split:
    if value.id in scope.splits:
        return scope.splits[value.id]
    shape = value.type.shape  # type: ignore[union-attr]
    hi = ids.value(TileType(TF32, shape))
    hi_wide = ids.value(TileType(F32, shape))
    rest = ids.value(TileType(F32, shape))
    lo = ids.value(TileType(TF32, shape))
    ops.extend(
        (
            FToF(result=hi, source=value, span=at.span),
            FToF(result=hi_wide, source=hi, span=at.span),
            SubF(result=rest, lhs=value, rhs=hi_wide, span=at.span),
            FToF(result=lo, source=rest, span=at.span),
        )
    )
    scope.splits[value.id] = (hi, lo)
    return hi, lo


def _element(value: Value) -> object:
    type_ = value.type
    return type_.element if isinstance(type_, TileType) else None
