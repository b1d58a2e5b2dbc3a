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


def test_the_specializations_include_the_default_path_benchmarks() -> None:
    """Each GEMM the default-path benchmark launches is compiled by the JIT too (same source,
    entry and generics: its rows line up), at every size."""
    benchmarked = {(k.source, k.entry, tuple(k.generics.items())) for k in CUTILE_RS_KERNELS}
    compiled = {(k.source, k.entry, k.generics) for k in jit.kernels()}
    assert benchmarked <= compiled
    assert len({k.label for k in jit.kernels()}) == len(jit.kernels())


def test_the_jits_facts_are_the_largest_power_of_two_up_to_16() -> None:
    out = jit.row_major("out", (128, 1024, 64), 4)
    assert out.strides == (65536, 64, 1)
    assert out.facts("fmha") == "fmha:out:dims=16,16,16:strides=16,16,1"
    odd = jit.TensorArg("x", (1000, 12, 0), (24, 2, 1), 2)
    assert odd.facts("k") == "k:x:dims=8,4,16:strides=8,2,1"


def test_the_program_compiles_each_specialization_with_the_jits_facts(tmp_path: Path) -> None:
    checkout = tmp_path / "cutile-rs"
    example = checkout / "cutile-examples" / "examples"
    example.mkdir(parents=True)
    (example / "gemm.rs").write_text(EXAMPLE)
    (example / "other.rs").write_text(EXAMPLE)  # a second example with a `my_module` too
    jobs = [
        jit.JitKernel(
            f"cutile-examples/examples/{file}",
            "my_module",
            "gemm",
            ("f16", "128"),
            (("E", "f16"), ("BM", "128")),
            (jit.row_major("z", (size, size), 2),),
            f"{file}-{size}",
            (("n", 12),),
        )
        for file, size in (("gemm.rs", 4096), ("gemm.rs", 8192), ("other.rs", 64))
    ]
    program = jit.main_rs(checkout, jobs)
    # each example's module once, wrapped so that equal module names do not clash
    assert program.count("mod my_module {") == 2
    assert "mod gemm_rs {\n#[cutile::module]" in program and "mod other_rs {" in program
    assert "mod helpers" not in program and "fn main() {\n    let out" in program
    assert program.count('KernelCompiler::new(ast, "my_module", "gemm")') == 3
    assert "let ast = other_rs::my_module::__module_ast_self;" in program
    assert '.generics(vec!["f16".to_string(), "128".to_string()])' in program
    assert '.strides(&[("z", &[-1, 1][..])])' in program
    base = f"{jit.ALIGNED_BASE:#x}"
    assert f'("z", compute_spec({base}, &[8192, 8192], &[8192, 1], 2))' in program
    assert '.scalar_hints(&[("n", DivHint::from_value(12))])' in program
    assert 'out.join("gemm.rs-4096.tileirbc")' in program


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
