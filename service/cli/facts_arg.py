"""`cutile-compile --facts ENTRY:PARAM[:dims=D,..][:strides=S,..][:align=A][:last_stride=any]`.

The batch form of a client's `specialize_for`: the kernel may assume that every extent /
stride of PARAM is a multiple of the given power of two (1 = nothing known), the contract
lists it and the host checks it before every launch. `align=A` (bytes, a power of two up to
16) and `last_stride=any` relax the default view assumptions (16-byte aligned base, unit last
stride) for views such as `x[1:]` or `x[:, ::2]`; `last_stride=1` is the default. Several
`--facts` for one entry make one specialized variant; run again without them to add the
general variant to the bundle.
"""

from __future__ import annotations

from collections.abc import Sequence

from parser.front_end import DEFAULT_BASE_ALIGN, TensorFacts
from service.convert import BASE_ALIGNS, FACT_DIVISORS


class FactsError(ValueError):
    pass


def parse_facts(text: str) -> tuple[str, TensorFacts]:
    """`gemm:x:dims=16,8:strides=8,1` -> ("gemm", TensorFacts("x", (16, 8), (8, 1))); the
    entry may be qualified (`kernel::gemm:x:dims=16,8`); `add:x:align=4:last_stride=any`
    relaxes the view facts."""
    fields = text.replace("::", "\0").split(":")
    if len(fields) < 3 or not fields[0] or not fields[1]:
        raise FactsError(f"--facts {text!r}: expected ENTRY:PARAM:dims=..[:strides=..]")
    entry, param, parts = fields[0].replace("\0", "::"), fields[1], fields[2:]
    values: dict[str, str] = {}
    for part in parts:
        kind, _, value = part.partition("=")
        if kind not in _KINDS or kind in values:
            expected = ", ".join(f"{k}=.." for k in _KINDS)
            raise FactsError(f"--facts {text!r}: expected {expected}, once each")
        values[kind] = value
    facts = TensorFacts(
        param,
        _divisors(text, "dims", values.get("dims")),
        _divisors(text, "strides", values.get("strides")),
        base_align=_align(text, values.get("align")),
        unit_last_stride=_unit_last_stride(text, values.get("last_stride")),
    )
    return entry, facts


_KINDS = ("dims", "strides", "align", "last_stride")


def _divisors(text: str, kind: str, value: str | None) -> tuple[int, ...]:
    if value is None:
        return ()
    numbers = _integers(text, kind, value)
    if any(n not in FACT_DIVISORS for n in numbers):
        raise FactsError(f"--facts {text!r}: divisors must be one of {sorted(FACT_DIVISORS)}")
    return numbers


def _align(text: str, value: str | None) -> int:
    if value is None:
        return DEFAULT_BASE_ALIGN
    align = _number(value)
    if align is None or align not in BASE_ALIGNS:
        raise FactsError(f"--facts {text!r}: align must be one of {sorted(BASE_ALIGNS)} (bytes)")
    return align


def _unit_last_stride(text: str, value: str | None) -> bool:
    if value not in (None, "1", "any"):
        raise FactsError(f"--facts {text!r}: last_stride must be 1 or any")
    return value != "any"


def _integers(text: str, kind: str, value: str) -> tuple[int, ...]:
    parts = value.split(",")
    numbers = tuple(n for n in map(_number, parts) if n is not None)
    if len(numbers) != len(parts):
        raise FactsError(f"--facts {text!r}: {kind} must be integers")
    return numbers


def _number(value: str) -> int | None:
    """`value` as a decimal integer of ASCII digits, else None (`int()` also takes other
    scripts' digits and "1_6"; `str.isdigit()` takes superscripts `int()` refuses)."""
    value = value.strip()
    if not (value.isascii() and value.isdigit()):
        return None
    try:
        return int(value)
    except ValueError:  # more digits than `int()` converts
        return None


def facts_for_entry(
    entry: str, facts: Sequence[tuple[str, TensorFacts]]
) -> tuple[TensorFacts, ...]:
    """The facts given for `entry` ("add" also matches "kernel::add"), sorted by parameter."""
    mine = [f for name, f in facts if same_entry(entry, name)]
    return tuple(sorted(mine, key=lambda f: f.param))


def names_entry(qualified: str, requested: str) -> bool:
    """Whether the entry `qualified` ("kernel::add") is what `requested` ("add") asks for."""
    return qualified == requested or qualified.endswith(f"::{requested}")


def same_entry(first: str, second: str) -> bool:
    """`add`, `kernel::add`: the same entry when equal or one qualifies the other."""
    return names_entry(first, second) or names_entry(second, first)
