"""`cutile-compile --specialize none|auto|rows|D[,D..]`: the variants every entry gets by
default.

A kernel compiled without facts assumes only a 16-byte aligned base and a unit last stride
per tensor, so tileiras keeps masked, unvectorized paths (scalar loads, no TMA) wherever an
extent or stride might be odd. cuTile Rust's JIT infers divisibility from the tensors at
launch; ahead of time we build variants next to the general kernel, and the host picks per
launch the most specialized variant the arguments meet (`client_stubs.variants`):

    divisible by D   every extent and every stride (but the unit last one) of every tensor
                     parameter divisible by D
    divisible by 16 past the leading extent
                     the same with the leading extent free: what a launch over a row count
                     of no particular divisibility meets (`[4097, 1024]`: cuTile Rust's JIT
                     gives its tensors the same facts); a rank-1 tensor is assumed nothing
    16-byte rows     every stride but the unit last one a multiple of 16 bytes, no extent
                     assumed: what TMA needs, and what a launch with small or odd extents
                     still meets (a decoder's one-token activations `[1, K]`, an output of
                     `[N, 4]` f32 rows), which the divisible variant refuses
    occupancy        the 16-byte rows facts and the hint `occupancy = 4`, for an entry that
                     names no occupancy and multiplies no tiles (`mma`)
                     (`lowering.default_occupancy`); hosts take it first, but only for
                     launches of 1024 or more tile blocks

    auto      the default: occupancy, divisible by 16, by 16 past the leading extent, then
              16-byte rows
    none      the general kernel only
    rows      the 16-byte rows variant only
    16,8      one divisible variant per listed divisor (each a power of two, 2..16); `rows`
              and `occupancy` may be listed too (`16,rows,occupancy`)

A static extent keeps only the part of D it has (an input declared `[-1, 24]` gets 8 on its
last axis). The compiler lowers every divisor to the target's `max_divisibility` hint. A
variant pays only if it compiles to other machine code than the general kernel and every
weaker variant (of two variants with the same code, the one assuming less serves more
launches with it); one that does not is left out of the bundle. Entries given
`--facts` are built exactly as those facts say, without automatic variants.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from client_stubs.element_table import ELEMENT_BY_NAME
from client_stubs.occupancy import MIN_TILE_BLOCKS, VARIANT_OCCUPANCY
from client_stubs.specialization import largest_divisor
from lowering.cubin_info import machine_code
from parser.front_end import TensorFacts
from protos.generated.cutile.compile.v1 import contract_pb2

_DIVISORS = frozenset({2, 4, 8, 16})
ROW_BYTES = 16  # TMA's stride granularity
_TENSORS = frozenset(
    {
        contract_pb2.PARAM_KIND_TENSOR_IN,
        contract_pb2.PARAM_KIND_TENSOR_OUT,
        contract_pb2.PARAM_KIND_TENSOR_OUT_MAPPED,
    }
)


class SpecializeError(ValueError):
    pass


@dataclass(frozen=True)
class AutoVariant:
    """One automatic variant: `divisor` > 0 assumes every extent (but the leading one, with
    `leading_free`) and stride (but the unit last one) divisible by it; otherwise every stride
    but the last a multiple of `row_bytes`. `occupancy` > 0 also gives an entry that names
    none that hint (`lowering.default_occupancy`), for launches of many tile blocks."""

    divisor: int = 0
    row_bytes: int = 0
    leading_free: bool = False
    occupancy: int = 0

    def describe(self) -> str:
        if self.divisor:
            past = " past the leading extent" if self.leading_free else ""
            facts = f"divisible by {self.divisor}{past}"
        else:
            facts = f"{self.row_bytes}-byte rows"
        if self.occupancy:
            return f"{facts}, occupancy {self.occupancy} for {MIN_TILE_BLOCKS}+ tile blocks"
        return facts

    def facts(self, contract: contract_pb2.LaunchContract) -> tuple[TensorFacts, ...]:
        if self.divisor:
            return variant_facts(contract, self.divisor, leading_free=self.leading_free)
        return row_facts(contract, self.row_bytes)


ROWS = AutoVariant(row_bytes=ROW_BYTES)
TRAILING = AutoVariant(divisor=16, leading_free=True)
OCCUPANCY = AutoVariant(row_bytes=ROW_BYTES, occupancy=VARIANT_OCCUPANCY)
AUTO_VARIANTS = (OCCUPANCY, AutoVariant(divisor=16), TRAILING, ROWS)


def builds(auto: AutoVariant, general: contract_pb2.LaunchContract) -> bool:
    """Whether the variant `auto` of the kernel with contract `general` can differ from it:
    a facts variant that assumes something, an occupancy variant of an entry that takes the
    hint (`LaunchConfig.takes_occupancy_variant`)."""
    if auto.occupancy:
        return general.launch.takes_occupancy_variant
    return bool(auto.facts(general))


def kept_variants(general: bytes, cubins: Sequence[bytes | None]) -> list[bool]:
    """Which of a kernel's variants (strongest first, None where one failed) to keep: those
    whose machine code differs from the general kernel's and from every weaker variant's (of
    two with the same code, the one assuming less serves more launches with it). A cubin whose
    machine code cannot be read (from a server: only its digests were checked) is not kept,
    and with an unreadable general cubin none is."""
    codes = [_code(cubin) for cubin in cubins]
    plain = _code(general)
    if plain is None:
        return [False] * len(cubins)
    return [
        code is not None and code != plain and code not in codes[position + 1 :]
        for position, code in enumerate(codes)
    ]


def _code(cubin: bytes | None) -> bytes | None:
    try:
        return None if cubin is None else machine_code(cubin)
    except ValueError:
        return None


def parse_specialize(text: str) -> tuple[AutoVariant, ...]:
    """`auto` -> occupancy, divisible by 16, by 16 past the leading extent and 16-byte rows,
    `none` -> (), `rows` -> 16-byte rows, `16,8` -> divisible by 16 and by 8 (occupancy first,
    then the divisors strongest first, no repeats, rows last)."""
    mode = text.strip().lower()
    if mode == "auto":
        return AUTO_VARIANTS
    if mode == "none":
        return ()
    parts = {part.strip() for part in mode.split(",")}
    named = {"rows", "occupancy"} & parts
    try:
        divisors = {int(part) for part in parts - named}
    except ValueError:
        raise SpecializeError(
            f"--specialize {text!r}: expected none, auto, rows, occupancy or divisors such as 16,8"
        ) from None
    if not divisors <= _DIVISORS:
        raise SpecializeError(f"--specialize {text!r}: divisors must be powers of two from 2 to 16")
    found = tuple(AutoVariant(divisor=d) for d in sorted(divisors, reverse=True))
    first = (OCCUPANCY,) if "occupancy" in named else ()
    return first + found + ((ROWS,) if "rows" in named else ())


def variant_facts(
    contract: contract_pb2.LaunchContract, divisor: int, *, leading_free: bool = False
) -> tuple[TensorFacts, ...]:
    """The facts of the variant that assumes every extent (but the leading one, with
    `leading_free`) and stride (but the last, which is 1) of every tensor parameter of
    `contract` divisible by `divisor`, sorted by parameter; () when no tensor gains anything."""
    facts = []
    for param in contract.params:
        if param.kind not in _TENSORS or param.rank == 0:
            continue
        static = param.kind == contract_pb2.PARAM_KIND_TENSOR_IN  # an output's are its tile
        declared = list(param.declared_shape) if static else []
        dims = tuple(
            1
            if leading_free and axis == 0
            else largest_divisor(declared[axis], divisor)
            if axis < len(declared) and declared[axis] >= 0
            else divisor
            for axis in range(param.rank)
        )
        strides = (divisor,) * (param.rank - 1) + (1,)
        if leading_free and param.rank == 1:
            continue  # its one extent is the leading one: nothing to assume
        if max(dims + strides) > 1:
            facts.append(TensorFacts(param.name, dims, strides))
    return tuple(sorted(facts, key=lambda f: f.param))


def row_facts(contract: contract_pb2.LaunchContract, row_bytes: int) -> tuple[TensorFacts, ...]:
    """The facts of the variant whose tensor parameters have every stride but the last (which
    is 1) a multiple of `row_bytes` (in elements of the parameter's type, at most 16) and no
    extent assumed, sorted by parameter; () when no tensor gains anything (rank-1 tensors and
    elements of `row_bytes` or more gain nothing)."""
    facts = []
    for param in contract.params:
        if param.kind not in _TENSORS or param.rank < 2:
            continue
        element = ELEMENT_BY_NAME.get(param.dtype)
        if element is None or not element.addressable:
            continue
        divisor = min(16, row_bytes // element.storage_bytes)
        if divisor > 1:
            strides = (divisor,) * (param.rank - 1) + (1,)
            facts.append(TensorFacts(param.name, (), strides))
    return tuple(sorted(facts, key=lambda f: f.param))
