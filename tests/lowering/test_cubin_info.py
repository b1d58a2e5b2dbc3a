"""Reading STT_FUNC symbols out of cubins: synthetic ELF files and real tileiras output."""

from __future__ import annotations

import struct

import pytest

from lowering.bytecode.writer import write_bytecode
from lowering.cubin_info import function_symbols
from lowering.ir.core import Module
from lowering.tileiras import Tileiras

STT_OBJECT, STT_FUNC = 1, 2
STB_GLOBAL = 1


def _elf(symbols: list[tuple[str, int]]) -> bytes:
    """A minimal ELF64 LE file: null section, .symtab, .strtab (after the header)."""
    strtab = b"\0" + b"".join(name.encode() + b"\0" for name, _ in symbols)
    offsets, at = [], 1
    for name, _ in symbols:
        offsets.append(at)
        at += len(name) + 1
    entries = [struct.pack("<IBBHQQ", 0, 0, 0, 0, 0, 0)]
    for (_, kind), name_at in zip(symbols, offsets, strict=True):
        entries.append(struct.pack("<IBBHQQ", name_at, (STB_GLOBAL << 4) | kind, 0, 1, 0, 0))
    symtab = b"".join(entries)
    symtab_at = 64
    strtab_at = symtab_at + len(symtab)
    shoff = strtab_at + len(strtab)
    header = b"\x7fELF\x02\x01\x01" + bytes(9)
    header += struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, shoff, 0, 64, 0, 0, 64, 3, 0)
    sections = bytes(64)
    sections += struct.pack("<IIQQQQIIQQ", 0, 2, 0, 0, symtab_at, len(symtab), 2, 1, 8, 24)
    sections += struct.pack("<IIQQQQIIQQ", 0, 3, 0, 0, strtab_at, len(strtab), 0, 0, 1, 0)
    return header + symtab + strtab + sections


def test_only_function_symbols_are_listed() -> None:
    data = _elf([("kernel_a", STT_FUNC), ("some_global", STT_OBJECT), ("kernel_b", STT_FUNC)])
    assert function_symbols(data) == ["kernel_a", "kernel_b"]


def test_no_symbols() -> None:
    assert function_symbols(_elf([])) == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "not an ELF file"),
        (b"MZ" + bytes(100), "not an ELF file"),
        (b"\x7fELF\x01\x01" + bytes(100), "64-bit little-endian"),
        (b"\x7fELF\x02\x02" + bytes(100), "64-bit little-endian"),
    ],
)
def test_non_elf_input_raises(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        function_symbols(data)


def test_truncated_file_raises() -> None:
    data = _elf([("kernel", STT_FUNC)])
    with pytest.raises(ValueError, match="truncated or malformed"):
        function_symbols(data[:-10])


@pytest.mark.tileiras
def test_real_cubin(tileiras: Tileiras, vadd_module: Module) -> None:
    cubin = tileiras.assemble(write_bytecode(vadd_module), arch="sm_100")
    assert function_symbols(cubin) == ["vadd_ir"]


def test_machine_code_is_the_executable_sections_and_refuses_what_no_cubin_holds() -> None:
    from lowering.cubin_info import machine_code
    from tests.fake_cubin import fake_cubin

    assert machine_code(fake_cubin(payload=b"CODE")) == b"CODE"
    assert machine_code(fake_cubin(symbol="other", payload=b"CODE")) == b"CODE"
    cubin = bytearray(fake_cubin(payload=b"CODE"))
    (shoff,) = struct.unpack_from("<Q", cubin, 0x28)
    last = shoff + 3 * 64  # the executable section's header: its size at +32
    struct.pack_into("<Q", cubin, last + 32, len(cubin))  # runs past the end of the file
    with pytest.raises(ValueError, match="executable ELF sections"):
        machine_code(bytes(cubin))
    # headers that each claim the whole file: no more code than the file holds
    struct.pack_into("<QQ", cubin, last + 24, 0, len(cubin) * 3 // 4)
    doubled = bytes(cubin[:shoff] + cubin[shoff : shoff + 4 * 64] + cubin[last : last + 64])
    doubled = doubled[:0x3C] + struct.pack("<H", 5) + doubled[0x3E:]
    with pytest.raises(ValueError, match="executable ELF sections"):
        machine_code(doubled)
