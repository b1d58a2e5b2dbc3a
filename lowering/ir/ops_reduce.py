"""Reductions and scans along one dimension, with the combining function as a region.

Both ops take N tiles of one shape and one identity per tile (an IntegerAttr/FloatAttr
of that tile's element type). Their body is one block of 2N rank-0 tile arguments, two per
input, `(lhs_i, rhs_i)`, and ends with `yield` of the N combined values (rank-0 tiles).
Only pure ops may appear in the body (checked in `lowering.ir.verify`).

Argument order, measured (tileiras 13.5.37 on an H200): in a scan whose body yields
`lhs` the result is the first element of each row everywhere, and with `rhs` it is the
input itself. So `lhs` is the running prefix (earlier along `dim`; later when `reverse`)
and `rhs` the current element: result[j] = body(result[j-1], x[j]). The Ops.td prose
calls the pair "(current element, accumulator)", but its own scan example and the
hardware say otherwise. For commutative combiners (add, max, ...) the order does not
matter; the order in which reduce combines elements is unspecified, so the function must
be associative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from lowering.ir.attributes import FloatAttr, IntegerAttr, TypedAttr
from lowering.ir.core import Op, Region, Trait, Value, attribute, operands, region, result
from lowering.ir.types import ElementType, TileType


def identity_for(kind: str, element: ElementType, signed: bool = True) -> TypedAttr:
    """The identity of a standard combiner: "sum", "prod", "max" or "min".

    Floats use 0 / 1 / -inf / +inf; integers 0 / 1 / the type's lowest / highest value
    (signed or unsigned, matching the `maxi`/`mini` signedness in the body).
    """
    if element.is_float:
        values = {"sum": 0.0, "prod": 1.0, "max": -math.inf, "min": math.inf}
        return FloatAttr(values[kind], element)
    bits = element.bits
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if element is ElementType.I1:
        low, high = 0, 1
    values_i = {"sum": 0, "prod": 1, "max": low, "min": high}
    return IntegerAttr(values_i[kind], element)


def _element(value: Value) -> ElementType | None:
    ty = value.type
    if isinstance(ty, TileType) and isinstance(ty.element, ElementType):
        return ty.element
    return None


class _Aggregate(Op):
    """The shared rules of `reduce` and `scan` (the subclasses declare the fields)."""

    TRAITS = frozenset({Trait.PURE_REGIONS})
    outputs: tuple[Value, ...]
    dim: int
    identities: tuple[TypedAttr, ...]
    inputs: tuple[Value, ...]
    body: Region

    def expected_output(self, source: TileType) -> TileType:
        raise NotImplementedError

    def verify(self) -> list[str]:
        errors = self._input_errors()
        if errors:
            return errors
        first = self.inputs[0].type
        assert isinstance(first, TileType)
        if not 0 <= self.dim < first.rank:
            errors.append(f"dim {self.dim} is out of range for rank {first.rank}")
        elif len(self.outputs) != len(self.inputs):
            errors.append("one result per input tile")
        else:
            for i, (src, out) in enumerate(zip(self.inputs, self.outputs, strict=True)):
                assert isinstance(src.type, TileType)
                want = self.expected_output(src.type)
                if out.type != want:
                    errors.append(f"result {i} must be {want}, got {out.type}")
        return errors + self._identity_errors() + self._block_errors()

    def _input_errors(self) -> list[str]:
        if not self.inputs:
            return ["needs at least one input tile"]
        if any(_element(v) is None for v in self.inputs):
            return ["inputs must be tiles of numbers"]
        shapes = {v.type.shape for v in self.inputs if isinstance(v.type, TileType)}
        if len(shapes) != 1:
            return ["all input tiles must have the same shape"]
        if self.inputs[0].type.rank == 0:  # type: ignore[union-attr]
            return ["inputs must have rank 1 or more"]
        return []

    def _identity_errors(self) -> list[str]:
        if len(self.identities) != len(self.inputs):
            return [f"needs {len(self.inputs)} identities, got {len(self.identities)}"]
        errors = []
        for i, (ident, src) in enumerate(zip(self.identities, self.inputs, strict=True)):
            element = _element(src)
            assert element is not None
            kind = FloatAttr if element.is_float else IntegerAttr
            if not isinstance(ident, kind) or ident.type != element:
                errors.append(f"identity {i} must be a {kind.__name__} of type {element}")
        return errors

    def _block_errors(self) -> list[str]:
        if len(self.body.blocks) != 1:
            return ["body must have exactly one block"]
        args = self.body.block.args
        if len(args) != 2 * len(self.inputs):
            return [f"body needs {2 * len(self.inputs)} arguments (two per input)"]
        errors = []
        for i, src in enumerate(self.inputs):
            scalar = TileType(_element(src) or ElementType.I1)
            if args[2 * i].type != scalar or args[2 * i + 1].type != scalar:
                errors.append(f"body arguments {2 * i} and {2 * i + 1} must be {scalar}")
        return errors

    @property
    def yield_types(self) -> tuple[TileType, ...]:
        """What the body's `yield` carries: one rank-0 tile per input."""
        return tuple(TileType(_element(v) or ElementType.I1) for v in self.inputs)


@dataclass(frozen=True, kw_only=True)
class Reduce(_Aggregate):
    """Combine the elements of each input along `dim`; each result drops that dimension."""

    NAME = "reduce"
    outputs: tuple[Value, ...] = result()
    dim: int = attribute()
    identities: tuple[TypedAttr, ...] = attribute()
    inputs: tuple[Value, ...] = operands()
    body: Region = region()

    def expected_output(self, source: TileType) -> TileType:
        shape = source.shape[: self.dim] + source.shape[self.dim + 1 :]
        return TileType(source.element, shape)


@dataclass(frozen=True, kw_only=True)
class Scan(_Aggregate):
    """Inclusive prefix combination along `dim` (from the end when `reverse`); same shape out.

    The Tile IR 13.3 docs say scan supports a single input tile only, but neither its
    verifier nor tileiras 13.5 rejects more, and a two-input scan (sum and max) computed
    correctly on an H200.
    """

    NAME = "scan"
    outputs: tuple[Value, ...] = result()
    dim: int = attribute()
    reverse: bool = attribute(False)
    identities: tuple[TypedAttr, ...] = attribute()
    inputs: tuple[Value, ...] = operands()
    body: Region = region()

    def expected_output(self, source: TileType) -> TileType:
        return source
