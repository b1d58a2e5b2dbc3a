"""Rules only lowering can decide reject the program here: which `Dim` an index came
from, a constant outside a bounded partition's grid, a `with_bounds` bound that cannot be
the axis's tile count. Lowering raises `Rejected`; the pipeline reports its diagnostic."""

from __future__ import annotations

from parser.diagnostics import Diagnostic


class Rejected(Exception):
    """The kernel breaks a rule that depends on lowered values; `diagnostic` says which."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic
