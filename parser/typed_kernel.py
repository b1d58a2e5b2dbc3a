"""The product of type checking: the entry, its signature, and facts about every node.

Lowering reads only this: the type of each expression, the variable each name refers
to, and the prelude intrinsic (with its ordered arguments) each call resolved to.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field

from parser import ast_nodes as A
from parser.entry_signature import EntrySignature
from parser.spans import Span
from parser.type_eval import ConstValue, GenericValue
from parser.types import SemType

_ids = itertools.count()


@dataclass(frozen=True, eq=False)
class LocalVar:
    """One binding: an entry parameter or a `let` variable (shadowing makes a new one)."""

    name: str
    type: SemType
    span: Span
    mutable: bool = False
    param_index: int | None = None
    id: int = field(default_factory=lambda: next(_ids))


@dataclass(frozen=True)
class ResolvedCall:
    intrinsic: str  # prelude id, e.g. "load_tile_like"
    args: tuple[A.Expr, ...]  # receiver first for method calls


@dataclass(frozen=True)
class TypedKernel:
    function: A.Function
    signature: EntrySignature
    generics: Mapping[str, GenericValue]
    consts: Mapping[str, ConstValue]
    params: tuple[LocalVar, ...]
    expr_types: Mapping[A.Expr, SemType]
    names: Mapping[A.PathExpr, LocalVar]
    lets: Mapping[A.Let, tuple[LocalVar, ...]]
    calls: Mapping[A.Call | A.MethodCall, ResolvedCall]
