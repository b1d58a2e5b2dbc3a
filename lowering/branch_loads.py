"""Keep loads that run only on some iterations of a loop off TMA (one pass over the tile IR).

On the H200, tileiras (CUDA 13) compiles a TMA load inside an `if` inside a `for` loop to code
that never finishes when the branch is skipped on some iteration: decoder.rs's
`qkv_rope<PT=16>`, whose `for p in 0..PT { if p < tokens { .. } }` loads through TMA in its
16-byte-rows variant, hung on a partial prefill chunk (tokens < PT) while its general kernel
(no TMA) completed. This pass gives every view load nested in an `if` that is itself inside a
`for` or `loop` (at any depth between them) the hint `allow_tma = false`; every other load
keeps the assembler's choice. A `for` of constant bounds that runs at most once (decode's
`for p in 0..1`) counts as no loop: there is no other iteration to skip the branch in (and
its TMA loads measured 2.8 against 4.2 µs a call of qkv_rope<PT=1>).
"""

from __future__ import annotations

import dataclasses

from lowering.ir.attributes import HINTS_ARCH, LoadStoreHints
from lowering.ir.core import Block, Function, Module, Op, map_regions, walk
from lowering.ir.ops_control import For, If, Loop
from lowering.ir.ops_core import Constant
from lowering.ir.ops_memory import LoadViewTko


def keep_branch_loads_off_tma(module: Module) -> Module:
    """`module` with every view load under an `if` inside a loop hinted off TMA."""
    functions = tuple(_function(f) for f in module.functions)
    return dataclasses.replace(module, functions=functions)


Scalars = dict[int, int | float | bool]  # value id -> the constant it is


def _function(function: Function) -> Function:
    scalars = {
        op.result.id: op.values[0]
        for op in walk(function.body)
        if isinstance(op, Constant) and len(op.values) == 1
    }
    body = _block(function.body, scalars, in_loop=False, in_branch=False)
    return function if body is function.body else dataclasses.replace(function, body=body)


def _block(block: Block, scalars: Scalars, in_loop: bool, in_branch: bool) -> Block:
    ops = tuple(_op(op, scalars, in_loop, in_branch) for op in block.ops)
    changed = any(new is not old for new, old in zip(ops, block.ops, strict=True))
    return Block(block.args, ops) if changed else block


def _op(op: Op, scalars: Scalars, in_loop: bool, in_branch: bool) -> Op:
    if isinstance(op, LoadViewTko):
        return dataclasses.replace(op, hints=_off_tma(op.hints)) if in_branch else op
    if not op.regions:
        return op
    inner_loop = in_loop or isinstance(op, Loop) or (isinstance(op, For) and _repeats(op, scalars))
    inner_branch = in_branch or (in_loop and isinstance(op, If))
    return map_regions(op, lambda b: _block(b, scalars, inner_loop, inner_branch))


def _off_tma(hints: tuple[LoadStoreHints, ...]) -> tuple[LoadStoreHints, ...]:
    if not hints:
        return (LoadStoreHints(HINTS_ARCH, allow_tma=False),)
    return tuple(dataclasses.replace(h, allow_tma=False) for h in hints)


def _repeats(loop: For, scalars: Scalars) -> bool:
    """Whether `loop` may run its body more than once (unknown bounds: it may)."""
    lower, upper, step = (scalars.get(v.id) for v in (loop.lower, loop.upper, loop.step))
    if not all(isinstance(b, int) and not isinstance(b, bool) for b in (lower, upper, step)):
        return True
    return step <= 0 or upper - lower > step  # type: ignore[operator]
