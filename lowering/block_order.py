"""Hand a GEMM's output tiles to tile blocks in groups of rows (one pass over the tile IR).

The GPU starts tile blocks in the order of their linear id, x fastest. A kernel in the shape
of cutile-rs's `gemm.rs` (block (x, y) computes output tile (x, y) from a loop over K that
loads row panel x of one operand and column panel y of the other) then has each wave of
blocks read every row panel for a few columns: the row panels do not stay in L2 between
waves. This pass renumbers the blocks so that consecutive linear ids walk GROUP_ROWS values
of x, then the next y: a wave reads GROUP_ROWS row panels and the columns they meet, which
stay cached while the next wave reuses them (Triton's "grouped ordering", here applied to
kernels as users write them).

Tile blocks are independent in cuTile (no block waits for another, each output tile is
written by the block that owns it), so any bijection of block ids computes the same result.
The new ids are a bijection of [0, X) x [0, Y) (z is left alone), computed in 64-bit
integers, and take the SSA values of the old ones: every use, the output tiles' own indices
included, sees the renumbered block. Bounds were proven on the old ids, which range over
the same sets.

A kernel qualifies when it multiplies tiles (`mmaf`/`mmai`) and, inside a loop, loads a
tile whose index depends on x but not y and another whose index depends on y but not x: the
two operand panels a grouped order lets waves share. A kernel whose loads follow only one
block coordinate (attention: keys and values by head) keeps its order, the best for it, and
so does one that asks for CTA clusters (`num_cta_in_cga` > 1), whose neighbours cooperate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from lowering.ir.core import Block, FreshIds, Function, Module, Op, Value, walk
from lowering.ir.ops_arith import AddI, DivI, MulI, RemI, SubI
from lowering.ir.ops_control import For, Loop
from lowering.ir.ops_convert import ExtI, TruncI
from lowering.ir.ops_core import Constant, GetNumTileBlocks, GetTileBlockId
from lowering.ir.ops_math import MinI
from lowering.ir.ops_matmul import MmaF, MmaFScaled, MmaI
from lowering.ir.ops_memory import LoadViewTko
from lowering.ir.types import ElementType, TileType

# values of x a group of consecutive blocks walks before the next y; on the H200, cutile-rs's
# gemm.rs at f16 4096^3 / 8192^3 (128x128 tiles): 4 -> 676 / 645-699, 8 -> 677 / 679,
# 16 -> 654-659 / 672-686 TFLOP/s (2026-12-04)
GROUP_ROWS = 8
I64 = TileType(ElementType.I64)
MMA_OPS = (MmaF, MmaI, MmaFScaled)

_Deps = dict[int, frozenset[str]]  # value id -> the block coordinates it depends on


def group_block_order(module: Module) -> Module:
    """`module` with every qualifying kernel's tile blocks renumbered in row groups."""
    functions = tuple(_function(f) for f in module.functions)
    return dataclasses.replace(module, functions=functions)


def _function(function: Function) -> Function:
    position, block_id = next(
        ((i, op) for i, op in enumerate(function.body.ops) if isinstance(op, GetTileBlockId)),
        (None, None),
    )
    if block_id is None or not _qualifies(function, block_id):
        return function
    ids = FreshIds(function)
    hardware = dataclasses.replace(
        block_id, x=ids.value(block_id.x.type), y=ids.value(block_id.y.type)
    )
    renumbering = _renumber(hardware, block_id.x, block_id.y, ids)
    ops = list(function.body.ops)
    ops[position : position + 1] = [hardware, *renumbering]  # type: ignore[misc]
    return dataclasses.replace(function, body=Block(function.body.args, tuple(ops)))


def _qualifies(function: Function, block_id: GetTileBlockId) -> bool:
    if any((hints.num_cta_in_cga or 1) > 1 for hints in function.hints):
        return False  # CTA clusters: the kernel asked for its own neighbours to cooperate
    if not any(isinstance(op, MMA_OPS) for op in walk(function.body)):
        return False
    deps: _Deps = {block_id.x.id: frozenset("x"), block_id.y.id: frozenset("y")}
    followed = set()
    for load in _loop_loads(function.body, deps, in_loop=False):
        coordinates = frozenset().union(*(deps.get(v.id, frozenset()) for v in load.index))
        followed.add(coordinates)
    return frozenset("x") in followed and frozenset("y") in followed


def _loop_loads(block: Block, deps: _Deps, in_loop: bool) -> Iterator[LoadViewTko]:
    """The view loads inside loops, in stream order, filling `deps` on the way: an op's
    results (and its regions' arguments) depend on whatever its operands depend on; a
    `for`'s induction variable on its bounds, each carried value on its initial value."""
    for op in block.ops:
        for value, sources in _definitions(op):
            found = frozenset().union(*(deps.get(v.id, frozenset()) for v in sources))
            if found:
                deps[value.id] = found
        if in_loop and isinstance(op, LoadViewTko):
            yield op
        inner = in_loop or isinstance(op, For | Loop)
        for region in op.regions:
            for inner_block in region.blocks:
                yield from _loop_loads(inner_block, deps, inner)


def _definitions(op: Op) -> Iterator[tuple[Value, tuple[Value, ...]]]:
    """Each value `op` defines with the operands it depends on."""
    operands = op.operand_values
    if isinstance(op, For):
        induction, *carried = op.body.block.args
        yield induction, (op.lower, op.upper, op.step)
        yield from ((arg, (init,)) for arg, init in zip(carried, op.init_values, strict=True))
        yield from ((output, operands) for output in op.outputs)
        return
    for value in op.results:
        yield value, operands
    for region in op.regions:
        for inner_block in region.blocks:
            yield from ((arg, operands) for arg in inner_block.args)


def _renumber(hardware: GetTileBlockId, x: Value, y: Value, ids: FreshIds) -> list[Op]:
    """Ops computing the grouped ids into the values `x` and `y`:

    linear = hx + hy * X;  per_group = GROUP_ROWS * Y;  first = linear / per_group * GROUP_ROWS
    rows = min(X - first, GROUP_ROWS);  r = linear % per_group
    x = first + r % rows;  y = r / rows
    """
    ops: list[Op] = []
    span = hardware.span

    def emit(op_class: type[Op], **fields: object) -> Value:
        value = ids.value(I64)
        ops.append(op_class(result=value, span=span, **fields))  # type: ignore[call-arg]
        return value

    def wide(value: Value) -> Value:
        return emit(ExtI, source=value)

    def div(lhs: Value, rhs: Value) -> Value:
        return emit(DivI, lhs=lhs, rhs=rhs)  # of non-negative values: any rounding

    def rem(lhs: Value, rhs: Value) -> Value:
        return emit(RemI, lhs=lhs, rhs=rhs)

    grid = GetNumTileBlocks(
        x=ids.value(x.type), y=ids.value(y.type), z=ids.value(x.type), span=span
    )
    ops.append(grid)
    group = emit(Constant, values=(GROUP_ROWS,))
    blocks_x, blocks_y = wide(grid.x), wide(grid.y)
    linear = emit(AddI, lhs=wide(hardware.x), rhs=emit(MulI, lhs=wide(hardware.y), rhs=blocks_x))
    per_group = emit(MulI, lhs=group, rhs=blocks_y)
    first = emit(MulI, lhs=div(linear, per_group), rhs=group)
    rows = emit(MinI, lhs=emit(SubI, lhs=blocks_x, rhs=first), rhs=group)
    within = rem(linear, per_group)
    new_x = emit(AddI, lhs=first, rhs=rem(within, rows))
    new_y = div(within, rows)
    ops.append(TruncI(result=x, source=new_x, span=span))
    ops.append(TruncI(result=y, source=new_y, span=span))
    return ops
