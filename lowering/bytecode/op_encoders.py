"""One encoder per IR op class, looked up by class in `ENCODERS` (tileir-facts §2.7-2.8).

An encoder appends the op's opcode, result types, flags, attributes, operands and (through
the context) regions. The caller numbers the op's results after the encoder returns, which
puts a region-owning op's results after its regions, as the format requires.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from lowering.bytecode import attrs
from lowering.bytecode.encoding import fixed_array, svarint, uvarint
from lowering.bytecode.tables import BytecodeError, ModuleTables
from lowering.ir import ops_arith as arith
from lowering.ir import ops_bits as bits
from lowering.ir import ops_compare as compare
from lowering.ir import ops_control as control
from lowering.ir import ops_convert as convert
from lowering.ir import ops_core as core
from lowering.ir import ops_debug as debug
from lowering.ir import ops_math as math_ops
from lowering.ir import ops_matmul as matmul
from lowering.ir import ops_memory as memory
from lowering.ir import ops_pointer as pointer
from lowering.ir import ops_reduce as reduce_ops
from lowering.ir import ops_shape as shape
from lowering.ir.attributes import (
    AssumePredicate,
    Bounded,
    DivBy,
    IntegerOverflow,
    RoundingMode,
    SameElements,
)
from lowering.ir.core import Op, Value
from lowering.ir.types import PartitionViewType, TileType

TAG_DIV_BY, TAG_SAME_ELEMENTS, TAG_BOUNDED = 8, 9, 12


class EncodeContext(Protocol):
    """What an encoder needs from the function writer."""

    buf: bytearray
    tables: ModuleTables

    def value(self, value: Value) -> int:
        """The bytecode index of a value in scope."""
        ...

    def regions(self, op: Op) -> None:
        """Append the op's regions, numbering their block arguments and ops."""
        ...


OpEncoder = Callable[[Any, EncodeContext], None]


# -- small pieces ---------------------------------------------------------------------


def _type_of(ctx: EncodeContext, value: Value) -> bytes:
    return uvarint(ctx.tables.type(value.type))


def _each_type(ctx: EncodeContext, values: Sequence[Value]) -> bytes:
    return b"".join(_type_of(ctx, v) for v in values)


def _counted_types(ctx: EncodeContext, values: Sequence[Value]) -> bytes:
    return uvarint(len(values)) + _each_type(ctx, values)


def _each_value(ctx: EncodeContext, values: Sequence[Value]) -> bytes:
    return b"".join(uvarint(ctx.value(v)) for v in values)


def _counted_values(ctx: EncodeContext, values: Sequence[Value]) -> bytes:
    return uvarint(len(values)) + _each_value(ctx, values)


def _flags(*bits: bool) -> bytes:
    return uvarint(sum(1 << i for i, bit in enumerate(bits) if bit))


def _enum(value: enum.Enum) -> bytes:
    return uvarint(value.value)


def _since(ctx: EncodeContext, version: tuple[int, int]) -> bool:
    return ctx.tables.version >= version


def _require(ok: bool, op: Op, what: str, version: tuple[int, int]) -> None:
    if not ok:
        major, minor = version
        raise BytecodeError(f"{op.NAME}: {what} needs bytecode {major}.{minor} or later")


def _gated_enum(
    ctx: EncodeContext, op: Op, name: str, version: tuple[int, int], default: enum.Enum
) -> bytes:
    """An enum attribute that exists only from `version` on (older: must be default)."""
    value = getattr(op, name)
    if _since(ctx, version):
        return _enum(value)
    _require(value == default, op, f"{name}={value.name.lower()}", version)
    return b""


# -- factories for fixed layouts --------------------------------------------------------


def _fixed(opcode: int, flags: tuple[str, ...] = (), attrs: tuple[str, ...] = ()) -> OpEncoder:
    """R per result; [flags varint of the named bools]; enum attrs; operand indices."""

    def encode(op: Op, ctx: EncodeContext) -> None:
        out = uvarint(opcode) + _each_type(ctx, op.results)
        if flags:
            out += _flags(*(getattr(op, name) for name in flags))
        out += b"".join(_enum(getattr(op, name)) for name in attrs)
        ctx.buf += out + _each_value(ctx, op.operand_values)

    return encode


