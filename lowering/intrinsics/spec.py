"""The signature every intrinsic lowering has."""

from __future__ import annotations

from collections.abc import Callable

from lowering.lowered_expr import Lowered
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A

IntrinsicLowering = Callable[
    ["LoweringContext", A.Call | A.MethodCall, tuple[A.Expr, ...]], Lowered
]
