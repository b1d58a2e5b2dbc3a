"""tests.benchmarks.cutile_rs_jit without cargo or a cutile-rs checkout: the module item it
reads from an example, the program it writes for cutile-rs's compile-only API, the
specializations matching the default-path benchmark's, and the parameter layout it reads
from `cuobjdump -elf`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmarks import cutile_rs_jit as jit
from tests.benchmarks.configs import CUTILE_RS_KERNELS

EXAMPLE = """use cutile::prelude::*;

#[cutile::module]
mod helpers {
    pub fn unused() {}
}

#[cutile::module]
mod my_module {
    use cutile::core::*;
    #[cutile::entry()]
    fn gemm<const BM: i32>(z: &mut Tensor<f16, { [BM, BM] }>) {
        if true { let t = { 1 }; }
    }
}

fn main() { println!("{}", 1); }
"""


def test_the_named_module_item_is_read_whole() -> None:
    block = jit.module_block(EXAMPLE, "my_module")
    assert block.startswith("#[cutile::module]\nmod my_module {")
    assert block.endswith("}\n}") and "fn main" not in block and "helpers" not in block
    with pytest.raises(ValueError, match="no #\\[cutile::module\\] mod absent"):
        jit.module_block(EXAMPLE, "absent")


def test_the_specializations_are_the_default_path_benchmarks() -> None:
    """Each kernel the JIT compiles is one the default-path benchmark launches (same source,
    entry and generics: its rows line up), with every size covered."""
    benchmarked = {(k.source, k.entry, tuple(k.generics.items())) for k in CUTILE_RS_KERNELS}
    compiled = {(k.source, k.entry, k.generics) for k in jit.kernels()}
    assert compiled == benchmarked


def test_the_program_compiles_each_specialization_with_the_jits_facts(tmp_path: Path) -> None:
    checkout = tmp_path / "cutile-rs"
    example = checkout / "cutile-examples" / "examples"
    example.mkdir(parents=True)
    (example / "gemm.rs").write_text(EXAMPLE)
    jobs = [
        jit.JitKernel(
            "cutile-examples/examples/gemm.rs",
            "my_module",
            "gemm",
            ("f16", "128"),
            (("E", "f16"), ("BM", "128")),
            ("z",),
            size,
        )
        for size in (4096, 8192)
    ]
    program = jit.main_rs(checkout, jobs)
    assert program.count("mod my_module {") == 1  # the module once, however many compiles
    assert "mod helpers" not in program and "fn main() {\n    let out" in program
    assert program.count('KernelCompiler::new(ast, "my_module", "gemm")') == 2
    assert '.generics(vec!["f16".to_string(), "128".to_string()])' in program
    assert '.strides(&[("z", &[-1, 1][..])])' in program
    base = f"{jit.ALIGNED_BASE:#x}"
    assert f'("z", compute_spec({base}, &[8192, 8192], &[8192, 1], 2))' in program
    assert 'out.join("gemm-4096.tileirbc")' in program


ELF = """
.nv.info.gemm_1
	<0x1>
	Attribute:	EIATTR_KPARAM_INFO
	Format:	EIFMT_SVAL
	Value:	Index : 0x0	Ordinal : 0x1	Offset  : 0x8	Size    : 0x4
	<0x2>
	Attribute:	EIATTR_KPARAM_INFO
	Format:	EIFMT_SVAL
	Value:	Index : 0x0	Ordinal : 0x0	Offset  : 0x0	Size    : 0x8
"""


def test_the_parameter_layout_is_read_by_ordinal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jit, "cuobjdump_elf", lambda cubin: ELF)
    assert jit.param_layout(Path("k.cubin")) == [(0, 8), (8, 4)]
