"""`lowering.grid_dependency`: every entry waits for the grids before it and lets its
dependents launch (last, or first in an entry with tensor-core ops), and no memory access
can happen before that wait (each one is ordered after it through tokens) when compiled
with `early_launch=True` (the default); with `early_launch=False` the kernel stays as it
was. The real tileiras places `griddepcontrol.wait` before
the first global access."""

from __future__ import annotations

import re

import pytest

from lowering.grid_dependency import MEMORY_ACCESSES, TENSOR_CORE_OPS
from lowering.ir.core import Block, Value, walk
from lowering.ir.ops_control import For
from lowering.ir.ops_core import GdcLaunchDependentsTko, GdcWaitTko, MakeToken, Return
from lowering.ir.verify import verify_module
from lowering.pipeline import CompileRequest, CompileResult, Stage, compile_kernel
from lowering.tileiras import Tileiras
from parser.render import render
from parser.spans import SourceFile
from rust_examples.catalog import specializations

KERNEL = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    fn f(out: &mut Tensor<f32, { [1, 64] }>, x: &Tensor<f32, { [-1, 64] }>, n: i32) {
        let xp = x.partition(const_shape![1, 64]);
        let mut acc: Tile<f32, { [1, 64] }> = constant(0.0f32, const_shape![1, 64]);
        for p in 0i32..n {
            if p % 2i32 == 0i32 { acc = acc + xp.load([p, 0i32]); }
        }
        out.store(acc);
    }
}
"""


def compiled(
    source: str = KERNEL, entry: str = "f", stop_after: Stage = Stage.IR, **options: object
) -> CompileResult:
    options.setdefault("early_launch", True)
    request = CompileRequest((SourceFile("k.rs", source),), entry, **options)  # type: ignore[arg-type]
    result = compile_kernel(request, stop_after=stop_after)
    assert result.ok, [render(d) for d in result.diagnostics]
    return result


def ordered_after_the_wait(body: Block) -> list[str]:
    """Problems: the entry does not start with the wait and end with the trigger (right before
    its `return`; with tensor-core ops: the trigger, then the wait, at the top), a
    `make_token` is left, or a memory access has no token (only accesses, their tokens and
    block arguments carry tokens, so every chain starts at the wait)."""
    problems = []
    first, second, *_, trigger, last = body.ops
    if any(isinstance(op, TENSOR_CORE_OPS) for op in walk(body)):
        if not (isinstance(first, GdcLaunchDependentsTko) and isinstance(second, GdcWaitTko)):
            problems.append(f"starts with {first.NAME}, {second.NAME}")
    else:
        if not isinstance(first, GdcWaitTko):
            problems.append(f"starts with {first.NAME}")
        if not (isinstance(trigger, GdcLaunchDependentsTko) and isinstance(last, Return)):
            problems.append(f"ends with {trigger.NAME}, {last.NAME}")
    triggers = [op for op in walk(body) if isinstance(op, GdcLaunchDependentsTko)]
    if len(triggers) != 1:
        problems.append(f"{len(triggers)} triggers")
    for op in walk(body):
        if isinstance(op, MakeToken):
            problems.append("a make_token is left")
        if isinstance(op, MEMORY_ACCESSES) and op.token is None:
            problems.append(f"{op.NAME} has no token")
    return problems


def test_the_entry_waits_before_every_access() -> None:
    result = compiled()
    assert result.ir is not None
    (function,) = result.ir.functions
    assert ordered_after_the_wait(function.body) == []
    waited = function.body.ops[0].results[0]
    accesses = [op for op in walk(function.body) if isinstance(op, MEMORY_ACCESSES)]
    load, store = accesses
    assert load.token == waited  # a shared input's load had no token
    # the output's chain started at its make_token, then went through the loop
    loop = next(op for op in function.body.ops if isinstance(op, For))
    assert store.token in loop.results and waited in loop.operand_values
    assert verify_module(result.ir) == []
    assert result.contract is None  # (stopped at IR)


def test_plain_launch_leaves_the_kernel_alone() -> None:
    assert CompileRequest((), "f").early_launch  # the default
    result = compiled(early_launch=False)
    assert result.ir is not None
    ops = list(walk(result.ir.functions[0].body))
    assert not any(isinstance(op, (GdcWaitTko, GdcLaunchDependentsTko)) for op in ops)
    assert any(isinstance(op, MakeToken) for op in ops)
    load = next(op for op in ops if isinstance(op, MEMORY_ACCESSES))
    assert load.token is None


@pytest.mark.parametrize("spec", specializations(), ids=lambda s: s.label)
def test_every_example_kernel_waits_before_every_access(spec: object) -> None:
    """Loads, stores, pointer accesses and atomics in loops and branches, prints, in-kernel
    tensors: in every kernel of rust_examples, nothing touches memory before the wait."""
    request = CompileRequest(
        (SourceFile(spec.path.name, spec.path.read_text()),),  # type: ignore[attr-defined]
        spec.entry,  # type: ignore[attr-defined]
        spec.generics,  # type: ignore[attr-defined]
        early_launch=True,
    )
    result = compile_kernel(request, stop_after=Stage.IR)
    assert result.ok and result.ir is not None
    for function in result.ir.functions:
        assert ordered_after_the_wait(function.body) == [], function.name
    assert verify_module(result.ir) == []


def _tokens_defined_once(body: Block) -> bool:
    seen: set[int] = set()
    for op in walk(body):
        for value in op.results:
            if value.id in seen:
                return False
            seen.add(value.id)
    return True


def test_new_values_do_not_collide_with_old_ones() -> None:
    result = compiled()
    assert result.ir is not None
    body = result.ir.functions[0].body
    assert _tokens_defined_once(body)
    params = {v.id for v in result.ir.functions[0].params}
    first: Value = body.ops[0].results[0]
    assert first.id not in params


@pytest.fixture
def tileiras_13_4(tileiras: Tileiras) -> Tileiras:
    """The real tileiras, when it reads bytecode 13.4 (the gdc ops)."""
    if (13, 4) not in tileiras.bytecode_versions:
        pytest.skip("this tileiras does not read bytecode 13.4")
    return tileiras


def test_the_contract_says_whether_the_kernel_waits(tileiras_13_4: Tileiras) -> None:
    early = compiled(stop_after=Stage.CUBIN).contract
    assert early is not None and early.waits_for_prior_grids
    assert early.bytecode_version == "13.4"  # the first with the gdc ops
    plain = compiled(stop_after=Stage.CUBIN, early_launch=False).contract
    assert plain is not None and not plain.waits_for_prior_grids
    assert plain.bytecode_version == "13.3"


def test_below_sm_90_an_early_launch_request_gives_a_plain_kernel(tileiras: Tileiras) -> None:
    """Dependent launches exist from sm_90 (tileiras drops the gdc ops below): the kernel
    stays plain, and its contract says it does not wait."""
    result = compiled(stop_after=Stage.CUBIN, arch="sm_80")
    assert result.contract is not None and not result.contract.waits_for_prior_grids
    assert result.contract.bytecode_version == "13.3"
    assert not any(isinstance(op, GdcWaitTko) for op in walk(result.ir.functions[0].body))  # type: ignore[union-attr]


def test_the_assembled_kernel_waits_before_its_first_global_access(
    tileiras_13_4: Tileiras,
) -> None:
    """In the PTX the cubin carries (`lineinfo`): `griddepcontrol.wait` before the first global
    load, `griddepcontrol.launch_dependents` after the last load (tileiras may sink the store
    past it: the trigger only lets the next grid be placed, whose wait still waits for this
    grid to complete)."""
    cubin = compiled(stop_after=Stage.CUBIN, lineinfo=True).cubin
    assert cubin is not None
    ptx = cubin.decode("latin-1")
    events = [m.group(0) for m in re.finditer(r"griddepcontrol\.\w+|ld\.global|st\.global", ptx)]
    assert events[:2] == ["griddepcontrol.wait", "ld.global"]
    trigger = events.index("griddepcontrol.launch_dependents")
    assert "ld.global" not in events[trigger:] and events.count("griddepcontrol.wait") == 1
    plain = compiled(stop_after=Stage.CUBIN, lineinfo=True, early_launch=False).cubin
    assert plain is not None and b"griddepcontrol" not in plain
