"""Inputs for the front-end fuzzer: the example kernels, mutated.

Each input is a function of one `random.Random`: a seed file and one of its entries with
the generics the catalog builds it with, then one to four mutations drawn from `MUTATIONS`
(token deletes, duplicates, swaps and replacements; byte edits; lines spliced in from
another file; deep nesting; huge or malformed literals; stress snippets such as a chain of
device functions that call the next twice) and sometimes odd generics or entry names; a third
of the inputs also carry tensor facts a host could send, and half compile for early launch.
The same seed always gives the same input, so a run only needs to keep seeds.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from random import Random

from parser.specialization import TensorFacts
from service.convert import BASE_ALIGNS, FACT_DIVISORS, MAX_FACT_AXES

EXAMPLES = Path(__file__).resolve().parents[2] / "rust_examples"

_TOKEN = re.compile(
    r"""\s+|//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])'|[A-Za-z_]\w*|\d[\w.]*
    |::|->|=>|\.\.=?|[<>=!&|+\-*/%^]=?|.""",
    re.DOTALL | re.VERBOSE,
)
_ENTRY = re.compile(r"#\[cutile::entry[^\]]*\]\s*(?:pub\s+)?(?:unsafe\s+)?fn\s+(\w+)")
_HEADER = re.compile(r"^//\s*entry:\s*(\S+)\s+generics:(.*)$", re.MULTILINE)  # invalid/*.rs
_GENERIC = re.compile(r"(\w+)=(\[[^\]]*\]|[^\s,]+)")
_TENSOR_PARAM = re.compile(r"(\w+)\s*:\s*&(?:mut\s+)?Tensor")


@dataclass(frozen=True)
class Seed:
    name: str
    text: str
    entries: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]  # (entry, generics)


@dataclass(frozen=True)
class FuzzInput:
    name: str
    text: str
    entry: str
    generics: tuple[tuple[str, str], ...]
    mutations: tuple[str, ...]  # what was done, for the report

    @property
    def early_launch(self) -> bool:
        """Whether the input compiles with `early_launch` (the grid-dependency pass): half of
        them, by the text's length, so that the inputs a seed makes stay the same."""
        return len(self.text) % 2 == 1

    @property
    def facts(self) -> tuple[TensorFacts, ...]:
        """Tensor facts a host could send with the input (a third of the inputs), drawn from
        the text (so that the inputs a seed makes stay the same) within what the service
        accepts: divisors and base alignments of its sets, at most its number of axes, for
        names the text declares as tensors or not at all."""
        rng = Random(self.text)
        if rng.random() >= 1 / 3:
            return ()
        names = sorted(set(_TENSOR_PARAM.findall(self.text)) | {"x", "z", "n", "nope"})
        chosen = rng.sample(names, k=rng.randint(1, min(4, len(names))))
        return tuple(sorted((_random_facts(rng, name) for name in chosen), key=lambda f: f.param))

    def to_json(self) -> str:
        fields = {"entry": self.entry, "generics": dict(self.generics), "file": self.name}
        facts = [dataclasses.asdict(f) for f in self.facts]
        extra = {"early_launch": self.early_launch, "facts": facts}
        extra["mutations"] = list(self.mutations)
        return json.dumps({**fields, **extra}, indent=1)


@functools.cache
def seeds() -> tuple[Seed, ...]:
    """Every example with the specializations the catalog builds, and the invalid
    examples with their entries and no generics."""
    catalog = json.loads((EXAMPLES / "catalog.json").read_text())
    entries: dict[str, list[tuple[str, tuple[tuple[str, str], ...]]]] = {}
    for kernel in catalog["kernels"]:
        for generics in kernel["generics"]:
            entries.setdefault(kernel["file"], []).append(
                (kernel["entry"], tuple(generics.items()))
            )
    found = []
    for path in sorted([*EXAMPLES.glob("*.rs"), *EXAMPLES.glob("invalid/*.rs")]):
        text = path.read_text()
        header = _HEADER.search(text)
        listed = entries.get(path.name) or (
            [(header.group(1), tuple(_GENERIC.findall(header.group(2))))]
            if header
            else [(name, ()) for name in _ENTRY.findall(text)]
        )
        found.append(Seed(path.name, text, tuple(listed) or (("f", ()),)))
    return tuple(found)


