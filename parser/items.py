"""The compile-time items of the linked kernel modules: structs, type aliases, traits and
`impl` blocks, looked up by name.

Like functions, these resolve by unqualified identifier across every linked kernel module
(a nested `mod inner` contributes its items too). None of them exists at run time: a
struct value is its fields, a method or associated function is inlined at each call, an
associated const is folded where it is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from parser import ast_nodes as A


@dataclass(frozen=True)
class Method:
    """A function found for a type: in an `impl` of it, or a trait's default method."""

    impl: A.ImplBlock
    function: A.Function


@dataclass
class ItemIndex:
    modules: tuple[A.KernelModule, ...]
    structs: dict[str, A.StructDef] = field(default_factory=dict)
    aliases: dict[str, A.TypeAlias] = field(default_factory=dict)
    traits: dict[str, A.TraitDef] = field(default_factory=dict)
    impls: tuple[A.ImplBlock, ...] = ()

    def __post_init__(self) -> None:
        for module in self.modules:
            for struct in module.structs:
                self.structs.setdefault(struct.name, struct)
            for alias in module.aliases:
                self.aliases.setdefault(alias.name, alias)
            for trait in module.traits:
                self.traits.setdefault(trait.name, trait)
        self.impls = tuple(impl for m in self.modules for impl in m.impls)

    def is_type_name(self, name: str) -> bool:
        return name in self.structs or name in self.aliases

    def functions_of(self, impl: A.ImplBlock, name: str) -> A.Function | None:
        """`impl`'s function `name`, or its trait's default method of that name."""
        found = next((f for f in impl.functions if f.name == name), None)
        if found is not None or impl.trait is None:
            return found
        trait = self.traits.get(impl.trait)
        if trait is None:
            return None
        return next((f for f in trait.functions if f.name == name), None)

    def const_of(self, impl: A.ImplBlock, name: str) -> A.ConstItem | None:
        """`impl`'s associated const `name`, or its trait's default value."""
        found = next((c for c in impl.consts if c.name == name), None)
        if found is not None or impl.trait is None:
            return found
        trait = self.traits.get(impl.trait)
        if trait is None:
            return None
        return next((c for c in trait.consts if c.name == name), None)

    def impls_with_function(self, name: str) -> list[A.ImplBlock]:
        return [impl for impl in self.impls if self.functions_of(impl, name) is not None]

    def impls_with_const(self, name: str) -> list[A.ImplBlock]:
        return [impl for impl in self.impls if self.const_of(impl, name) is not None]
