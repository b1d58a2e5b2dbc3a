"""Serialise an IR `Module` to Tile IR bytecode (tileir-facts §2.3-2.7).

Layout: header, then the Func, Constant (if any), Type and String sections, then the
end byte. Values are numbered per function: parameters 0..n-1, then op results in stream
order; a block's arguments and ops are numbered from the current counter and rolled back
when the block ends; a region-owning op's results come after its regions.
"""

from __future__ import annotations

from lowering.bytecode.encoding import pad_to, uvarint
from lowering.bytecode.op_encoders import ENCODERS
from lowering.bytecode.tables import BytecodeError, FunctionSignature, ModuleTables, Version
from lowering.ir.attributes import EntryHints
from lowering.ir.core import Block, Function, Module, Op, Value
from lowering.ir.ops_pointer import GlobalVar
from lowering.ir.types import ElementType, TileType

MAGIC = b"\x7fTileIR\x00"
SUPPORTED_VERSIONS: tuple[Version, ...] = ((13, 1), (13, 2), (13, 3), (13, 4))
DEFAULT_VERSION: Version = (13, 3)

SECTION_END, SECTION_STRING, SECTION_FUNC, SECTION_CONST, SECTION_TYPE = 0, 1, 2, 4, 5
SECTION_GLOBAL = 6
FLAG_ENTRY, FLAG_HINTS = 0x02, 0x04
TAG_INTEGER, TAG_DICT, TAG_OPT_HINTS = 1, 10, 11
_HINT_KEYS = ("num_cta_in_cga", "num_worker_warps_per_cta", "occupancy")


def write_bytecode(module: Module, version: Version = DEFAULT_VERSION) -> bytes:
    """Encode `module` as bytecode `version`; raises BytecodeError when it cannot."""
    if version not in SUPPORTED_VERSIONS:
        raise BytecodeError(f"unsupported bytecode version {version}; use {SUPPORTED_VERSIONS}")
    tables = ModuleTables(version)
    functions = uvarint(len(module.functions))
    functions += b"".join(_function_entry(fn, tables) for fn in module.functions)
    out = bytearray(MAGIC + bytes(version) + b"\x00\x00")
    if module.globals:
        _section(out, SECTION_GLOBAL, _globals(module.globals, tables), 1)
    _section(out, SECTION_FUNC, functions, 8)
    if len(tables.constants):
        _section(out, SECTION_CONST, tables.constants.encode(8), 8)
    _section(out, SECTION_TYPE, tables.types.encode(4), 4)
    _section(out, SECTION_STRING, tables.strings.encode(4), 4)
    out.append(SECTION_END)
    return bytes(out)


def _globals(globals_: tuple[GlobalVar, ...], tables: ModuleTables) -> bytes:
    """count; per global: name, value type (tile<1xE>), value constant, alignment, then
    (13.3+) visibility (public) and the `constant` flag (no: kernels write it)."""
    out = uvarint(len(globals_))
    for var in globals_:
        tile = TileType(var.element, (1,))
        out += uvarint(tables.string(var.name)) + uvarint(tables.type(tile))
        out += uvarint(tables.constant(tile, (var.value,))) + uvarint(var.alignment)
        if tables.at_least(13, 3):
            out += uvarint(0) + uvarint(0)
    return out


def _section(out: bytearray, section_id: int, payload: bytes, alignment: int) -> None:
    """id (bit 7 = aligned), payload length, alignment, padding, payload."""
    out += bytes([section_id | 0x80]) + uvarint(len(payload)) + uvarint(alignment)
    pad_to(out, alignment)
    out += payload


def _function_entry(fn: Function, tables: ModuleTables) -> bytes:
    """name, signature, flags byte, location (0 = unknown), [hints], body length, body."""
    signature = FunctionSignature(tuple(p.type for p in fn.params))
    head = uvarint(tables.string(fn.name)) + uvarint(tables.type(signature))
    hints = _entry_hints(fn, tables) if fn.is_entry else None
    flags = (FLAG_ENTRY if fn.is_entry else 0) | (FLAG_HINTS if hints is not None else 0)
    body = _FunctionWriter(tables, fn.params).write_body(fn.body)
    return head + bytes([flags]) + uvarint(0) + (hints or b"") + uvarint(len(body)) + body


def _entry_hints(fn: Function, tables: ModuleTables) -> bytes | None:
    """The self-contained OptimizationHints attribute, keys sorted as MLIR dicts are."""
    hints: tuple[EntryHints, ...] = tuple(fn.hints)
    if not hints:
        if not tables.at_least(13, 3):
            return None  # the "default" key is 13.3+; older entries carry no hints
        hints = (EntryHints("default"),)
    by_arch = sorted(hints, key=lambda h: h.arch)
    out = uvarint(TAG_OPT_HINTS) + uvarint(len(by_arch))
    return out + b"".join(_arch_hints(h, tables) for h in by_arch)


def _arch_hints(hint: EntryHints, tables: ModuleTables) -> bytes:
    newer = hint.arch == "default" or hint.num_worker_warps_per_cta is not None
    if newer and not tables.at_least(13, 3):
        raise BytecodeError("'default' hints and num_worker_warps_per_cta need bytecode 13.3+")
    items = [(k, getattr(hint, k)) for k in _HINT_KEYS if getattr(hint, k) is not None]
    i32 = tables.type(ElementType.I32)
    out = uvarint(tables.string(hint.arch)) + uvarint(TAG_DICT) + uvarint(len(items))
    for key, value in items:
        out += uvarint(tables.string(key)) + uvarint(TAG_INTEGER) + uvarint(i32)
        out += uvarint(value & 0xFFFFFFFF)
    return out


class _FunctionWriter:
    """Writes one function body; implements op_encoders.EncodeContext."""

    def __init__(self, tables: ModuleTables, params: tuple[Value, ...]) -> None:
        self.tables = tables
        self.buf = bytearray()
        self._index: dict[int, int] = {}
        self._next = 0
        self._define(params)

    def write_body(self, body: Block) -> bytes:
        """The top-level block: a flat op stream without an op count."""
        for op in body.ops:
            self._op(op)
        return bytes(self.buf)

    def value(self, value: Value) -> int:
        index = self._index.get(value.id)
        if index is None:
            raise BytecodeError(f"value {value} is used where it is not defined")
        return index

    def regions(self, op: Op) -> None:
        self.buf += uvarint(len(op.regions))
        for region in op.regions:
            self.buf += uvarint(len(region.blocks))
            for block in region.blocks:
                self._block(block)

    def _block(self, block: Block) -> None:
        saved_index, saved_next = dict(self._index), self._next
        self.buf += uvarint(len(block.args))
        self.buf += b"".join(uvarint(self.tables.type(a.type)) for a in block.args)
        self._define(block.args)
        self.buf += uvarint(len(block.ops))
        for op in block.ops:
            self._op(op)
        self._index, self._next = saved_index, saved_next

    def _op(self, op: Op) -> None:
        encoder = ENCODERS.get(type(op))
        if encoder is None:
            raise BytecodeError(f"no bytecode encoder for op {type(op).__name__}")
        encoder(op, self)
        self._define(op.results)

    def _define(self, values: tuple[Value, ...]) -> None:
        for value in values:
            self._index[value.id] = self._next
            self._next += 1
