"""Read `catalog.json`: every example kernel and the specializations built from it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Specialization:
    file: str
    entry: str
    generics: tuple[tuple[str, str], ...]

    @property
    def path(self) -> Path:
        return EXAMPLES / self.file

    @property
    def label(self) -> str:
        return f"{self.entry}<{', '.join(f'{k}={v}' for k, v in self.generics)}>"


def specializations() -> list[Specialization]:
    catalog = json.loads((EXAMPLES / "catalog.json").read_text())
    return [
        Specialization(kernel["file"], kernel["entry"], tuple(generics.items()))
        for kernel in catalog["kernels"]
        for generics in kernel["generics"]
    ]