def _fixed_since(opcode: int, version: tuple[int, int]) -> OpEncoder:
    """An op with a fixed layout (R per result; operand indices) new in `version`."""
    fixed = _fixed(opcode)

    def encode(op: Op, ctx: EncodeContext) -> None:
        _require(_since(ctx, version), op, "the op", version)
        fixed(op, ctx)

    return encode


def _terminator(opcode: int) -> OpEncoder:
    """return / yield / continue / break: [R..] (always none); [v..]."""

    def encode(op: Any, ctx: EncodeContext) -> None:
        ctx.buf += uvarint(opcode) + uvarint(0) + _counted_values(ctx, op.values)

    return encode


def _float_binary(opcode: int) -> OpEncoder:
    return _fixed(opcode, flags=("flush_to_zero",), attrs=("rounding",))


# -- ops with their own layout --------------------------------------------------------


def _constant(op: core.Constant, ctx: EncodeContext) -> None:
    tile = op.result.type
    if not isinstance(tile, TileType):
        raise BytecodeError(f"constant result must be a tile, got {tile}")
    index = ctx.tables.constant(tile, op.values)
    ctx.buf += uvarint(0x10) + _type_of(ctx, op.result) + uvarint(index)


def _predicate(pred: AssumePredicate) -> bytes:
    if isinstance(pred, DivBy):
        return uvarint(TAG_DIV_BY) + uvarint(pred.divisor) + bytes([0])  # no every/along
    if isinstance(pred, SameElements):  # a count, then one little-endian i64 per dimension
        return uvarint(TAG_SAME_ELEMENTS) + fixed_array(pred.groups, 8)
    flags = (pred.lower is not None) | ((pred.upper is not None) << 1)
    bounds = [b for b in (pred.lower, pred.upper) if b is not None]
    return uvarint(TAG_BOUNDED) + bytes([flags]) + b"".join(svarint(b) for b in bounds)


def _assume(op: core.Assume, ctx: EncodeContext) -> None:
    if not isinstance(op.predicate, (DivBy, Bounded, SameElements)):
        raise BytecodeError(f"assume: unsupported predicate {op.predicate!r}")
    ctx.buf += uvarint(0x06) + _type_of(ctx, op.result) + _predicate(op.predicate)
    ctx.buf += uvarint(ctx.value(op.value))


def _join_tokens(op: core.JoinTokens, ctx: EncodeContext) -> None:
    ctx.buf += uvarint(0x3C) + _counted_types(ctx, (op.result,))
    ctx.buf += _counted_values(ctx, op.tokens)


def _gdc(opcode: int) -> OpEncoder:
    """13.4+: R token; varint count of the optional token; [token]."""

    def encode(op: core.GdcWaitTko | core.GdcLaunchDependentsTko, ctx: EncodeContext) -> None:
        _require(_since(ctx, (13, 4)), op, "this op", (13, 4))
        out = uvarint(opcode) + _type_of(ctx, op.result_token)
        ctx.buf += out + uvarint(int(op.token is not None)) + _optional(ctx, op.token)

    return encode


def _make_tensor_view(op: memory.MakeTensorView, ctx: EncodeContext) -> None:
    out = uvarint(0x43) + _counted_types(ctx, (op.result,)) + uvarint(ctx.value(op.base))
    out += _counted_values(ctx, op.dynamic_shape) + _counted_values(ctx, op.dynamic_strides)
    ctx.buf += out


def _get_index_space_shape(op: memory.GetIndexSpaceShape, ctx: EncodeContext) -> None:
    ctx.buf += uvarint(0x2D) + _counted_types(ctx, op.counts) + uvarint(ctx.value(op.view))


def _view_access_attrs(op: memory.LoadViewTko | memory.StoreViewTko, ctx: EncodeContext) -> bytes:
    """Flags (b0 scope, b1 hints, b2 token), ordering, [scope], [hints], 13.4+: inbounds."""
    hints = bool(op.hints)
    out = _flags(op.scope is not None, hints, op.token is not None) + _enum(op.ordering)
    if op.scope is not None:
        out += _enum(op.scope)
    if hints:
        default = any(h.arch == "default" for h in op.hints)
        _require(not default or _since(ctx, (13, 3)), op, "'default' hints", (13, 3))
        out += attrs.load_store_hints(ctx.tables, op.hints)
    if _since(ctx, (13, 4)):
        view = op.view.type
        rank = len(view.tile_shape) if isinstance(view, PartitionViewType) else len(op.index)
        out += fixed_array([0] * rank, 1)  # inbounds: nothing proven in bounds
    return out


