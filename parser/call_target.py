"""What a call inlines: a device function, method or associated function with its
arguments (`CallTarget`), or a closure argument with the scopes it captured (`ClosureSite`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from parser import ast_nodes as A
from parser.type_eval import TypeResolver
from parser.typed_kernel import LocalVar
from parser.types import GenericValue, SemType


@dataclass(frozen=True)
class ClosureSite:
    """A closure argument, ready to be inlined where it is called: as a function of its
    parameters whose body is the closure's, and the scopes it captures."""

    function: A.Function
    captured: list[dict[str, LocalVar]]
    resolver: TypeResolver


@dataclass(frozen=True)
class CallTarget:
    """A function to inline at a call: a device function, or a method or associated
    function of a module `impl` (then `args` starts with the receiver where the function
    takes `self`, `self_type` is what `Self` names, and `generics` holds the impl's)."""

    function: A.Function
    args: tuple[A.Expr, ...]
    self_type: SemType | None = None
    generics: dict[str, GenericValue] = field(default_factory=dict)
    known: dict[int, SemType] = field(default_factory=dict)  # argument types already found
