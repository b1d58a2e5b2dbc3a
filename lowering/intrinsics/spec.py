"""The signature every intrinsic lowering has."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lowering.lowered_expr import Lowered
from parser import ast_nodes as A

if TYPE_CHECKING:
    from lowering.lower_kernel import KernelLowering

IntrinsicLowering = Callable[["KernelLowering", A.Call | A.MethodCall, tuple[A.Expr, ...]], Lowered]
