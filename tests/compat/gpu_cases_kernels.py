"""GPU cases for cutile-rs's cutile-kernels (written by the lead's helper; see
gpu_cases_examples.py for the pattern)."""

from __future__ import annotations

from tests.compat.gpu_support import CaseFn

CASES: dict[str, CaseFn] = {}
