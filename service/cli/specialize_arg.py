"""`cutile-compile --specialize none|auto|D[,D..]`: the variants every entry gets by default.

A kernel compiled without facts assumes only a 16-byte aligned base and a unit last stride
per tensor, so tileiras keeps masked, unvectorized paths wherever an extent or stride might be
odd. cuTile Rust's JIT infers divisibility from the tensors at launch; ahead of time we build,
next to the general kernel, variants that assume every extent and every stride (but the unit
last one) of every tensor parameter divisible by D, and the host picks per launch the most
specialized variant the arguments meet (`client_stubs.variants`).

    auto      the default: D = 16 (one variant)
    none      the general kernel only
    16,8      one variant per listed divisor (each a power of two, 2..16)

A static extent keeps only the part of D it has (an input declared `[-1, 24]` gets 8 on its
last axis). The compiler lowers every divisor to the target's `max_divisibility` hint. A
variant pays only if it compiles to another cubin than the general kernel (and than every
stronger variant kept before it); one that does not is left out of the bundle. Entries given
`--facts` are built exactly as those facts say, without automatic variants.
"""

from __future__ import annotations

from client_stubs.specialization import largest_divisor
from parser.front_end import TensorFacts
from protos.generated.cutile.compile.v1 import contract_pb2

AUTO_DIVISORS = (16,)
_DIVISORS = frozenset({2, 4, 8, 16})
_TENSORS = frozenset(
    {
        contract_pb2.PARAM_KIND_TENSOR_IN,
        contract_pb2.PARAM_KIND_TENSOR_OUT,
        contract_pb2.PARAM_KIND_TENSOR_OUT_MAPPED,
    }
)


class SpecializeError(ValueError):
    pass


def parse_specialize(text: str) -> tuple[int, ...]:
    """`auto` -> (16,), `none` -> (), `16,8` -> (16, 8) (strongest first, no repeats)."""
    mode = text.strip().lower()
    if mode == "auto":
        return AUTO_DIVISORS
    if mode == "none":
        return ()
    try:
        divisors = {int(part) for part in mode.split(",")}
    except ValueError:
        raise SpecializeError(
            f"--specialize {text!r}: expected none, auto or divisors such as 16,8"
        ) from None
    if not divisors <= _DIVISORS:
        raise SpecializeError(f"--specialize {text!r}: divisors must be powers of two from 2 to 16")
    return tuple(sorted(divisors, reverse=True))


def variant_facts(contract: contract_pb2.LaunchContract, divisor: int) -> tuple[TensorFacts, ...]:
    """The facts of the variant that assumes every extent and stride (but the last, which is
    1) of every tensor parameter of `contract` divisible by `divisor`, sorted by parameter;
    () when no tensor gains anything."""
    facts = []
    for param in contract.params:
        if param.kind not in _TENSORS or param.rank == 0:
            continue
        static = param.kind == contract_pb2.PARAM_KIND_TENSOR_IN  # an output's are its tile
        declared = list(param.declared_shape) if static else []
        dims = tuple(
            largest_divisor(declared[axis], divisor)
            if axis < len(declared) and declared[axis] >= 0
            else divisor
            for axis in range(param.rank)
        )
        strides = (divisor,) * (param.rank - 1) + (1,)
        if max(dims + strides) > 1:
            facts.append(TensorFacts(param.name, dims, strides))
    return tuple(sorted(facts, key=lambda f: f.param))
