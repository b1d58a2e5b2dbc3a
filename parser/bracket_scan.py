"""A linear scan of the raw text that runs before tree-sitter: bracket depth and literals.

tree-sitter's C code recurses where a Python limit cannot reach it. Measured with
tree-sitter 0.26 and tree-sitter-rust 0.24 on an 8 MiB stack: `{[(<` repeated 87,300 times
(350 KB) segfaults in `stack_node_release`, which recurses once per merged version of the
GLR parse stack; `{(<` and `{[<` crash at the same count of repeats, while a million
repeats of any one opener alone (`(`, `{`, `a<`, `<`), of operator chains (`x + `, `- `,
`&`) or of `else if` parse fine. The recursion follows the parse stack, which grows with
unclosed brackets; so a bound on bracket depth, checked before tree-sitter sees the text,
bounds the recursion. The pre-scan also finds what would make its own count wrong:
literals that never end.

What counts as a level:
- `{`, `[` and `(` open a level; `}`, `]`, `)` close it when they match the innermost open
  bracket (a mismatched closer closes nothing, so it can never hide an opener).
- `<` is a comparison or opens generic arguments, which the lexer cannot tell apart. Each
  bracket level (and the top level) counts at most one pending `<`, cleared by a `>`: a
  chain of comparisons never adds up, while the crashing shapes, which put a `<` inside
  each bracket, count fully. Generic lists nested directly in each other (`A<B<C>>`) count
  once; that is safe because `<` nesting alone never crashed (see above).
  So the count is at most twice the bracket depth plus one.
- Comments (`//`, nested `/* */`), strings (`"..."`, `b"..."`, raw `r#"..."#`) and char
  literals (`'{'`) are skipped: tree-sitter reads each as one token. A string, raw string
  or block comment that never ends is reported as rustc does, since tree-sitter's error
  recovery would read its contents as code (a lone `"` before 350 KB of brackets crashes
  it too).

`MAX_BRACKET_DEPTH` (512) is far above real code and far below a crash: a crashing input
counts over 260,000 levels (500x the limit), and a source that parses with more than 512
levels has more than 200 bracket levels, which `MAX_NESTING_DEPTH` rejects after parsing
anyway. The scan is one pass: a literal either ends, and the scan goes on after it, or
never does, and the scan stops; so each character is looked at a bounded number of times.
"""

from __future__ import annotations

import re

from parser import messages
from parser.diagnostics import Diagnostic
from parser.spans import SourceFile, Span

MAX_BRACKET_DEPTH = 512

_LITERAL = re.compile(
    r"""
      (?P<line>//)
    | (?P<block>/\*)
    | (?P<string>")
    | (?P<char>'(?:[^'\\\n]|\\(?:u\{[0-9a-fA-F_]{1,8}\}|x[0-9a-fA-F]{2}|[^\n]))')
    """,
    re.VERBOSE,
)
_STRING_REST = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BLOCK_DELIMITER = re.compile(r"/\*|\*/")
_ARROW = re.compile(r"->|=>")  # their `>` closes nothing
_BRACKET = re.compile(r"[{}\[\]()<>]")
_NOT_BRACKET = re.compile(r"[^{}\[\]()<>]+")
_OPENER_OF = {"}": "{", "]": "[", ")": "("}


