"""Hostile compile requests: the catalog's requests (rust_examples/catalog.json, each with its
example file as the source) mutated field by field as protobuf messages
(tests/fuzz/proto_mutations.py): entry names, generics (keys and values), targets, options,
tensor facts, file names, extra or missing source files.

Input `i` of seed `S` is made from `Random(f"{S}:{i}")`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from random import Random

from protos.generated.cutile.compile.v1 import compile_pb2
from tests.fuzz.proto_mutations import mutate_message

WORDS = (
    "",
    "add",
    "kernel::add",
    "gemm",
    "::",
    "B",
    "E",
    "BM",
    "128",
    "0",
    "-1",
    "99999999999999999999",
    "f16",
    "bf16",
    "f8e4m3fn",
    "[8, 1]",
    "[",
    "sm_80",
    "sm_90",
    "sm_100",
    "sm_120",
    "x86_64",
    "aarch64",
    "riscv64",
    "z",
    "x",
    "kernel.rs",
    "../kernel.rs",
    "/etc/passwd",
    "a\x00b",
    "\u00fcber",
    "\U0001f600",
    "x" * 5000,
    "#[cutile::module]\nmod kernel {}\n",
)


@dataclass(frozen=True)
class RequestInput:
    seed: str
    request: compile_pb2.CompileRequest
    edits: tuple[str, ...]


@functools.cache
def seed_requests() -> tuple[tuple[str, bytes], ...]:
    """(label, serialized request) of every catalog specialization, built once."""
    from rust_examples.catalog import specializations

    seeds = []
    for spec in specializations():
        request = compile_pb2.CompileRequest(entry=spec.entry, target="sm_90")
        request.sources.add(name=spec.file, text=spec.path.read_text())
        request.generics.update(dict(spec.generics))
        seeds.append((spec.label, request.SerializeToString()))
    return tuple(seeds)


def make_input(seed: int | str, index: int) -> RequestInput:
    """Input `index` of the run seeded `seed`."""
    return input_from(Random(f"{seed}:{index}"))


def input_from(rng: Random) -> RequestInput:
    label, blob = rng.choice(seed_requests())
    request = compile_pb2.CompileRequest.FromString(blob)
    edits = tuple(mutate_message(request, rng, WORDS) for _ in range(rng.choice((0, 1, 1, 2, 3))))
    return RequestInput(label, request, edits)


def describe(case: RequestInput) -> str:
    return f"{case.seed}: {'; '.join(case.edits) or 'unmutated'}"
