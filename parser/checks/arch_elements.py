"""Element types the arch lacks: rejected before tileiras, at the first place the kernel
uses them (a parameter's type, else the first expression of that type).

tileiras compiles fp8 (`f8e4m3fn`, `f8e5m2`) for sm_89 and newer, and the block-scale type
`f8e8m0fnu` and fp4 (`f4e2m1fn`) for sm_100 and newer (the element table's `min_sm`). So on
Hopper (sm_90) an fp8 `mma` compiles, while block-scaled `mmaf_scaled` cannot (it needs
`f8e8m0fnu` scales or fp4 operands).
"""

from __future__ import annotations

from collections.abc import Iterator

from client_stubs.element_table import IR_ELEMENT_BY_NAME
from parser import messages
from parser.arch import arch_number
from parser.diagnostics import DiagnosticSink
from parser.spans import Span
from parser.typed_kernel import TypedBody, TypedKernel
from parser.types import Elem, SemType, element_of


def min_sm(elem: Elem) -> int:
    return IR_ELEMENT_BY_NAME[elem.spec.ir].min_sm


def _elem(ty: SemType) -> Elem | None:
    found = element_of(ty)
    if found is not None:
        return found
    elem = getattr(ty, "elem", None)  # pointers, pointer tiles, mapped outputs
    return elem if isinstance(elem, Elem) else None


def _bodies(body: TypedBody) -> Iterator[TypedBody]:
    yield body
    for inlined in body.inlined.values():
        yield from _bodies(inlined.body)


def _uses(kernel: TypedKernel) -> Iterator[tuple[Elem, Span]]:
    """Every element type the kernel uses, with where: parameters first, then expressions in
    source order."""
    for param in kernel.signature.params:
        elem = _elem(param.type)
        if elem is not None:
            yield elem, kernel.function.params[param.index].type.span
    found = [
        (expr.span.start, elem, expr.span)
        for body in _bodies(kernel.body)
        for expr, ty in body.expr_types.items()
        if (elem := _elem(ty)) is not None
    ]
    for _, elem, span in sorted(found, key=lambda item: item[0]):
        yield elem, span


def check_arch_elements(kernel: TypedKernel, arch: str, sink: DiagnosticSink) -> None:
    """CT0801 once per element type the arch cannot hold, at its first use."""
    number = arch_number(arch)
    if number is None:
        return
    reported: set[Elem] = set()
    for elem, span in _uses(kernel):
        needed = min_sm(elem)
        if number >= needed or elem in reported:
            continue
        reported.add(elem)
        sink.add(messages.ARCH_LACKS_ELEMENT.at(span, elem=elem, needed=needed, arch=arch))