@functools.cache
def vocabulary() -> tuple[str, ...]:
    """Every distinct non-space token of the seeds."""
    tokens = {t for s in seeds() for t in _TOKEN.findall(s.text) if not t.isspace()}
    return tuple(sorted(tokens))


def make_input(rng: Random) -> FuzzInput:
    seed = rng.choice(seeds())
    entry, generics = rng.choice(seed.entries)
    text = seed.text
    done: list[str] = []
    for _ in range(rng.choice((1, 1, 1, 1, 2, 2, 3))):
        mutation = rng.choices(MUTATIONS, weights=_WEIGHTS)[0]
        text = mutation(text, rng)
        done.append(mutation.__name__)
    if rng.random() < 0.15:
        generics = _odd_generics(generics, rng)
        done.append("odd_generics")
    if rng.random() < 0.03:
        entry = rng.choice(("", "kernel::", "::", "nope", entry + "x", "kernel::kernel::" + entry))
        done.append("odd_entry")
    return FuzzInput(seed.name, text, entry, generics, tuple(done))


# ----------------------------------------------------------------------------- tokens


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def delete_token(text: str, rng: Random) -> str:
    tokens = _tokens(text)
    del tokens[rng.randrange(len(tokens))]
    return "".join(tokens)


def duplicate_token(text: str, rng: Random) -> str:
    tokens = _tokens(text)
    at = rng.randrange(len(tokens))
    tokens.insert(at, tokens[at])
    return "".join(tokens)


def swap_tokens(text: str, rng: Random) -> str:
    tokens = _tokens(text)
    a, b = rng.randrange(len(tokens)), rng.randrange(len(tokens))
    tokens[a], tokens[b] = tokens[b], tokens[a]
    return "".join(tokens)


def replace_token(text: str, rng: Random) -> str:
    tokens = _tokens(text)
    tokens[rng.randrange(len(tokens))] = rng.choice(vocabulary())
    return "".join(tokens)


_KEYWORDS = frozenset(
    [
        "as",
        "break",
        "const",
        "continue",
        "crate",
        "else",
        "enum",
        "fn",
        "for",
        "if",
        "impl",
        "in",
        "let",
        "loop",
        "match",
        "mod",
        "move",
        "mut",
        "pub",
        "ref",
        "return",
        "self",
        "Self",
        "static",
        "struct",
        "super",
        "trait",
        "true",
        "false",
        "type",
        "unsafe",
        "use",
        "where",
        "while",
    ]
)
_OPERATORS = frozenset(
    [
        "+",
        "-",
        "*",
        "/",
        "%",
        "&",
        "|",
        "^",
        "<<",
        ">>",
        "<",
        ">",
        "<=",
        ">=",
        "==",
        "!=",
        "&&",
        "||",
        "+=",
        "-=",
        "*=",
        "/=",
    ]
)


def _kind_of(token: str) -> str:
    if token[:1].isdigit():
        return "number"
    if token[:1].isalpha() or token[:1] == "_":
        return "keyword" if token in _KEYWORDS else "word"
    if token in _OPERATORS:
        return "operator"
    return "space" if token.isspace() else "punct"


@functools.cache
def _vocabulary_by_kind() -> dict[str, tuple[str, ...]]:
    by_kind: dict[str, list[str]] = {}
    for token in vocabulary():
        by_kind.setdefault(_kind_of(token), []).append(token)
    return {kind: tuple(tokens) for kind, tokens in by_kind.items()}


def replace_same_kind(text: str, rng: Random) -> str:
    """A word for a word, a number for a number, an operator for an operator: mostly
    still valid syntax, so the checker and lowering see it."""
    tokens = _tokens(text)
    kinds = _vocabulary_by_kind()
    places = [i for i, t in enumerate(tokens) if _kind_of(t) in ("word", "number", "operator")]
    at = rng.choice(places)
    tokens[at] = rng.choice(kinds[_kind_of(tokens[at])])
    return "".join(tokens)


