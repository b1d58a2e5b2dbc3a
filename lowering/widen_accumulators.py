"""Widen f16 mma accumulators carried by a `for` loop inside another loop to f32 (one pass
over the tile IR).

`acc = mma(a, b, acc)` in a loop with an f16 accumulator is cuTile's spelling of a GEMM main
loop with half-precision accumulation (cutile-rs's `persistent_gemm.rs` writes it so).
tileiras 13.5 compiles such a loop, when it sits inside another loop (a persistent kernel's
loop over output tiles), with a wait after every wgmma (`WARPGROUP.DEPBAR.LE gsb0, 0x0`
after each `HGMMA.F16`), so the tensor cores idle; with an f32 accumulator it issues a
k-tile's wgmmas back to back (a loop at the top level of the kernel is fine either way and
is left alone). This pass carries such an accumulator in f32 and rounds it to f16 once,
after the loop:
the same products summed with excess precision, as XLA allows by default
(`xla_allow_excess_precision`), so a result differs from per-step f16 rounding only by being
closer to the exact sum. `CompileRequest.exact_accumulators` turns it off.

A loop-carried value qualifies when, in the loop's body, its block argument's only use is
the accumulator of one `mmaf` of the body's own ops, that `mmaf`'s result is used only by the
body's terminator to carry the value on, the loop has no other `continue`, and the operands
take an f32 accumulator (f16 and fp8 do). The loop's result keeps its SSA value (now the
product of the `ftof` after the loop), so nothing after the loop changes.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator

from client_stubs.element_table import IR_ELEMENT_BY_NAME
from lowering.ir.core import (
    Block,
    FreshIds,
    Module,
    Op,
    Region,
    Value,
    map_bodies,
    map_regions,
    walk,
)
from lowering.ir.ops_control import Continue, For, Loop
from lowering.ir.ops_convert import FToF
from lowering.ir.ops_core import Constant
from lowering.ir.ops_matmul import MmaF
from lowering.ir.types import ElementType, TileType

NARROW, WIDE = ElementType.F16, ElementType.F32


def widen_accumulators(module: Module) -> Module:
    """`module` with every qualifying f16 loop accumulator carried in f32."""
    return map_bodies(module, lambda body, ids: _widen_block(body, ids, {}, in_loop=False))


def _widen_block(
    block: Block, ids: FreshIds, constants: dict[int, Constant], in_loop: bool
) -> Block:
    """`block` with the loops nested in its ops widened, inner loops first, and its own
    loops too when `block` runs inside a loop; `constants`: those defined around it, by id."""
    constants = dict(constants)
    ops: list[Op] = []
    changed = False
    for op in block.ops:
        if isinstance(op, Constant):
            constants[op.result.id] = op
        inner = _widen_regions(op, ids, constants, in_loop or isinstance(op, For | Loop))
        if in_loop and isinstance(inner, For):
            before, inner, after = _widen_for(inner, ids, constants)
            ops.extend(before)
            ops.append(inner)
            ops.extend(after)
            changed = changed or bool(before)
        else:
            ops.append(inner)
        changed = changed or inner is not op
    return Block(block.args, tuple(ops)) if changed else block


def _widen_regions(op: Op, ids: FreshIds, constants: dict[int, Constant], in_loop: bool) -> Op:
    if not op.regions:
        return op
    return map_regions(op, lambda b: _widen_block(b, ids, constants, in_loop))


def _widen_for(
    loop: For, ids: FreshIds, constants: dict[int, Constant]
) -> tuple[list[Op], For, list[Op]]:
    """The ops to put before the loop, the loop, and the ops after it."""
    before: list[Op] = []
    after: list[Op] = []
    for index in list(_qualifying(loop)):
        init, loop, output = _widen_one(loop, index, ids, constants)
        before.append(init)
        after.append(output)
    return before, loop, after


def _qualifying(loop: For) -> Iterator[int]:
    body = loop.body.block
    terminator = body.ops[-1] if body.ops else None
    if not isinstance(terminator, Continue) or _continues(body) != 1:
        return
    uses = Counter(v.id for op in walk(body) for v in op.operand_values)
    producers = {v.id: op for op in body.ops for v in op.results}
    for index, (arg, carried) in enumerate(zip(body.args[1:], terminator.values, strict=True)):
        mma = producers.get(carried.id)
        if (
            _is_narrow(arg.type)
            and isinstance(mma, MmaF)
            and mma.acc == arg
            and uses[arg.id] == 1
            and uses[carried.id] == 1
            and WIDE.value in IR_ELEMENT_BY_NAME[str(_element(mma.lhs))].mma_accumulators
        ):
            yield index


def _continues(block: Block) -> int:
    """The `continue`s that end an iteration of the loop whose body is `block` (those of
    nested loops belong to them)."""
    count = 0
    for op in block.ops:
        if isinstance(op, Continue):
            count += 1
        elif not isinstance(op, For | Loop):
            count += sum(_continues(b) for r in op.regions for b in r.blocks)
    return count


def _widen_one(
    loop: For, index: int, ids: FreshIds, constants: dict[int, Constant]
) -> tuple[Op, For, Op]:
    body = loop.body.block
    narrow_arg = body.args[1 + index]
    wide_type = TileType(WIDE, narrow_arg.type.shape)  # type: ignore[union-attr]
    wide_arg = ids.value(wide_type)
    old_init = loop.init_values[index]
    init = _wide_init(loop, constants.get(old_init.id), old_init, wide_type, ids)
    ops = list(body.ops)
    terminator = ops[-1]
    assert isinstance(terminator, Continue)
    position, mma = next(
        (i, op) for i, op in enumerate(ops) if terminator.values[index] in op.results
    )
    assert isinstance(mma, MmaF)
    wide_product = ids.value(wide_type)
    ops[position] = dataclasses.replace(mma, acc=wide_arg, result=wide_product)
    values = list(terminator.values)
    values[index] = wide_product
    ops[-1] = dataclasses.replace(terminator, values=tuple(values))
    args = list(body.args)
    args[1 + index] = wide_arg
    wide_output = ids.value(wide_type)
    outputs = list(loop.outputs)
    narrow_output = outputs[index]
    outputs[index] = wide_output
    inits = list(loop.init_values)
    inits[index] = init.result  # type: ignore[attr-defined]
    widened = dataclasses.replace(
        loop,
        outputs=tuple(outputs),
        init_values=tuple(inits),
        body=Region((Block(tuple(args), tuple(ops)),)),
    )
    rounded = FToF(result=narrow_output, source=wide_output, span=mma.span)
    return init, widened, rounded


def _wide_init(
    loop: For, constant: Constant | None, old: Value, wide_type: TileType, ids: FreshIds
) -> Op:
    """The f32 initial value: a constant stays a constant (so tileiras still starts the
    first wgmma from zero registers), anything else is converted."""
    if constant is not None:
        return Constant(result=ids.value(wide_type), values=constant.values, span=constant.span)
    return FToF(result=ids.value(wide_type), source=old, span=loop.span)


def _is_narrow(type: object) -> bool:
    return isinstance(type, TileType) and type.element is NARROW and type.rank >= 2


def _element(value: Value) -> object:
    return value.type.element  # type: ignore[union-attr]