def _optional(ctx: EncodeContext, value: Value | None) -> bytes:
    return b"" if value is None else uvarint(ctx.value(value))


def _load_view(op: memory.LoadViewTko, ctx: EncodeContext) -> None:
    out = uvarint(0x3E) + _counted_types(ctx, (op.tile, op.result_token))
    out += _view_access_attrs(op, ctx) + uvarint(ctx.value(op.view))
    ctx.buf += out + _counted_values(ctx, op.index) + _optional(ctx, op.token)


def _store_view(op: memory.StoreViewTko, ctx: EncodeContext) -> None:
    out = uvarint(0x66) + _counted_types(ctx, (op.result_token,)) + _view_access_attrs(op, ctx)
    out += uvarint(ctx.value(op.tile)) + uvarint(ctx.value(op.view))
    ctx.buf += out + _counted_values(ctx, op.index) + _optional(ctx, op.token)


def _pointer_access_attrs(
    op: memory.LoadPtrTko | memory.StorePtrTko, ctx: EncodeContext, operand_flags: tuple[bool, ...]
) -> bytes:
    """Flags (b0 scope, b1 hints, then the optional operands), ordering, [scope], [hints]."""
    hints = bool(op.hints)
    out = _flags(op.scope is not None, hints, *operand_flags) + _enum(op.ordering)
    if op.scope is not None:
        out += _enum(op.scope)
    if hints:
        default = any(h.arch == "default" for h in op.hints)
        _require(not default or _since(ctx, (13, 3)), op, "'default' hints", (13, 3))
        out += attrs.load_store_hints(ctx.tables, op.hints)
    return out


def _load_ptr(op: memory.LoadPtrTko, ctx: EncodeContext) -> None:
    """R tile, R token; F (b0 scope, b1 hints, b2 mask, b3 padding, b4 token); ordering;
    [scope]; [hints]; v ptrs; [mask]; [padding]; [token]."""
    present = (op.mask is not None, op.padding is not None, op.token is not None)
    out = uvarint(0x3D) + _each_type(ctx, (op.tile, op.result_token))
    out += _pointer_access_attrs(op, ctx, present) + uvarint(ctx.value(op.ptrs))
    ctx.buf += out + _optional(ctx, op.mask) + _optional(ctx, op.padding) + _optional(ctx, op.token)


def _store_ptr(op: memory.StorePtrTko, ctx: EncodeContext) -> None:
    """R token; F (b0 scope, b1 hints, b2 mask, b3 token); ordering; [scope]; [hints];
    v ptrs; v value; [mask]; [token]."""
    present = (op.mask is not None, op.token is not None)
    out = uvarint(0x65) + _type_of(ctx, op.result_token) + _pointer_access_attrs(op, ctx, present)
    out += uvarint(ctx.value(op.ptrs)) + uvarint(ctx.value(op.value))
    ctx.buf += out + _optional(ctx, op.mask) + _optional(ctx, op.token)


def _atomic_rmw(op: pointer.AtomicRmwTko, ctx: EncodeContext) -> None:
    """R, R token; F (b0 mask, b1 token); ordering; scope; mode; v ptrs; v arg; [mask];
    [token]."""
    out = uvarint(0x08) + _each_type(ctx, (op.old, op.result_token))
    out += _flags(op.mask is not None, op.token is not None)
    out += _enum(op.ordering) + _enum(op.scope) + _enum(op.mode)
    out += _each_value(ctx, (op.ptrs, op.arg))
    ctx.buf += out + _optional(ctx, op.mask) + _optional(ctx, op.token)


def _atomic_cas(op: pointer.AtomicCasTko, ctx: EncodeContext) -> None:
    """R, R token; F (b0 mask, b1 token); ordering; scope; v ptrs; v cmp; v val; [mask];
    [token]."""
    out = uvarint(0x07) + _each_type(ctx, (op.old, op.result_token))
    out += _flags(op.mask is not None, op.token is not None)
    out += _enum(op.ordering) + _enum(op.scope) + _each_value(ctx, (op.ptrs, op.cmp, op.val))
    ctx.buf += out + _optional(ctx, op.mask) + _optional(ctx, op.token)


