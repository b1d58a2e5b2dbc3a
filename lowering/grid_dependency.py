"""Make every entry wait for the grids it depends on before it touches memory (one pass over
the tile IR), so that a host may launch it early: programmatic dependent launch (PDL).

A launch with programmatic stream serialization may start while the kernel before it on the
stream is still running; the kernel's `gdc_wait_tko` then holds its tile blocks until that
kernel has completed and its writes are visible (in a plain launch there is nothing to wait
for and it costs nothing). What the early start saves is the launch itself: the tile blocks
are placed, their parameters read and their index arithmetic done while the previous grid
drains.

The pass puts `gdc_wait_tko` at the top of each entry and `gdc_launch_dependents_tko` (the
kernel after this one may start launching once every tile block got here, or exited) at the
end of its body (at the top, before the wait, in an entry with tensor-core ops), and orders
every memory access after the wait: each `make_token` (the start of an output's token chain,
of the print and raw-pointer chains, and cutile-rs's `new_token_unordered`) becomes the
wait's token, and each access that had no token (a shared input's load) takes it. Nothing
reads or writes global memory before the wait, so the kernel is safe however it is launched;
the contract says so (`LaunchConfig.waits_for_prior_grids`), and only then does a host
launch it early.

Why the trigger comes last (H200, 2026-12-05): with it first, every kernel's blocks let the
next grid launch at once, so the grids of a chain pile up on the SMs waiting, holding the
slots the running kernel's later blocks need; Qwen3-4B decode at batch 1 lost 5% to plain
launches (313.4 against 328.6 tokens/s at 1k context, 280.6 against 295.0 at 8k). With it
last, the next grid is placed while this one drains: 345.7 against 327.3 and 319.1 against
297.9 tokens/s, and a graph of small kernels replays in 0.93 µs a kernel against 1.2 plain.
But a trigger after a tensor-core loop makes tileiras spill its accumulators (`sass_stats` of
the benchmark GEMMs: up to 1583 spills where the plain and trigger-first builds have none or
a few), so an entry with mma ops keeps the trigger first; the benchmark tables measured the
same for plain and trigger-first builds (BENCHMARKS.md, "Early launches").

Tried and left out (H200, 2026-12-05): letting loads of inputs no prior grid writes (a GEMV's
weights) skip the wait, so that they stream while the previous kernel drains. tileiras places
the wait (SASS `ACQBULK`) right before the first access that depends on it, but a
warp-specialized kernel's producer issues every load of the loop, so one waiting load (the
activations) keeps it ahead of all weight loads (`UTMALDG`). Qwen3-4B decode at batch 1, one
run: 329.6 against 319.7 tokens/s for the early build without it at 1k context, 274.5
against 274.9 at 8k: no gain.
"""

from __future__ import annotations

import dataclasses

from lowering.ir.core import (
    Block,
    FreshIds,
    Function,
    Module,
    Op,
    Value,
    map_regions,
    substitute,
    walk,
)
from lowering.ir.ops_core import GdcLaunchDependentsTko, GdcWaitTko, MakeToken
from lowering.ir.ops_matmul import MmaF, MmaFScaled, MmaI
from lowering.ir.ops_memory import LoadPtrTko, LoadViewTko, StorePtrTko, StoreViewTko
from lowering.ir.ops_pointer import AtomicCasTko, AtomicRedViewTko, AtomicRmwTko
from lowering.ir.types import TOKEN

# an entry with these keeps its trigger at the top: with it after a tensor-core loop tileiras
# spills the loop's accumulators (the benchmark GEMMs: up to 1583 spills, a wait per wgmma)
TENSOR_CORE_OPS = (MmaF, MmaI, MmaFScaled)

MEMORY_ACCESSES = (
    LoadViewTko,
    StoreViewTko,
    LoadPtrTko,
    StorePtrTko,
    AtomicRmwTko,
    AtomicCasTko,
    AtomicRedViewTko,
)


def wait_for_prior_grids(module: Module) -> Module:
    """`module` with every entry starting with a grid-dependency wait that orders all of its
    memory accesses."""
    functions = tuple(_function(f) if f.is_entry else f for f in module.functions)
    return dataclasses.replace(module, functions=functions)


def _function(function: Function) -> Function:
    ids = FreshIds(function)
    launch = GdcLaunchDependentsTko(result_token=ids.value(TOKEN))
    wait = GdcWaitTko(result_token=ids.value(TOKEN))
    waited = wait.result_token
    made = {op.result.id: waited for op in walk(function.body) if isinstance(op, MakeToken)}
    body = _block(function.body, made, waited)
    if any(isinstance(op, TENSOR_CORE_OPS) for op in walk(body)):
        ops = (launch, wait, *body.ops)
    else:  # the trigger as the last act before the body's `return`
        *rest, last = body.ops
        ops = (wait, *rest, launch, last)
    return dataclasses.replace(function, body=Block(body.args, ops))


def _block(block: Block, made: dict[int, Value], waited: Value) -> Block:
    ops = (_op(op, made, waited) for op in block.ops if not isinstance(op, MakeToken))
    return Block(block.args, tuple(ops))


def _op(op: Op, made: dict[int, Value], waited: Value) -> Op:
    op = substitute(op, made)
    if isinstance(op, MEMORY_ACCESSES) and op.token is None:
        op = dataclasses.replace(op, token=waited)
    return map_regions(op, lambda inner: _block(inner, made, waited))
