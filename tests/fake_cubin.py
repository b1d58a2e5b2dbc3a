"""A minimal cubin for tests: a real ELF64 header for the CUDA machine and target, and a
symbol table holding one function, so it passes `lowering.cubin_info.check_cubin` the way a
tileiras cubin does. `payload` is its machine code (an executable section): cubins that must
differ differ there."""

from __future__ import annotations

import struct

from lowering.cubin_info import EM_CUDA

_HEADER = struct.Struct("<4sBBBB8sHHIQQQIHHHHHH")
_SECTION = struct.Struct("<IIQQQQIIQQ")
_SYMBOL = struct.Struct("<IBBHQQ")
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB = 1, 2, 3
SHF_ALLOC_EXECINSTR = 0x6


def fake_cubin(sm: str = "sm_90", symbol: str = "add_B128", payload: bytes = b"") -> bytes:
    names = b"\0" + symbol.encode() + b"\0"
    symbols = _SYMBOL.pack(0, 0, 0, 0, 0, 0) + _SYMBOL.pack(1, 0x12, 0, 0, 0, 0)  # FUNC
    body = payload + names + symbols
    names_at = _HEADER.size + len(payload)
    symbols_at = names_at + len(names)
    sections_at = _HEADER.size + len(body)
    sections = (
        _SECTION.pack(0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        + _SECTION.pack(0, SHT_STRTAB, 0, 0, names_at, len(names), 0, 0, 1, 0)
        + _SECTION.pack(0, SHT_SYMTAB, 0, 0, symbols_at, len(symbols), 1, 1, 8, _SYMBOL.size)
        + _SECTION.pack(
            0, SHT_PROGBITS, SHF_ALLOC_EXECINSTR, 0, _HEADER.size, len(payload), 0, 0, 16, 0
        )
    )
    flags = int(sm.removeprefix("sm_")) << 8
    header = _HEADER.pack(
        b"\x7fELF",
        2,
        1,
        1,
        0x41,
        b"\0" * 8,
        2,
        EM_CUDA,
        1,
        0,
        0,
        sections_at,
        flags,
        _HEADER.size,
        0,
        0,
        _SECTION.size,
        4,
        1,
    )
    return header + body + sections


class StandInAssembler:
    """Stands in for tileiras where only the contract matters: a minimal cubin for the arch
    holding the entry symbol (the contract does not depend on the cubin)."""

    version = "<tileiras>"

    def assemble(
        self, bytecode: bytes, *, arch: str, symbol: str | None = None, **_: object
    ) -> bytes:
        return fake_cubin(arch, symbol or "", bytecode)
