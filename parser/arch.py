"""The target GPU architectures (`arch`): the one list the compiler accepts, and its number.

An arch is spelled as tileiras's `--gpu-name` spells it (`sm_90`); the parser checks
`optimization_hints` keys and element types against it, the lowering assembles for it and the
service advertises it.
"""

from __future__ import annotations

ARCHS = (
    "sm_80",
    "sm_86",
    "sm_87",
    "sm_88",
    "sm_89",
    "sm_90",
    "sm_100",
    "sm_103",
    "sm_110",
    "sm_120",
    "sm_121",
)
DEFAULT_ARCH = "sm_90"


def arch_number(arch: str) -> int | None:
    """`sm_90` -> 90 (None for a spelling without a number)."""
    digits = arch.removeprefix("sm_").rstrip("af")
    return int(digits) if digits.isdigit() else None
