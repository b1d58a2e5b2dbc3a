"""Specialization: facts the host knows about its tensor arguments, sent with a request.

The client measures its actual tensors (every extent and stride divisible by 8, say) and asks
for a kernel that may assume so; tileiras then picks aligned, vectorised and TMA paths. The
facts become preconditions exactly like a declared `preconditions = (stride(x, 0) % 8 == 0)`:
`assume div_by` in the kernel and assumptions in the contract, which the host verifies before
every launch. They are part of the request, hence of its cache key.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from parser import codes
from parser.diagnostics import DiagnosticSink, error
from parser.entry_signature import static_extents
from parser.preconditions import (
    ExtentDivisible,
    Precondition,
    StrideDivisible,
    contradiction,
)
from parser.typed_kernel import TypedKernel


@dataclass(frozen=True)
class TensorFacts:
    """Per axis of tensor parameter `param`, a number that divides its extent / stride
    (1: nothing known). Empty tuples: no facts of that kind."""

    param: str
    dim_divisors: tuple[int, ...] = ()
    stride_divisors: tuple[int, ...] = ()


def specialize(
    kernel: TypedKernel, facts: tuple[TensorFacts, ...], sink: DiagnosticSink
) -> TypedKernel:
    """`kernel` with `facts` added to its entry's preconditions; CT0104 for facts that name
    no tensor parameter or give the wrong number of axes."""
    if not facts:
        return kernel
    tensors = {p.name: p for p in kernel.signature.params if p.role.is_tensor}
    added: list[Precondition] = []
    for fact in facts:
        param = tensors.get(fact.param)
        if param is None:
            _reject(sink, f"no tensor parameter `{fact.param}` in `{kernel.function.name}`")
            continue
        rank = param.tensor.rank
        if any(len(d) not in (0, rank) for d in (fact.dim_divisors, fact.stride_divisors)):
            _reject(sink, f"facts for `{fact.param}` must give 0 or {rank} axes")
            continue
        text = f"request facts for `{fact.param}`"
        conditions: list[Precondition] = [
            ExtentDivisible(param.index, axis, divisor, text)
            for axis, divisor in enumerate(fact.dim_divisors)
            if divisor > 1
        ]
        conditions += [
            StrideDivisible(param.index, axis, divisor, text)
            for axis, divisor in enumerate(fact.stride_divisors)
            if divisor > 1
        ]
        extents = static_extents(param)
        problems = [p for p in (contradiction(c, extents) for c in conditions) if p]
        if problems:
            _reject(sink, f"facts for `{fact.param}` can never hold: {problems[0]}")
            continue
        added += conditions
    options = kernel.signature.options
    options = replace(options, preconditions=(*options.preconditions, *added))
    return replace(kernel, signature=replace(kernel.signature, options=options))


def _reject(sink: DiagnosticSink, message: str) -> None:
    sink.add(error(codes.INVALID_SPECIALIZATION, message, None))