def _atomic_red_view(op: pointer.AtomicRedViewTko, ctx: EncodeContext) -> None:
    """13.3+: [R token]; F (b0 token); ordering; scope; mode; v view; [v..] index; v value;
    [token] (13.5 adds `inbounds`, which bytecode 13.3/13.4 do not have)."""
    _require(_since(ctx, (13, 3)), op, "this op", (13, 3))
    out = uvarint(0x75) + _counted_types(ctx, (op.result_token,)) + _flags(op.token is not None)
    out += _enum(op.ordering) + _enum(op.scope) + _enum(op.mode) + uvarint(ctx.value(op.view))
    out += _counted_values(ctx, op.index) + uvarint(ctx.value(op.value))
    ctx.buf += out + _optional(ctx, op.token)


def _get_global(op: pointer.GetGlobal, ctx: EncodeContext) -> None:
    ctx.buf += uvarint(0x2C) + _type_of(ctx, op.result) + uvarint(ctx.tables.string(op.name))


def _exp(op: math_ops.Exp, ctx: EncodeContext) -> None:
    rounding = _gated_enum(ctx, op, "rounding", (13, 3), RoundingMode.FULL)
    ctx.buf += uvarint(0x17) + _type_of(ctx, op.result) + rounding + uvarint(ctx.value(op.source))


def _tanh(op: math_ops.Tanh, ctx: EncodeContext) -> None:
    rounding = _gated_enum(ctx, op, "rounding", (13, 2), RoundingMode.FULL)
    ctx.buf += uvarint(0x6A) + _type_of(ctx, op.result) + rounding + uvarint(ctx.value(op.source))


def _negi(op: math_ops.NegI, ctx: EncodeContext) -> None:
    overflow = _gated_enum(ctx, op, "overflow", (13, 2), IntegerOverflow.NONE)
    ctx.buf += uvarint(0x50) + _type_of(ctx, op.result) + overflow + uvarint(ctx.value(op.source))


def _ftoi(op: convert.FToI, ctx: EncodeContext) -> None:
    out = uvarint(0x2B) + _type_of(ctx, op.result)
    if _since(ctx, (13, 4)):
        out += _flags(op.saturating)
    else:
        _require(not op.saturating, op, "saturating", (13, 4))
    out += _enum(op.signedness) + _enum(op.rounding)
    ctx.buf += out + uvarint(ctx.value(op.source))


def _for(op: control.For, ctx: EncodeContext) -> None:
    out = uvarint(0x29) + _counted_types(ctx, op.outputs)
    if _since(ctx, (13, 2)):
        out += _flags(op.unsigned_cmp)
    else:
        _require(not op.unsigned_cmp, op, "unsigned_cmp", (13, 2))
    bounds = (op.lower, op.upper, op.step, *op.init_values)
    ctx.buf += out + _counted_values(ctx, bounds)
    ctx.regions(op)


def _loop(op: control.Loop, ctx: EncodeContext) -> None:
    ctx.buf += uvarint(0x41) + _counted_types(ctx, op.outputs)
    ctx.buf += _counted_values(ctx, op.init_values)
    ctx.regions(op)


def _if(op: control.If, ctx: EncodeContext) -> None:
    ctx.buf += uvarint(0x32) + _counted_types(ctx, op.outputs)
    ctx.buf += uvarint(ctx.value(op.condition))
    ctx.regions(op)


def _since_op(version: tuple[int, int], layout: OpEncoder) -> OpEncoder:
    """An op that exists only from bytecode `version` on."""

    def encode(op: Op, ctx: EncodeContext) -> None:
        _require(_since(ctx, version), op, "this op", version)
        layout(op, ctx)

    return encode


def _aggregate(op: reduce_ops.Reduce | reduce_ops.Scan, ctx: EncodeContext) -> None:
    """reduce / scan: [R..]; dim; (scan: reverse bool); identities; [v..]; 1 region."""
    is_scan = isinstance(op, reduce_ops.Scan)
    out = uvarint(0x5E if is_scan else 0x58) + _counted_types(ctx, op.outputs) + uvarint(op.dim)
    if isinstance(op, reduce_ops.Scan):
        out += bytes([op.reverse])
    out += attrs.typed_array(ctx.tables, op.identities)
    ctx.buf += out + _counted_values(ctx, op.inputs)
    ctx.regions(op)


