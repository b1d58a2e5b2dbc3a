"""`cutile-compile --facts ENTRY:PARAM[:dims=D,..][:strides=S,..]`: tensor facts ahead of time.

The batch form of a client's `specialize_for`: the kernel may assume that every extent /
stride of PARAM is a multiple of the given power of two (1 = nothing known), the contract
lists it and the host checks it before every launch. Several `--facts` for one entry make
one specialized variant; run again without them to add the general variant to the bundle.
"""

from __future__ import annotations

from collections.abc import Sequence

from parser.specialization import TensorFacts
from service.convert import FACT_DIVISORS


class FactsError(ValueError):
    pass


def parse_facts(text: str) -> tuple[str, TensorFacts]:
    """`gemm:x:dims=16,8:strides=8,1` -> ("gemm", TensorFacts("x", (16, 8), (8, 1))); the
    entry may be qualified (`kernel::gemm:x:dims=16,8`)."""
    fields = text.replace("::", "\0").split(":")
    if len(fields) < 3 or not fields[0] or not fields[1]:
        raise FactsError(f"--facts {text!r}: expected ENTRY:PARAM:dims=..[:strides=..]")
    entry, param, lists = fields[0].replace("\0", "::"), fields[1], fields[2:]
    divisors: dict[str, tuple[int, ...]] = {"dims": (), "strides": ()}
    for part in lists:
        kind, _, values = part.partition("=")
        if kind not in divisors or divisors[kind]:
            raise FactsError(f"--facts {text!r}: expected dims=.. and/or strides=.., once each")
        try:
            numbers = tuple(int(v) for v in values.split(","))
        except ValueError:
            raise FactsError(f"--facts {text!r}: {kind} must be integers") from None
        if any(n not in FACT_DIVISORS for n in numbers):
            raise FactsError(f"--facts {text!r}: divisors must be one of {sorted(FACT_DIVISORS)}")
        divisors[kind] = numbers
    return entry, TensorFacts(param, divisors["dims"], divisors["strides"])


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