def swap_same_kind(text: str, rng: Random) -> str:
    tokens = _tokens(text)
    kind = rng.choice(("word", "number", "operator"))
    places = [i for i, t in enumerate(tokens) if _kind_of(t) == kind]
    if len(places) < 2:
        return text
    a, b = rng.sample(places, 2)
    tokens[a], tokens[b] = tokens[b], tokens[a]
    return "".join(tokens)


def splice_statements(text: str, rng: Random) -> str:
    """A run of `let` or `;`-ended lines from any example, inserted after another
    statement line: whole statements, so the result still parses more often than not."""
    lines = text.splitlines(keepends=True)
    targets = [i + 1 for i, line in enumerate(lines) if line.rstrip().endswith((";", "{"))]
    donors = [
        line
        for seed in seeds()
        for line in seed.text.splitlines(keepends=True)
        if line.strip().startswith("let ") and line.rstrip().endswith(";")
    ]
    if not targets or not donors:
        return text
    at = rng.choice(targets)
    return "".join(lines[:at] + rng.sample(donors, rng.randint(1, 3)) + lines[at:])


def insert_token(text: str, rng: Random) -> str:
    tokens = _tokens(text)
    tokens.insert(rng.randrange(len(tokens) + 1), rng.choice(vocabulary()) + " ")
    return "".join(tokens)


# ----------------------------------------------------------------------------- bytes and lines


