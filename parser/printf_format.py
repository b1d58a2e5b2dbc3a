"""Rust string literals and `cuda_tile_print!` format strings, and their printf form.

Shared by the type rules of the debug macros (which reject what cannot be printed) and the
lowering of `cuda_tile_print!` (which writes the Tile IR `print_tko` format).
"""

from __future__ import annotations

from parser.types import Elem

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", "0": "\0", "'": "'", '"': '"'}


def unescape(raw: str) -> str | None:
    """The value of a Rust string literal's body as written (`\\n`, `\\x41`, `\\u{..}`,
    line continuations); None for a malformed escape."""
    out: list[str] = []
    pos = 0
    while pos < len(raw):
        char = raw[pos]
        if char != "\\":
            out.append(char)
            pos += 1
            continue
        kind = raw[pos + 1 : pos + 2]
        if kind in _ESCAPES:
            out.append(_ESCAPES[kind])
            pos += 2
        elif kind == "x" and _is_hex(raw[pos + 2 : pos + 4], 2):
            out.append(chr(int(raw[pos + 2 : pos + 4], 16)))
            pos += 4
        elif kind == "u" and raw[pos + 2 : pos + 3] == "{" and "}" in raw[pos + 3 :]:
            end = raw.index("}", pos + 3)
            digits = raw[pos + 3 : end].replace("_", "")
            if not _is_hex(digits, None) or int(digits, 16) > 0x10FFFF:
                return None
            out.append(chr(int(digits, 16)))
            pos = end + 1
        elif kind in ("\n", "\r"):  # `\` at the end of a line skips the leading whitespace
            pos += 2
            while pos < len(raw) and raw[pos] in " \t\r\n":
                pos += 1
        else:
            return None
    return "".join(out)


def _is_hex(text: str, length: int | None) -> bool:
    ok = bool(text) and all(c in "0123456789abcdefABCDEF" for c in text)
    return ok and (length is None or len(text) == length)


FormatPieces = list[str | None]  # literal text, None for a `{}` placeholder


def format_pieces(raw: str) -> FormatPieces | str:
    """A `cuda_tile_print!` format string split into text and `{}` placeholders, or the
    reason it cannot be printed (`{:?}`, `{0}`, a lone brace, a bad escape)."""
    text = unescape(raw)
    if text is None:
        return "a malformed escape sequence"
    pieces: FormatPieces = []
    literal: list[str] = []
    pos = 0
    while pos < len(text):
        pair = text[pos : pos + 2]
        if pair in ("{{", "}}"):
            literal.append(pair[0])
            pos += 2
        elif pair == "{}":
            pieces.extend(("".join(literal), None))
            literal = []
            pos += 2
        elif text[pos] == "{":
            end = text.find("}", pos)
            spec = text[pos : end + 1] if end >= 0 else text[pos:]
            return f"`{spec}` (only plain `{{}}` placeholders are supported)"
        elif text[pos] == "}":
            return "an unmatched `}` (write `}}` for a brace)"
        else:
            literal.append(text[pos])
            pos += 1
    pieces.append("".join(literal))
    return pieces


def printf_format(pieces: FormatPieces, elems: list[Elem]) -> str:
    """The Tile IR `print_tko` format: `%` escaped as `%%`, each placeholder the printf
    conversion of its argument's element type (see `conversion`)."""
    out: list[str] = []
    args = iter(elems)
    for piece in pieces:
        out.append(conversion(next(args)) if piece is None else piece.replace("%", "%%"))
    return "".join(out)


def conversion(elem: Elem) -> str:
    """What Rust's `{}` prints, in printf: `%f` for floats, `%i` for bool (0/1) and
    signed integers, `%u` for unsigned ones; 64-bit values need `ll` (plain `%i` prints
    their low 32 bits). u8/u16 arrive sign-extended (200u8 prints as 4294967240 under
    `%u`, and `%hhu` prints garbage), so lowering zero-extends them to i32 first
    (`widened_for_print`). Measured on an H200."""
    if elem.is_float:
        return "%f"
    if elem.bits == 64:
        return "%lli" if elem.is_signed else "%llu"
    return "%i" if elem.is_signed or elem is Elem.BOOL else "%u"


def widened_for_print(elem: Elem) -> bool:
    """Whether a print argument is zero-extended to i32 first (u8, u16)."""
    return not elem.is_signed and elem is not Elem.BOOL and elem.bits < 32