def _mmaf(op: matmul.MmaF, ctx: EncodeContext) -> None:
    out = uvarint(0x49) + _type_of(ctx, op.result)
    if _since(ctx, (13, 3)):
        out += _flags(op.fast_acc)
    else:
        _require(not op.fast_acc, op, "fast_acc", (13, 3))
    ctx.buf += out + _each_value(ctx, (op.lhs, op.rhs, op.acc))


def _permute(op: shape.Permute, ctx: EncodeContext) -> None:
    out = uvarint(0x53) + _type_of(ctx, op.result) + fixed_array(op.permutation, 4)
    ctx.buf += out + uvarint(ctx.value(op.source))


def _cat(op: shape.Cat, ctx: EncodeContext) -> None:
    out = uvarint(0x0C) + _type_of(ctx, op.result) + uvarint(op.dim)
    ctx.buf += out + _each_value(ctx, (op.lhs, op.rhs))


def _extract(op: shape.Extract, ctx: EncodeContext) -> None:
    """[R] (variadic operands make the result list counted); total count; source, indices."""
    out = uvarint(0x26) + _counted_types(ctx, (op.result,))
    ctx.buf += out + _counted_values(ctx, (op.source, *op.indices))


def _get_tensor_shape(op: shape.GetTensorShape, ctx: EncodeContext) -> None:
    ctx.buf += uvarint(0x2F) + _counted_types(ctx, op.extents) + uvarint(ctx.value(op.view))


def _print_tko(op: debug.PrintTko, ctx: EncodeContext) -> None:
    """13.2+: [R token]; flags (b0 token); format string; [v..] args; [token]."""
    _require(_since(ctx, (13, 2)), op, "a result token", (13, 2))
    out = uvarint(0x55) + _counted_types(ctx, (op.result_token,)) + _flags(op.token is not None)
    out += uvarint(ctx.tables.string(op.format)) + _counted_values(ctx, op.args)
    ctx.buf += out + _optional(ctx, op.token)


def _assert(op: debug.Assert, ctx: EncodeContext) -> None:
    out = uvarint(0x05) + uvarint(ctx.tables.string(op.message))
    ctx.buf += out + uvarint(ctx.value(op.condition))


