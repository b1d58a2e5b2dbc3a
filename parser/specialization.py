"""Specialization: facts the host knows about its tensor arguments, sent with a request.

The client measures its actual tensors (every extent and stride divisible by 8, say) and asks
for a kernel that may assume so; tileiras then picks aligned, vectorised and TMA paths. The
facts become preconditions exactly like a declared `preconditions = (stride(x, 0) % 8 == 0)`:
`assume div_by` in the kernel and assumptions in the contract, which the host verifies before
every launch. They are part of the request, hence of its cache key.

Two facts are about the view itself rather than its extents: the base address's alignment and
whether the last axis is unit-stride. With no facts a kernel assumes the fast common case (16-byte
aligned base, unit last stride); facts may relax either (a `x[1:]` view of an f32 tensor is only
4-byte aligned, `x[:, ::2]` has last stride 2), and the kernel then assumes only what they say.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from parser import messages
from parser.diagnostics import Diagnostic, DiagnosticSink
from parser.entry_signature import static_extents
from parser.preconditions import (
    ExtentDivisible,
    Precondition,
    StrideDivisible,
    contradiction,
)
from parser.typed_kernel import TypedKernel

DEFAULT_BASE_ALIGN = 16  # bytes a tensor's base address is assumed aligned to, with no facts
MAX_BASE_ALIGN = 16


@dataclass(frozen=True)
class TensorFacts:
    """Per axis of tensor parameter `param`, a number that divides its extent / stride
    (1: nothing known; empty tuples: no facts of that kind), a power of two dividing its base
    address (bytes) and whether its last axis has stride 1."""

    param: str
    dim_divisors: tuple[int, ...] = ()
    stride_divisors: tuple[int, ...] = ()
    base_align: int = DEFAULT_BASE_ALIGN
    unit_last_stride: bool = True


@dataclass(frozen=True)
class ViewLayout:
    """What the kernel assumes about one tensor view: base alignment (bytes) and whether the
    last stride is the constant 1 (else it is read from the ABI's stride slot)."""

    base_align: int = DEFAULT_BASE_ALIGN
    unit_last_stride: bool = True


def view_layouts(
    kernel: TypedKernel, facts: tuple[TensorFacts, ...], cap: int | None = None
) -> dict[int, ViewLayout]:
    """Parameter index -> the view layout its facts relax to; tensors without facts (and
    facts naming no tensor, which `specialize` reports) keep the default. `cap` (the
    arch's `max_divisibility`) lowers every assumed base alignment to at most itself."""
    index = {p.name: p.index for p in kernel.signature.params if p.role.is_tensor}
    layouts = {
        index[f.param]: ViewLayout(f.base_align, f.unit_last_stride)
        for f in facts
        if f.param in index
    }
    if cap is None or cap >= DEFAULT_BASE_ALIGN:
        return layouts
    for position in index.values():
        layout = layouts.get(position, ViewLayout())
        layouts[position] = replace(layout, base_align=min(layout.base_align, cap))
    return layouts


def specialize(
    kernel: TypedKernel,
    facts: tuple[TensorFacts, ...],
    sink: DiagnosticSink,
    cap: int | None = None,
) -> TypedKernel:
    """`kernel` with `facts` added to its entry's preconditions, each divisor lowered to at
    most `cap` (the arch's `max_divisibility`); CT0104 for facts that name no tensor
    parameter or give the wrong number of axes."""
    if not facts:
        return kernel
    limit = cap if cap is not None else 1 << 30
    tensors = {p.name: p for p in kernel.signature.params if p.role.is_tensor}
    added: list[Precondition] = []
    for fact in facts:
        param = tensors.get(fact.param)
        if param is None:
            sink.add(
                messages.FACTS_NAME_NO_TENSOR.at(
                    None, param=fact.param, function=kernel.function.name
                )
            )
            continue
        rank = param.tensor.rank
        if any(len(d) not in (0, rank) for d in (fact.dim_divisors, fact.stride_divisors)):
            sink.add(messages.FACTS_AXIS_COUNT.at(None, param=fact.param, rank=rank))
            continue
        layout_problem = _layout_problem(fact, param.tensor.elem.size_bytes)
        if layout_problem:
            sink.add(layout_problem)
            continue
        text = f"request facts for `{fact.param}`"
        conditions: list[Precondition] = [
            ExtentDivisible(param.index, axis, min(divisor, limit), text)
            for axis, divisor in enumerate(fact.dim_divisors)
            if min(divisor, limit) > 1
        ]
        conditions += [
            StrideDivisible(param.index, axis, min(divisor, limit), text)
            for axis, divisor in enumerate(fact.stride_divisors)
            if min(divisor, limit) > 1
        ]
        extents = static_extents(param)
        checked = [c for c in conditions if fact.unit_last_stride or not _on_last_stride(c, rank)]
        problems = [p for p in (contradiction(c, extents) for c in checked) if p]
        if problems:
            sink.add(messages.FACTS_NEVER_HOLD.at(None, param=fact.param, problem=problems[0]))
            continue
        added += conditions
    options = kernel.signature.options
    options = replace(options, preconditions=(*options.preconditions, *added))
    return replace(kernel, signature=replace(kernel.signature, options=options))


def _layout_problem(fact: TensorFacts, element_bytes: int) -> Diagnostic | None:
    align = fact.base_align
    if align < 1 or align > MAX_BASE_ALIGN or align & (align - 1):
        return messages.FACTS_ALIGN_NOT_POWER_OF_TWO.at(
            None, param=fact.param, align=align, max_align=MAX_BASE_ALIGN
        )
    if align < element_bytes:
        return messages.FACTS_ALIGN_BELOW_ELEMENT.at(
            None, param=fact.param, align=align, element_bytes=element_bytes
        )
    return None


def _on_last_stride(condition: Precondition, rank: int) -> bool:
    """A divisor of the last axis's stride: meaningful only when that stride is not 1."""
    return isinstance(condition, StrideDivisible) and condition.axis == rank - 1
