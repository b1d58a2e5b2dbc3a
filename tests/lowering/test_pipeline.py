"""The whole compile path with the real tileiras: cubins, contracts, failures as diagnostics."""

from __future__ import annotations

import pytest

from lowering.contract import ParamKind
from lowering.cubin_info import function_symbols
from lowering.pipeline import Stage
from lowering.tileiras import Tileiras, TileirasError
from parser import codes
from tests.lowering.kernels import compile_example, compile_text


@pytest.mark.parametrize("sm", ["sm_80", "sm_90", "sm_100", "sm_120"])
def test_add_compiles_to_a_cubin_with_its_symbol(tileiras: Tileiras, sm: str) -> None:
    result = compile_example("add.rs", "add", {"B": "1024"}, arch=sm)
    assert result.ok, result.diagnostics
    assert result.stage_reached is Stage.CUBIN
    assert result.contract.entry_symbol in function_symbols(result.cubin)
    assert result.contract.sm == sm
    assert result.timings.tileiras_ms > 0


@pytest.mark.parametrize("elem", ["f32", "f16", "bf16", "f64"])
def test_saxpy_contract_describes_params_abi_and_grid(tileiras: Tileiras, elem: str) -> None:
    result = compile_example("saxpy.rs", "saxpy", {"E": elem, "B": "256"})
    assert result.ok, result.diagnostics
    contract = result.contract
    assert [(p.name, p.kind, p.dtype) for p in contract.params] == [
        ("a", ParamKind.SCALAR, elem),
        ("x", ParamKind.TENSOR_IN, elem),
        ("y", ParamKind.TENSOR_OUT, elem),
    ]
    assert contract.params[2].tile_shape == (256,)
    assert contract.grid_outputs == (2,)
    assert contract.block == (1, 1, 1) and contract.shared_mem_bytes == 0
    assert contract.generics == (("E", elem), ("B", "256"))
    assert contract.abi[0].ctype == elem


def test_an_entry_without_outputs_takes_the_host_grid(tileiras: Tileiras) -> None:
    """cuTile Rust launches such an entry with `.grid(..)`: the contract says so."""
    text = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    fn f(x: &Tensor<f32, { [-1] }>, n: i32) {
        let pid: (i32, i32, i32) = get_tile_block_id();
        let t: Tile<f32, { [128] }> = x.partition(const_shape![128]).load([pid.0]);
        cuda_tile_print!("{} of {}\\n", pid.0, n);
    }
}
"""
    result = compile_text(text)
    assert result.ok, result.diagnostics
    contract = result.contract
    assert contract.host_grid and contract.grid_outputs == ()
    assert [p.kind for p in contract.params] == [ParamKind.TENSOR_IN, ParamKind.SCALAR]
    # no output bounds the grid, so the block id is checked against x's tiles at launch
    assert contract.safety.checks_hoisted_to_host == 1


def test_specializations_get_distinct_symbols(tileiras: Tileiras) -> None:
    small = compile_example("add.rs", "add", {"B": "128"})
    large = compile_example("add.rs", "add", {"B": "256"})
    assert small.contract.entry_symbol != large.contract.entry_symbol


def test_frontend_errors_stop_before_tileiras() -> None:
    text = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [128] }>, x: &Tensor<f32, { [-1] }>) {
        x.store(z.load());
    }
}
"""
    result = compile_text(text)
    assert not result.ok
    assert result.cubin is None and result.bytecode is None
    assert [d.code for d in result.diagnostics] == [codes.MUTATE_SHARED]


class _FailingAssembler:
    version = "release 0.0, V0.0.0"

    def assemble(self, bytecode: bytes, **_: object) -> bytes:
        raise TileirasError(
            "failed to compile Tile IR program",
            5,
            "error: something the assembler disliked",
            ("tileiras", "x"),
        )


def test_tileiras_failure_becomes_a_diagnostic_with_its_message() -> None:
    from lowering.pipeline import CompileRequest, compile_kernel
    from tests.lowering.kernels import example

    request = CompileRequest((example("add.rs"),), "add", (("B", "128"),))
    result = compile_kernel(request, assembler=_FailingAssembler())  # type: ignore[arg-type]
    assert not result.ok and result.cubin is None
    (diagnostic,) = result.diagnostics
    assert diagnostic.code is codes.TILEIRAS_FAILED
    assert any("something the assembler disliked" in note for note in diagnostic.notes)
    assert diagnostic.primary_span is not None
    assert diagnostic.primary_span.text == "add"


def test_internal_errors_are_diagnostics_not_exceptions() -> None:
    from lowering.pipeline import CompileRequest, compile_kernel
    from tests.lowering.kernels import example

    class _Broken:
        version = "x"

        def assemble(self, bytecode: bytes, **_: object) -> bytes:
            raise ZeroDivisionError("boom")

    request = CompileRequest((example("add.rs"),), "add", (("B", "128"),))
    result = compile_kernel(request, assembler=_Broken())  # type: ignore[arg-type]
    assert not result.ok
    assert result.diagnostics[0].code is codes.INTERNAL_ERROR