def edit_bytes(text: str, rng: Random) -> str:
    at = rng.randrange(len(text) + 1)
    roll = rng.random()
    if roll < 0.4:
        return text[:at] + text[at + rng.randint(1, 16) :]
    if roll < 0.7:
        start = rng.randrange(len(text))
        return text[:at] + text[start : start + rng.randint(1, 64)] + text[at:]
    junk = "".join(
        chr(rng.choice((rng.randrange(0x20, 0x7F), rng.randrange(0x110000 // 64))))
        for _ in range(rng.randint(1, 8))
    )
    junk = junk.encode("utf-8", "replace").decode("utf-8", "replace")
    return text[:at] + junk + text[at:]


def splice_lines(text: str, rng: Random) -> str:
    lines = text.splitlines(keepends=True)
    donor = rng.choice(seeds()).text.splitlines(keepends=True)
    at = rng.randrange(len(lines) + 1)
    drop = rng.choice((0, 0, 1, 2, 5))
    start = rng.randrange(len(donor))
    return "".join(lines[:at] + donor[start : start + rng.randint(1, 12)] + lines[at + drop :])


# ----------------------------------------------------------------------------- stress

_NESTS = (
    ("(", ")"),
    ("[", "]"),
    ("{", "}"),
    ("{[(<", ">)]}"),
    ("-", ""),
    ("!", ""),
    ("&", ""),
    ("x + ", ""),
    ("if a { 1 } else ", ""),
    ("f(", ")"),
    ("a.b(", ")"),
    ("|x| ", ""),
    ("<", ">"),
    ("Tile<", ">"),
    ("-(", ")"),
    ("{ let a = ", "; a }"),
    (">&", ""),
    ("[0; ", "]"),
)
_DEPTHS = (5, 50, 99, 150, 199, 200, 201, 300, 511, 512, 513, 1000, 3000, 20_000)


def deep_nesting(text: str, rng: Random) -> str:
    opener, closer = rng.choice(_NESTS)
    depth = rng.choice(_DEPTHS)
    inner = rng.choice(("1", "x", "t", "", "1.0f32"))
    closers = closer * depth if rng.random() < 0.8 else ""
    return _insert_at_token(text, rng, opener * depth + inner + closers)


_LITERALS = (
    "9" * 4400,
    "9" * 40,
    "340282366920938463463374607431768211456",
    "0x" + "f" * 40,
    "1e400",
    "1e308",
    "1e39f32",
    "70000.0f16",
    "65520.0f16",
    "1.0f322",
    "1.5e-3_f32",
    "1e-400",
    "2147483648",
    "-2147483649",
    "2147483647",
    "4294967296",
    "0.0",
    "-0.0",
    "0b102",
    "007",
    "1_u8",
    "300u8",
    "1i128",
    "1.",
    "0x1f32",
    "1e_5",
    "t.0" + "0" * 4400 + "1",
)


def huge_literal(text: str, rng: Random) -> str:
    tokens = _tokens(text)
    numbers = [i for i, t in enumerate(tokens) if t[:1].isdigit()]
    literal = rng.choice(_LITERALS)
    if not numbers:
        return _insert_at_token(text, rng, literal)
    tokens[rng.choice(numbers)] = literal
    return "".join(tokens)


def stress_snippet(text: str, rng: Random) -> str:
    """A device-function chain (each calls the next twice), many items, or a long body,
    placed at the top of the first kernel module."""
    count = rng.choice((5, 16, 17, 30, 200))
    roll = rng.random()
    if roll < 0.5:
        snippet = (
            "".join(
                f"fn d{i}(x: i32) -> i32 {{ d{i + 1}(x) + d{i + 1}(x) }}\n" for i in range(count)
            )
            + f"fn d{count}(x: i32) -> i32 {{ x }}\n"
        )
        text = _into_entry_body(text, "let _d = d0(1);")
    elif roll < 0.8:
        snippet = "".join(f"#[cutile::entry()]\nfn e{i}() {{}}\n" for i in range(count * 10))
    else:
        snippet = "".join(f"const C{i}: i32 = {i};\n" for i in range(count * 10))
    marker = "use cutile::core::*;"
    at = text.find(marker)
    if at < 0:
        return snippet + text
    at += len(marker)
    return text[:at] + "\n" + snippet + text[at:]


def _into_entry_body(text: str, statement: str) -> str:
    match = re.search(r"#\[cutile::entry[^\]]*\][^{]*\{", text)
    if match is None:
        return text
    return text[: match.end()] + statement + text[match.end() :]


def _insert_at_token(text: str, rng: Random, piece: str) -> str:
    tokens = _tokens(text)
    tokens.insert(rng.randrange(len(tokens) + 1), piece)
    return "".join(tokens)


_GENERIC_VALUES = (
    "0",
    "-1",
    "1",
    "3",
    "7",
    "64",
    "128",
    "4096",
    "2147483647",
    "2147483648",
    "-2147483648",
    "9" * 5000,
    "f16",
    "bf16",
    "f32",
    "f64",
    "i32",
    "u8",
    "bool",
    "true",
    "f8e4m3fn",
    "tf32",
    "[1, 2]",
    "[64, 64]",
    "[]",
    "{[1]}",
    "x",
    "",
    " ",
    "1e3",
    "0x10",
    "1_0",
    "[2147483648]",
)


def _odd_generics(
    generics: tuple[tuple[str, str], ...], rng: Random
) -> tuple[tuple[str, str], ...]:
    pairs = list(generics)
    roll = rng.random()
    if pairs and roll < 0.6:
        at = rng.randrange(len(pairs))
        pairs[at] = (pairs[at][0], rng.choice(_GENERIC_VALUES))
    elif pairs and roll < 0.8:
        del pairs[rng.randrange(len(pairs))]
    else:
        pairs.append((rng.choice(("B", "Z", "E", "", "BM")), rng.choice(_GENERIC_VALUES)))
    return tuple(pairs)


MUTATIONS: tuple[Callable[[str, Random], str], ...] = (
    replace_same_kind,
    swap_same_kind,
    splice_statements,
    delete_token,
    duplicate_token,
    swap_tokens,
    replace_token,
    insert_token,
    edit_bytes,
    splice_lines,
    deep_nesting,
    huge_literal,
    stress_snippet,
)
_WEIGHTS = (30, 8, 8, 4, 3, 3, 4, 3, 3, 3, 3, 5, 1)


def _random_facts(rng: Random, name: str) -> TensorFacts:
    axes = rng.randint(0, MAX_FACT_AXES)
    divisors = sorted(FACT_DIVISORS)
    dims = tuple(rng.choice(divisors) for _ in range(rng.randint(0, axes)))
    strides = tuple(rng.choice(divisors) for _ in range(rng.randint(0, axes)))
    align = rng.choice(sorted(BASE_ALIGNS))
    return TensorFacts(name, dims, strides, base_align=align, unit_last_stride=rng.random() < 0.7)
