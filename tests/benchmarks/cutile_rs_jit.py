"""Compile cutile-rs examples with cutile-rs's own compiler, as its JIT would for the
benchmarks' launches, next to ours: the cubins for the real-code comparison (issue 14).

    python -m tests.benchmarks.cutile_rs_jit --cutile-rs PATH [OUT]   # gpu_artifacts/cutile-rs-jit

PATH is a local cutile-rs checkout (or CUTILE_RS); nothing of it is copied into this repository.
The script writes a small Rust program into OUT/crate (its kernels are the examples' own
`#[cutile::module]` blocks, read from the checkout at build time) that calls cutile-rs's
compile-only API (`KernelCompiler`) with what the JIT derives from the launch's arguments:
the generics, each tensor's unit strides and divisibility facts (`compute_spec` of its shape
and strides at a 256-byte aligned base) and the integer scalars' hints. It builds that
program (cutile-rs needs the CUDA headers, cuda.h and curand.h, which OUT/toolkit assembles
from the nvidia wheels, and libclang for bindgen: `apt-get install libclang-dev`), runs it
for the Tile IR bytecode, and assembles each with tileiras exactly as the JIT does
(`--gpu-name sm_90 --opt-level 3`).

OUT/jit is then a bundle our host launches (`bench_cutile_rs BUNDLE --jit OUT/jit` times both
on the GPU): each cubin with the contract of our own compile of the same kernel, specialized
to the same facts (OUT/ours), its entry symbol renamed to cutile-rs's, once the parameter
layouts of the two cubins are found equal (`cuobjdump -elf`). The script ends by printing
what each cubin's machine code shows (`tests.benchmarks.sass_stats`), ours next to theirs.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from client_stubs.integrity import contract_bytes
from lowering.cubin_info import function_symbols
from lowering.tileiras import Tileiras, nvidia_binary
from protos.generated.cutile.compile.v1 import contract_pb2
from service.cli.batch import main as cutile_compile
from tests.benchmarks import sass_stats
from tests.benchmarks.build_cutile_rs import out_and_checkout
from tests.benchmarks.configs import CUTILE_RS_F32_TILE, CUTILE_RS_SIZES, CUTILE_RS_TILE

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "gpu_artifacts" / "cutile-rs-jit"
ALIGNED_BASE = 0x7F00_0000_0000  # a 256-byte aligned device address (the facts see 16)


@dataclass(frozen=True)
class TensorArg:
    """A tensor argument as the JIT sees it at launch: its shape, strides and element size
    (row-major at an aligned base unless the strides say otherwise)."""

    name: str
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    element_bytes: int

    def facts(self, entry: str) -> str:
        """What the JIT infers, as `cutile-compile --facts` spells it."""
        dims = ",".join(str(_divisor(d)) for d in self.shape)
        strides = ",".join(str(_divisor(s)) for s in self.strides)
        return f"{entry}:{self.name}:dims={dims}:strides={strides}"


def _divisor(value: int) -> int:
    """The largest power of two up to 16 dividing `value` (16 for 0), as the JIT caps it."""
    return 16 if value == 0 else min(value & -value, 16)


def row_major(name: str, shape: tuple[int, ...], element_bytes: int) -> TensorArg:
    strides = tuple(math.prod(shape[i + 1 :]) for i in range(len(shape)))
    return TensorArg(name, shape, strides, element_bytes)


@dataclass(frozen=True)
class JitKernel:
    """One specialization a benchmark launches: the example, its module and entry, the JIT's
    generic list (array generics expanded) and ours (by name), its tensor arguments and its
    integer scalars' values (the JIT's divisibility hints)."""

    source: str  # relative to the checkout
    module: str
    entry: str
    jit_generics: tuple[str, ...]
    generics: tuple[tuple[str, str], ...]
    tensors: tuple[TensorArg, ...]
    label: str
    scalars: tuple[tuple[str, int], ...] = ()


def kernels() -> list[JitKernel]:
    bm, bn, bk = (CUTILE_RS_TILE[k] for k in ("BM", "BN", "BK"))

    def square(size: int, element_bytes: int = 2) -> tuple[TensorArg, ...]:
        return tuple(row_major(t, (size, size), element_bytes) for t in ("z", "x", "y"))

    def gemm(element: str, tile: dict[str, str], size: int, element_bytes: int) -> JitKernel:
        m, n, k = (tile[name] for name in ("BM", "BN", "BK"))
        return JitKernel(
            "cutile-examples/examples/gemm.rs",
            "my_module",
            "gemm",
            (element, m, n, k, str(size)),
            (("E", element), ("BM", m), ("BN", n), ("BK", k), ("K", str(size))),
            square(size, element_bytes),
            f"gemm-{size}" if element == "f16" else f"gemm-{element}-{size}",
        )

    found = [gemm("f16", CUTILE_RS_TILE, size, 2) for size in CUTILE_RS_SIZES]
    found += [gemm("f32", CUTILE_RS_F32_TILE, size, 4) for size in CUTILE_RS_SIZES]
    # the persistent kernel's specialization does not depend on the size (divisible by 16)
    found.append(
        JitKernel(
            "cutile-examples/examples/persistent_gemm.rs",
            "persistent_gemm_kernels",
            "gemm_persistent",
            ("f16", bm, bn, bk, "8", "1"),
            (("T", "f16"), ("BM", bm), ("BN", bn), ("BK", bk), ("MAP_SHAPE", "[8, 1]")),
            square(CUTILE_RS_SIZES[0]),
            f"gemm_persistent-{CUTILE_RS_SIZES[0]}",
        )
    )
    # flash_attention.rs in f32 at the compatibility check's size (b, h, m, d) = (4, 32,
    # 1024, 64), where it runs at a small fraction of torch's SDPA
    qkv = tuple(row_major(t, (4, 32, 1024, 64), 4) for t in ("q", "k", "v"))
    found.append(
        JitKernel(
            "cutile-examples/examples/flash_attention.rs",
            "my_module",
            "fmha",
            ("128", "64", "64"),
            (("BM", "128"), ("BN", "64"), ("D", "64")),
            (row_major("out", (128, 1024, 64), 4), *qkv),
            "fmha-f32",
            (("query_group_size", 1),),
        )
    )
    return found


# ------------------------------------------------------------------------------ the program


def module_block(text: str, module: str) -> str:
    """The `#[cutile::module] mod MODULE { ... }` item of an example, as written."""
    start = text.find("#[cutile::module]")
    while start != -1 and not re.match(rf"#\[cutile::module\]\s*mod\s+{module}\b", text[start:]):
        start = text.find("#[cutile::module]", start + 1)
    if start == -1:
        raise ValueError(f"no #[cutile::module] mod {module} in the example")
    depth = 0
    for end in range(text.index("{", start), len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            return text[start : end + 1]
    raise ValueError(f"mod {module} is not closed")


CARGO_TOML = """[package]
name = "cutile-rs-jit"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
cutile = {{ path = "{root}/cutile" }}
cutile-compiler = {{ path = "{root}/cutile-compiler" }}
cuda-core = {{ path = "{root}/cuda-core" }}
cuda-async = {{ path = "{root}/cuda-async" }}

