"""Read facts out of a cubin (an ELF64 little-endian object) with the standard library.

`function_symbols` lists the STT_FUNC symbol names: tileiras names each kernel
symbol exactly after its entry function, so this checks that an entry made it through.
`machine_code` is what decides whether two builds of a kernel run differently.
`check_cubin` is what every cubin must pass before anything caches or ships it: an ELF for
the CUDA machine, built for the requested SM (bits 8-15 of `e_flags`, as tileiras writes
them for every target), holding the entry's symbol.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

ELF_MAGIC = b"\x7fELF"
ELFCLASS64, ELFDATA2LSB = 2, 1
EM_CUDA = 190
SHT_SYMTAB = 2
SHF_EXECINSTR = 0x4
STT_FUNC = 2
_SECTION = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym


@dataclass(frozen=True)
class _Section:
    kind: int
    flags: int
    offset: int
    size: int
    link: int
    entsize: int


def function_symbols(cubin: bytes) -> list[str]:
    """Names of the STT_FUNC symbols in the symbol table(s), in table order."""
    _check_header(cubin)
    sections = _sections(cubin)
    names: list[str] = []
    for section in sections:
        if section.kind == SHT_SYMTAB:
            names += _function_names(cubin, section, _at(sections, section.link))
    return names


def machine_code(cubin: bytes) -> bytes:
    """The bytes of every executable section (the kernels' instructions), in table order:
    two cubins with the same machine code run alike, whatever else differs (an occupancy
    hint that did not change the code still changes the register limit tileiras notes)."""
    _check_header(cubin)
    parts, total = [], 0
    for section in _sections(cubin):
        if section.flags & SHF_EXECINSTR:
            total += section.size
            if section.offset + section.size > len(cubin) or total > len(cubin):
                raise ValueError("truncated or overlapping executable ELF sections")
            parts.append(cubin[section.offset : section.offset + section.size])
    return b"".join(parts)


def cubin_arch(cubin: bytes) -> str:
    """The arch a cubin was built for, e.g. "sm_90"; ValueError for anything else."""
    _check_header(cubin)
    (machine,) = struct.unpack_from("<H", cubin, 18)
    if machine != EM_CUDA:
        raise ValueError(f"an ELF for machine {machine}, not a CUDA cubin ({EM_CUDA})")
    (flags,) = struct.unpack_from("<I", cubin, 48)
    return f"sm_{(flags >> 8) & 0xFF}"


def check_cubin(cubin: bytes, arch: str, symbol: str | None = None) -> None:
    """ValueError naming the problem unless `cubin` is a cubin for `arch` holding `symbol`."""
    built_for = cubin_arch(cubin)
    if built_for != arch:
        raise ValueError(f"a cubin for {built_for}, not {arch}")
    if symbol is not None and symbol not in function_symbols(cubin):
        raise ValueError(f"the cubin lacks the entry symbol `{symbol}`")


def _check_header(data: bytes) -> None:
    if len(data) < 64 or data[:4] != ELF_MAGIC:
        raise ValueError("not an ELF file (a cubin starts with \\x7fELF)")
    if data[4] != ELFCLASS64 or data[5] != ELFDATA2LSB:
        raise ValueError("unsupported ELF flavour: cubins are 64-bit little-endian")


def _sections(data: bytes) -> list[_Section]:
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    if shentsize != _SECTION.size or shoff + shnum * shentsize > len(data):
        raise ValueError("truncated or malformed ELF section header table")
    out = []
    for i in range(shnum):
        fields = _SECTION.unpack_from(data, shoff + i * shentsize)
        out.append(_Section(fields[1], fields[2], fields[4], fields[5], fields[6], fields[9]))
    return out


def _at(sections: list[_Section], index: int) -> _Section:
    if not 0 <= index < len(sections):
        raise ValueError(f"ELF symbol table links to missing section {index}")
    return sections[index]


def _function_names(data: bytes, symtab: _Section, strtab: _Section) -> list[str]:
    if symtab.entsize != _SYMBOL.size or symtab.offset + symtab.size > len(data):
        raise ValueError("truncated or malformed ELF symbol table")
    names = []
    for offset in range(symtab.offset, symtab.offset + symtab.size, _SYMBOL.size):
        name_offset, info = _SYMBOL.unpack_from(data, offset)[:2]
        if info & 0xF == STT_FUNC:
            names.append(_string(data, strtab, name_offset))
    return names


def _string(data: bytes, strtab: _Section, offset: int) -> str:
    start = strtab.offset + offset
    end = data.find(b"\0", start, strtab.offset + strtab.size)
    if end < 0:
        raise ValueError("unterminated name in ELF string table")
    return data[start:end].decode("utf-8", errors="replace")
