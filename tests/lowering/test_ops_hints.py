"""Per-op optimization hints on `load_view_tko` / `store_view_tko` (latency, allow_tma)."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable

import pytest

from lowering.bytecode.tables import BytecodeError
from lowering.bytecode.writer import write_bytecode
from lowering.ir.attributes import LoadStoreHints
from lowering.ir.core import Module
from lowering.ir.ops_memory import LoadViewTko, StoreViewTko
from lowering.ir.printer import print_module
from lowering.ir.verify import verify_module
from lowering.tileiras import Tileiras

LOAD_HINTS = (LoadStoreHints("sm_90", latency=3), LoadStoreHints("default", allow_tma=False))
STORE_HINTS = (LoadStoreHints("sm_100", latency=10, allow_tma=True),)

# sha256 of the sample vadd kernel, written before per-op hints existed: a module without
# hints must not change by a byte (update only for a deliberate format change).
VADD_SHA256 = {
    (13, 3): "86c799f2ad72ba25a3814933205c5689937b3797f86b52bf139545c51efeb5a1",
    (13, 4): "da96ca551866f1878562b91c625b51039507365e124729cca6a64b5b616a9006",
}


def with_hints(
    module: Module,
    load: tuple[LoadStoreHints, ...] = LOAD_HINTS,
    store: tuple[LoadStoreHints, ...] = STORE_HINTS,
) -> Module:
    fn = module.functions[0]
    ops = tuple(
        dataclasses.replace(op, hints=load if isinstance(op, LoadViewTko) else store)
        if isinstance(op, (LoadViewTko, StoreViewTko))
        else op
        for op in fn.body.ops
    )
    return Module((dataclasses.replace(fn, body=dataclasses.replace(fn.body, ops=ops)),))


@pytest.mark.parametrize("version", sorted(VADD_SHA256))
def test_no_hints_is_byte_identical(vadd_module: Module, version: tuple[int, int]) -> None:
    digest = hashlib.sha256(write_bytecode(vadd_module, version)).hexdigest()
    assert digest == VADD_SHA256[version]
    assert write_bytecode(with_hints(vadd_module, (), ()), version) == write_bytecode(
        vadd_module, version
    )


@pytest.mark.tileiras
@pytest.mark.parametrize("version", [(13, 3), (13, 4)])
def test_hints_disassemble_and_assemble(
    vadd_module: Module,
    version: tuple[int, int],
    disassemble: Callable[[bytes], str],
    tileiras: Tileiras,
) -> None:
    module = with_hints(vadd_module)
    assert verify_module(module) == []
    text = disassemble(write_bytecode(module, version))
    load = "optimization_hints = <default = {allow_tma = false}, sm_90 = {latency = 3}>"
    store = "optimization_hints = <sm_100 = {allow_tma = true, latency = 10}>"
    assert text.count(load) == 2 and text.count(store) == 1, text
    for sm in ("sm_90", "sm_100"):
        tileiras.assemble(write_bytecode(module, version), arch=sm)


@pytest.mark.tileiras
def test_default_key_needs_13_3(vadd_module: Module, tileiras: Tileiras) -> None:
    with pytest.raises(BytecodeError, match=r"load_view_tko: 'default' hints needs bytecode 13.3"):
        write_bytecode(with_hints(vadd_module), (13, 2))
    arch_only = with_hints(vadd_module, load=(LoadStoreHints("sm_90", latency=2),))
    tileiras.assemble(write_bytecode(arch_only, (13, 2)), arch="sm_90")


def test_printed_form(vadd_module: Module) -> None:
    text = print_module(with_hints(vadd_module))
    assert (
        "{ordering = weak, hints = [sm_90 = {latency = 3}, default = {allow_tma = false}]}"
    ) in text
    assert "{ordering = weak, hints = [sm_100 = {allow_tma = true, latency = 10}]}" in text
    assert "hints" not in print_module(vadd_module)


def test_hint_rules(vadd_module: Module) -> None:
    bad = with_hints(
        vadd_module,
        load=(LoadStoreHints("sm_90", latency=0), LoadStoreHints("sm_90", latency=11)),
        store=(),
    )
    errors = verify_module(bad)
    assert errors.count("@vadd_ir: load_view_tko: sm_90: latency must be in 1..10, got 0") == 2
    assert errors.count("@vadd_ir: load_view_tko: sm_90: latency must be in 1..10, got 11") == 2
    assert any("hints name an arch more than once" in e for e in errors)