[workspace]
"""

MAIN_HEAD = """//! Generated by tests/benchmarks/cutile_rs_jit.py: cutile-rs's compile-only API on
//! the benchmark's specializations; writes OUT/<label>.tileirbc and OUT/<label>.ir.
use cutile::compile_api::KernelCompiler;
use cutile::cutile_compiler::specialization::{compute_spec, DivHint};
use std::path::PathBuf;

"""


def _ints(values: Iterable[int]) -> str:
    return ", ".join(str(v) for v in values)


def _rust_strings(values: Sequence[str]) -> str:
    return ", ".join(f"{json.dumps(v)}.to_string()" for v in values)


def _outer(job: JitKernel) -> str:
    """The Rust module the program wraps an example's kernel module in (examples reuse
    module names: gemm.rs and flash_attention.rs both have `my_module`)."""
    return re.sub(r"\W", "_", Path(job.source).stem) + "_rs"


def main_rs(checkout: Path, jobs: Sequence[JitKernel]) -> str:
    """The program: every example's kernel module once, then one compile per
    specialization."""
    modules: dict[str, str] = {}
    for job in jobs:
        outer = _outer(job)
        if outer not in modules:
            block = module_block((checkout / job.source).read_text(), job.module)
            modules[outer] = f"mod {outer} {{\n{block}\n}}\n\n"
    body = [MAIN_HEAD, *modules.values()]
    body.append(
        'fn main() {\n    let out = PathBuf::from(std::env::args().nth(1).expect("OUT"));\n'
    )
    for job in jobs:
        specs = ", ".join(
            f'("{t.name}", compute_spec({ALIGNED_BASE:#x}, &[{_ints(t.shape)}], '
            f"&[{_ints(t.strides)}], {t.element_bytes}))"
            for t in job.tensors
        )
        strides = ", ".join(
            f'("{t.name}", &[{_ints(1 if s == 1 else -1 for s in t.strides)}][..])'
            for t in job.tensors
        )
        hints = ", ".join(f'("{n}", DivHint::from_value({v}))' for n, v in job.scalars)
        body.append(
            f"""    {{
        let ast = {_outer(job)}::{job.module}::__module_ast_self;
        let artifacts = KernelCompiler::new(ast, "{job.module}", "{job.entry}")
            .generics(vec![{_rust_strings(job.jit_generics)}])
            .strides(&[{strides}])
            .spec_args(&[{specs}])
            .scalar_hints(&[{hints}])
            .target("sm_90")
            .compile()
            .expect("{job.label}: compile");
        std::fs::write(out.join("{job.label}.ir"), artifacts.ir_text()).unwrap();
        std::fs::write(out.join("{job.label}.tileirbc"), artifacts.bytecode().unwrap()).unwrap();
    }}