class _Scan:
    """One left-to-right pass: literals are skipped, the code between them is counted."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stack: list[str] = []  # the open brackets
        self.angles = [False]  # a `<` pending on the top level and on each open bracket
        self.depth = 0  # brackets open plus pending `<`s

    def run(self) -> tuple[str, int] | None:
        """("deep", offset) at the opener past the limit, ("string"|"raw"|"block", offset)
        at a literal that never ends, or None."""
        pos = 0
        while (literal := _LITERAL.search(self.text, pos)) is not None:
            too_deep = self._count(pos, literal.start())
            if too_deep is not None:
                return "deep", too_deep
            end = self._literal_end(literal)
            if end is None:
                return self._unterminated(literal)
            pos = end
        too_deep = self._count(pos, len(self.text))
        return None if too_deep is None else ("deep", too_deep)

    def _unterminated(self, literal: re.Match[str]) -> tuple[str, int]:
        raw = _raw_prefix(self.text, literal.start())
        if literal.lastgroup == "string" and raw is not None:
            return "raw", raw[0]
        return str(literal.lastgroup), literal.start()

    def _count(self, start: int, end: int) -> int | None:
        """Apply the brackets of the code in [start, end); the offset of the opener that
        passes the limit, if one does."""
        code = self.text[start:end]
        brackets = _NOT_BRACKET.sub("", code)
        if ">" in brackets:
            code = _ARROW.sub("  ", code)
            brackets = _NOT_BRACKET.sub("", code)
        index = self._apply(brackets) if brackets else None
        if index is None:
            return None
        nth = next(m for i, m in enumerate(_BRACKET.finditer(code)) if i == index)
        return start + nth.start()

    def _apply(self, brackets: str) -> int | None:
        stack, angles, depth = self.stack, self.angles, self.depth
        for index, char in enumerate(brackets):
            if char in "{[(":
                stack.append(char)
                angles.append(False)
                depth += 1
            elif char == "<":
                depth += not angles[-1]
                angles[-1] = True
            elif char == ">":
                depth -= angles[-1]
                angles[-1] = False
            elif stack and stack[-1] == _OPENER_OF[char]:
                stack.pop()
                depth -= 1 + angles.pop()
            if depth > MAX_BRACKET_DEPTH:
                return index
        self.depth = depth
        return None

    def _literal_end(self, match: re.Match[str]) -> int | None:
        """Where the comment or literal that `match` starts ends (None: it never does)."""
        kind, start = match.lastgroup, match.end()
        if kind == "char":
            return start
        if kind == "line":
            newline = self.text.find("\n", start)
            return len(self.text) if newline < 0 else newline
        if kind == "string":
            return self._string_end(match.start())
        return _block_comment_end(self.text, start)

    def _string_end(self, quote: int) -> int | None:
        raw = _raw_prefix(self.text, quote)
        if raw is not None:
            hashes = quote - raw[1]
            close = self.text.find('"' + "#" * hashes, quote + 1)
            return None if close < 0 else close + 1 + hashes
        rest = _STRING_REST.match(self.text, quote + 1)
        return None if rest is None else rest.end()


def _raw_prefix(text: str, quote: int) -> tuple[int, int] | None:
    """For the `"` at `quote`: where its `r`/`br` prefix and its `#`s start, when it opens a
    raw string (an `r` that ends an identifier, as in `bar"`, does not)."""
    hashes = quote
    while hashes > 0 and text[hashes - 1] == "#":
        hashes -= 1
    start = hashes - 1
    if start < 0 or text[start] != "r":
        return None
    if start > 0 and text[start - 1] == "b":
        start -= 1
    if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        return None
    return start, hashes


def _block_comment_end(text: str, start: int) -> int | None:
    nesting = 1
    pos = start
    while (delimiter := _BLOCK_DELIMITER.search(text, pos)) is not None:
        nesting += 1 if delimiter.group() == "/*" else -1
        pos = delimiter.end()
        if nesting == 0:
            return pos
    return None


_UNTERMINATED = {
    "string": messages.UNTERMINATED_STRING,
    "raw": messages.UNTERMINATED_RAW_STRING,
    "block": messages.UNTERMINATED_BLOCK_COMMENT,
}


def scan_brackets(source: SourceFile) -> Diagnostic | None:
    """The first reason not to hand `source` to tree-sitter, as a diagnostic, or None."""
    found = _Scan(source.text).run()
    if found is None:
        return None
    kind, offset = found
    start = len(source.text[:offset].encode("utf-8"))
    if kind == "deep":
        return messages.NESTED_TOO_DEEP.at(Span(source, start, start + 1), limit=MAX_BRACKET_DEPTH)
    width = 2 if kind == "block" else 1
    return _UNTERMINATED[kind].at(Span(source, start, start + width))