ENCODERS: dict[type[Op], OpEncoder] = {
    # core
    core.MakeToken: _fixed(0x44),
    core.JoinTokens: _join_tokens,
    core.GdcWaitTko: _gdc(0x78),
    core.GdcLaunchDependentsTko: _gdc(0x77),
    core.Assume: _assume,
    core.GetTileBlockId: _fixed(0x30),
    core.GetNumTileBlocks: _fixed(0x2E),
    core.Constant: _constant,
    core.Broadcast: _fixed(0x0B),
    core.Reshape: _fixed(0x5B),
    core.Return: _terminator(0x5C),
    # memory
    memory.MakeTensorView: _make_tensor_view,
    memory.MakePartitionView: _fixed(0x42),
    memory.MakeGatherScatterView: _since_op((13, 3), _fixed(0x73)),
    memory.MakeStridedView: _since_op((13, 3), _fixed(0x74)),
    memory.LoadViewTko: _load_view,
    memory.StoreViewTko: _store_view,
    memory.GetIndexSpaceShape: _get_index_space_shape,
    memory.Offset: _fixed(0x51),
    memory.LoadPtrTko: _load_ptr,
    memory.StorePtrTko: _store_ptr,
    # pointers and atomics
    pointer.IntToPtr: _fixed(0x33),
    pointer.PtrToInt: _fixed(0x56),
    pointer.PtrToPtr: _fixed(0x57),
    pointer.GetGlobal: _get_global,
    pointer.AtomicRmwTko: _atomic_rmw,
    pointer.AtomicCasTko: _atomic_cas,
    pointer.AtomicRedViewTko: _atomic_red_view,
    # arithmetic
    arith.AddF: _float_binary(0x02),
    arith.SubF: _float_binary(0x67),
    arith.MulF: _float_binary(0x4C),
    arith.DivF: _float_binary(0x14),
    arith.AddI: _fixed(0x03, attrs=("overflow",)),
    arith.SubI: _fixed(0x68, attrs=("overflow",)),
    arith.MulI: _fixed(0x4E, attrs=("overflow",)),
    arith.DivI: _fixed(0x15, attrs=("signedness", "rounding")),
    arith.RemI: _fixed(0x5A, attrs=("signedness",)),
    # math
    math_ops.NegF: _fixed(0x4F),
    math_ops.AbsF: _fixed(0x00),
    math_ops.Log: _fixed(0x3F),
    math_ops.Log2: _fixed(0x40),
    math_ops.Sin: _fixed(0x62),
    math_ops.Cos: _fixed(0x12),
    math_ops.Exp: _exp,
    math_ops.Tanh: _tanh,
    math_ops.Exp2: _fixed(0x18, flags=("flush_to_zero",)),
    math_ops.Rsqrt: _fixed(0x5D, flags=("flush_to_zero",)),
    math_ops.Sqrt: _fixed(0x64, flags=("flush_to_zero",), attrs=("rounding",)),
    math_ops.NegI: _negi,
    math_ops.MaxF: _fixed(0x45, flags=("propagate_nan", "flush_to_zero")),
    math_ops.MinF: _fixed(0x47, flags=("propagate_nan", "flush_to_zero")),
    math_ops.MaxI: _fixed(0x46, attrs=("signedness",)),
    math_ops.MinI: _fixed(0x48, attrs=("signedness",)),
    math_ops.Fma: _fixed(0x28, flags=("flush_to_zero",), attrs=("rounding",)),
    math_ops.Tan: _fixed(0x69),
    math_ops.Sinh: _fixed(0x63),
    math_ops.Cosh: _fixed(0x13),
    math_ops.Ceil: _fixed(0x0D),
    math_ops.Floor: _fixed(0x27),
    math_ops.RemF: _fixed(0x59),
    math_ops.Pow: _fixed(0x54),
    math_ops.Atan2: _since_op((13, 2), _fixed(0x6E)),
    # bits and integer
    bits.AndI: _fixed(0x04),
    bits.OrI: _fixed(0x52),
    bits.XOrI: _fixed(0x6C),
    bits.MulhiI: _fixed(0x4D),
    bits.ShLI: _fixed(0x60, attrs=("overflow",)),
    bits.ShRI: _fixed(0x61, attrs=("signedness",)),
    bits.AbsI: _fixed(0x01),
    # comparison
    compare.CmpF: _fixed(0x0E, attrs=("predicate", "ordering")),
    compare.CmpI: _fixed(0x0F, attrs=("predicate", "signedness")),
    compare.Select: _fixed(0x5F),
    # conversion
    convert.FToF: _fixed(0x2A, attrs=("rounding",)),
    convert.IToF: _fixed(0x3B, attrs=("signedness", "rounding")),
    convert.FToI: _ftoi,
    convert.ExtI: _fixed(0x25, attrs=("signedness",)),
    convert.TruncI: _fixed(0x6B, attrs=("overflow",)),
    convert.Bitcast: _fixed(0x09),
    convert.Pack: _fixed_since(0x6F, (13, 3)),
    convert.Unpack: _fixed_since(0x70, (13, 3)),
    # control flow
    control.For: _for,
    control.Loop: _loop,
    control.If: _if,
    control.Yield: _terminator(0x6D),
    control.Continue: _terminator(0x11),
    control.Break: _terminator(0x0A),
    # reductions
    reduce_ops.Reduce: _aggregate,
    reduce_ops.Scan: _aggregate,
    # matrix multiply
    matmul.MmaF: _mmaf,
    matmul.MmaI: _fixed(0x4A, attrs=("signedness_lhs", "signedness_rhs")),
    matmul.MmaFScaled: _fixed_since(0x72, (13, 3)),
    # shape
    shape.Permute: _permute,
    shape.Cat: _cat,
    shape.Extract: _extract,
    shape.Iota: _fixed(0x3A),
    shape.GetTensorShape: _get_tensor_shape,
    # debug
    debug.PrintTko: _print_tko,
    debug.Assert: _assert,
}