"""
        )
    body.append("}\n")
    return "".join(body)


def toolkit(out: Path) -> Path:
    """A CUDA toolkit folder holding what cutile-rs's build reads: include/cuda.h (the
    nvidia wheels tileiras came with) and include/curand.h (the nvidia-curand wheel)."""
    root = out / "toolkit"
    include = root / "include"
    if (include / "cuda.h").is_file() and (include / "curand.h").is_file():
        return root
    include.mkdir(parents=True, exist_ok=True)
    cuda_include = Path(nvidia_binary("tileiras") or "").resolve().parents[1] / "include"
    if not (cuda_include / "cuda.h").is_file():
        raise SystemExit(f"no cuda.h next to tileiras ({cuda_include})")
    shutil.copytree(cuda_include, include, dirs_exist_ok=True)
    with tempfile.TemporaryDirectory() as wheels:
        pip = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "nvidia-curand"]
        subprocess.run([*pip, "-d", wheels], check=True)
        (wheel,) = Path(wheels).glob("nvidia_curand-*.whl")
        shutil.unpack_archive(str(wheel), wheels, "zip")
        (headers,) = Path(wheels).glob("nvidia/*/include")
        shutil.copytree(headers, include, dirs_exist_ok=True)
    return root


def build_and_run(checkout: Path, out: Path, jobs: Sequence[JitKernel]) -> None:
    crate = out / "crate"
    (crate / "src").mkdir(parents=True, exist_ok=True)
    (crate / "Cargo.toml").write_text(CARGO_TOML.format(root=checkout.resolve()))
    (crate / "src" / "main.rs").write_text(main_rs(checkout, jobs))
    env = {**os.environ, "CUDA_TOOLKIT_PATH": str(toolkit(out))}
    if "LIBCLANG_PATH" not in env:
        found = sorted(Path("/usr/lib").glob("llvm-*/lib/libclang.so"))
        if found:
            env["LIBCLANG_PATH"] = str(found[-1].parent)
    cargo = ["cargo", "run", "--release", "--quiet", "--manifest-path", str(crate / "Cargo.toml")]
    with (out / "jit.log").open("w") as log:  # the examples print their IR (print_ir = true)
        subprocess.run([*cargo, "--", str(out)], check=True, env=env, stdout=log)


# ------------------------------------------------------------------------ cubins and bundle


def cuobjdump_elf(cubin: Path) -> str:
    """`cuobjdump -elf` of `cubin` (its .nv.info sections hold the parameter layout)."""
    tool = sass_stats.find_cuobjdump()
    if tool is None:
        raise SystemExit("cuobjdump not found (the nvidia-cuda-cuobjdump wheel of the dev extras)")
    return subprocess.run([tool, "-elf", str(cubin)], capture_output=True, text=True).stdout


_KPARAM = re.compile(
    r"Ordinal\s*:\s*(0x[0-9a-f]+)\s*Offset\s*:\s*(0x[0-9a-f]+)\s*Size\s*:\s*(0x[0-9a-f]+)"
)


def param_layout(cubin: Path) -> list[tuple[int, int]]:
    """(offset, size) of each kernel parameter, by ordinal (EIATTR_KPARAM_INFO)."""
    found = _KPARAM.findall(cuobjdump_elf(cubin))
    layout = {int(o, 16): (int(off, 16), int(size, 16)) for o, off, size in found}
    return [layout[i] for i in sorted(layout)]


def ours(checkout: Path, out: Path, job: JitKernel) -> tuple[Path, dict]:
    """Our compile of the same kernel specialized to the same facts: its bundle folder and
    the manifest entry of that specialization."""
    folder = out / "ours" / job.label
    generics = ",".join(f"{k}={v}" for k, v in job.generics)
    facts = [t.facts(job.entry) for t in job.tensors]
    argv = [str(checkout / job.source), "--entry", job.entry, "--generics", generics]
    argv += [arg for fact in facts for arg in ("--facts", fact)]
    if cutile_compile([*argv, "--arch", "sm_90", "-o", str(folder)]):
        raise SystemExit(f"cutile-compile failed for {job.label}")
    manifest = json.loads((folder / "manifest.json").read_text())
    (entry,) = [k for k in manifest["kernels"] if k["facts"]]
    return folder, entry


def jit_entry(job: JitKernel, cubin: Path, reference: Path, entry: dict, bundle: Path) -> dict:
    """A manifest entry for cutile-rs's cubin with our contract of the same kernel (`entry`
    of the bundle folder `reference`)."""
    contract = contract_pb2.LaunchContract.FromString((reference / entry["contract"]).read_bytes())
    (symbol,) = [s for s in function_symbols(cubin.read_bytes()) if s.startswith(job.entry)]
    ours_layout = param_layout(reference / entry["cubin"])
    theirs = param_layout(cubin)
    if not ours_layout or ours_layout != theirs:
        raise SystemExit(
            f"{job.label}: parameter layouts differ: ours {ours_layout}, theirs {theirs}"
        )
    contract.kernel.entry_symbol = symbol
    stem = f"{job.label}-cutile-rs-sm_90"
    shutil.copyfile(cubin, bundle / f"{stem}.cubin")
    data = contract_bytes(contract)
    (bundle / f"{stem}.contract.pb").write_bytes(data)
    return {
        **{k: entry[k] for k in ("module", "function", "generics", "sm", "facts")},
        "cubin": f"{stem}.cubin",
        "contract": f"{stem}.contract.pb",
        "cubin_sha256": hashlib.sha256(cubin.read_bytes()).hexdigest(),
        "contract_sha256": hashlib.sha256(data).hexdigest(),
        "source": job.source,
        "request_key": f"cutile-rs-jit:{job.label}",
    }


def main(argv: Sequence[str] | None = None) -> int:
    out, checkout = out_and_checkout(__doc__.splitlines()[0], DEFAULT_OUT, argv)
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    jobs = kernels()
    build_and_run(checkout, out, jobs)
    tileiras = Tileiras.locate()
    bundle = out / "jit"
    shutil.rmtree(bundle, ignore_errors=True)
    bundle.mkdir()
    entries: list[dict] = []
    pairs: list[Path] = []
    for job in jobs:
        cubin = out / f"{job.label}.cubin"
        bytecode = (out / f"{job.label}.tileirbc").read_bytes()
        cubin.write_bytes(tileiras.assemble(bytecode, arch="sm_90", opt_level=3))
        reference, our_entry = ours(checkout, out, job)
        entries.append(jit_entry(job, cubin, reference, our_entry, bundle))
        pairs += [reference / our_entry["cubin"], cubin]
    manifest = {"schema": 1, "kernels": entries}
    (bundle / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {len(entries)} cutile-rs-compiled kernels to {bundle}; ours, then theirs:")
    return sass_stats.main([str(p) for p in pairs])


if __name__ == "__main__":
    sys.exit(main())
