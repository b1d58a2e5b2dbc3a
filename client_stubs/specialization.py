"""Measure tensor arguments into `TensorFacts` for a specialized compile request.

Per axis, the largest power of two up to 16 that divides the extent and the stride (in
elements); the largest power of two up to 16 dividing the base address (bytes); whether the
last stride is 1. A kernel compiled with these facts assumes them (aligned, vectorised, TMA
paths) and its contract lists them, so every later launch is checked against them on the host.
The view facts are sent only where they relax the service's default (a 16-byte aligned base,
a unit last stride), so requests for ordinary tensors stay as they were; a tensor with no
fact at all (every divisor 1) is left out of the request.
"""

from __future__ import annotations

from collections.abc import Mapping

from protos.generated.cutile.compile.v1 import compile_pb2

MAX_DIVISOR = 16
DEFAULT_BASE_ALIGN = 16  # what the service assumes of a base address without facts (bytes)


def largest_divisor(value: int, limit: int = MAX_DIVISOR) -> int:
    """The largest power of two <= `limit` dividing `value` (0 is divisible by all)."""
    divisor = 1
    while divisor < limit and value % (divisor * 2) == 0:
        divisor *= 2
    return divisor


def tensor_facts(name: str, tensor: object) -> compile_pb2.TensorFacts:
    """The facts of `tensor` (a DeviceTensor, Partition, MappedPartition, or anything
    `DeviceTensor.wrap` takes: torch, cupy, `__cuda_array_interface__`) as parameter `name`."""
    if hasattr(tensor, "layout"):
        held = tensor
    else:
        from client_stubs.tensor import DeviceTensor  # numpy: only for foreign arrays

        held = DeviceTensor.wrap(tensor)
    layout = held.layout  # type: ignore[attr-defined]
    align = largest_divisor(layout.ptr, DEFAULT_BASE_ALIGN)
    return compile_pb2.TensorFacts(
        param=name,
        dim_divisors=[largest_divisor(d) for d in layout.shape],
        stride_divisors=[largest_divisor(s) for s in layout.strides],
        base_align=0 if align == DEFAULT_BASE_ALIGN else align,
        any_last_stride=bool(layout.strides) and layout.strides[-1] != 1,
    )


def states_something(facts: compile_pb2.TensorFacts) -> bool:
    """Whether `facts` add to what the service assumes without them: a divisor above 1, or a
    relaxed base alignment or last stride. Facts that do not compile to the very kernel of no
    facts, so sending them would only cache the same artifact under a second key."""
    divisors = (*facts.dim_divisors, *facts.stride_divisors)
    return any(d > 1 for d in divisors) or facts.base_align != 0 or facts.any_last_stride


def facts_for(tensors: Mapping[str, object]) -> list[compile_pb2.TensorFacts]:
    """Facts for every named tensor argument that has any (`states_something`), sorted by
    name (a stable cache key)."""
    measured = (tensor_facts(name, tensors[name]) for name in sorted(tensors))
    return [facts for facts in measured if states_something(facts)]
