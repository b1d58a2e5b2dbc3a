"""The bytecode writer, checked by NVIDIA's own tools: tileirdisasm reads our bytes back
and tileiras turns them into cubins whose symbols name our entries.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import subprocess
from pathlib import Path

import pytest

import lowering.ir
from lowering.bytecode.op_encoders import ENCODERS
from lowering.bytecode.tables import BytecodeError
from lowering.bytecode.writer import MAGIC, SUPPORTED_VERSIONS, write_bytecode
from lowering.cubin_info import function_symbols
from lowering.ir.attributes import EntryHints, RoundingMode
from lowering.ir.core import Builder, Function, Module, Op, Value
from lowering.ir.ops_control import For
from lowering.ir.ops_convert import FToI
from lowering.ir.ops_core import Constant, GdcLaunchDependentsTko, GdcWaitTko, Return
from lowering.ir.ops_math import Exp
from lowering.ir.types import TOKEN, ElementType, TileType
from lowering.tileiras import Tileiras

VADD_OPS = (
    "make_token",
    "assume div_by<16>",
    "assume bounded<0, ?>",
    "make_tensor_view",
    "get_tile_block_id",
    "make_partition_view",
    "load_view_tko weak",
    "addf",
    "store_view_tko weak",
    "return",
)


def _disassemble(tool: str, bytecode: bytes, tmp_path: Path) -> str:
    path = tmp_path / "module.tileirbc"
    path.write_bytes(bytecode)
    done = subprocess.run([tool, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _map_ops(module: Module, change: type[Op], **fields: object) -> Module:
    """Replace fields on every top-level op of class `change`."""
    fn = module.functions[0]
    ops = tuple(
        dataclasses.replace(op, **fields) if isinstance(op, change) else op for op in fn.body.ops
    )
    return Module((dataclasses.replace(fn, body=dataclasses.replace(fn.body, ops=ops)),))


def _all_op_classes() -> set[type[Op]]:
    for info in pkgutil.iter_modules(lowering.ir.__path__, "lowering.ir."):
        importlib.import_module(info.name)
    found: set[type[Op]] = set()
    pending = [Op]
    while pending:
        for sub in pending.pop().__subclasses__():
            pending.append(sub)
            if not sub.__name__.startswith("_"):
                found.add(sub)
    return found


def test_every_op_class_has_an_encoder() -> None:
    missing = {cls.__name__ for cls in _all_op_classes()} - {c.__name__ for c in ENCODERS}
    assert not missing, f"ops without a bytecode encoder: {sorted(missing)}"


def test_header_and_end(vadd_module: Module) -> None:
    data = write_bytecode(vadd_module)
    assert data[:8] == MAGIC and data[8:12] == b"\x0d\x03\x00\x00"
    assert data[-1] == 0
    assert write_bytecode(vadd_module, (13, 1))[8:10] == b"\x0d\x01"


def test_output_is_deterministic(any_kernel: tuple[str, Module]) -> None:
    _, module = any_kernel
    assert write_bytecode(module) == write_bytecode(module)


@pytest.mark.parametrize("version", [(13, 0), (13, 5), (12, 9)])
def test_unsupported_versions_raise(vadd_module: Module, version: tuple[int, int]) -> None:
    with pytest.raises(BytecodeError, match="unsupported bytecode version"):
        write_bytecode(vadd_module, version)


def test_version_gated_fields_raise_when_too_old(for_module: Module, vadd_module: Module) -> None:
    with pytest.raises(BytecodeError, match=r"for: unsigned_cmp needs bytecode 13.2"):
        write_bytecode(_map_ops(for_module, For, unsigned_cmp=True), (13, 1))
    write_bytecode(_map_ops(for_module, For, unsigned_cmp=True), (13, 2))
    with pytest.raises(BytecodeError, match="default' hints"):
        write_bytecode(_with_hints(vadd_module, EntryHints("default", occupancy=2)), (13, 2))


def test_op_level_gates() -> None:
    """exp's rounding exists from 13.3 and ftoi's saturating flag from 13.4."""
    f32, i32 = TileType(ElementType.F32), TileType(ElementType.I32)
    b = Builder()
    x = b.emit(Constant, result=f32, values=(1.0,)).result
    b.emit(Exp, result=f32, source=x, rounding=RoundingMode.APPROX)
    b.emit(FToI, result=i32, source=x, saturating=True)
    b.emit(Return)
    module = Module((Function("gates", (), b.finish(())),))
    with pytest.raises(BytecodeError, match=r"exp: rounding=approx needs bytecode 13.3"):
        write_bytecode(module, (13, 2))
    with pytest.raises(BytecodeError, match=r"ftoi: saturating needs bytecode 13.4"):
        write_bytecode(module, (13, 3))
    assert write_bytecode(module, (13, 4))


def _grid_dependency_module() -> Module:
    b = Builder()
    launch = b.emit(GdcLaunchDependentsTko, result_token=TOKEN).result_token
    b.emit(GdcWaitTko, result_token=TOKEN, token=launch)
    b.emit(Return)
    return Module((Function("gdc", (), b.finish(())),))


def test_grid_dependency_ops_need_13_4() -> None:
    """gdc_launch_dependents_tko (0x77) and gdc_wait_tko (0x78): R token, a count of the
    optional token, [token]."""
    with pytest.raises(BytecodeError, match=r"gdc_launch_dependents_tko: this op needs .* 13.4"):
        write_bytecode(_grid_dependency_module(), (13, 3))
    assert write_bytecode(_grid_dependency_module(), (13, 4))


def test_undefined_values_are_reported(vadd_module: Module) -> None:
    fn = vadd_module.functions[0]
    ghost = Value(999, fn.params[0].type)
    broken = dataclasses.replace(fn, params=(ghost, *fn.params[1:]))
    with pytest.raises(BytecodeError, match="value %0 is used where it is not defined"):
        write_bytecode(Module((broken,)))


def _with_hints(module: Module, *hints: EntryHints) -> Module:
    return Module((dataclasses.replace(module.functions[0], hints=hints),))


# -- tileirdisasm reads our bytes back ----------------------------------------------------


@pytest.mark.tileiras
@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_vadd_disassembles(
    vadd_module: Module, version: tuple[int, int], tileirdisasm: str, tmp_path: Path
) -> None:
    text = _disassemble(tileirdisasm, write_bytecode(vadd_module, version), tmp_path)
    assert "entry @vadd_ir(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>" in text
    positions = [text.find(op) for op in VADD_OPS]
    assert -1 not in positions, text
    assert text.count("load_view_tko weak") == 2
    assert "tensor_view<?xf32, strides=[1]>" in text
    assert "partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>" in text
    hints = "optimization_hints=<default = {}>"
    assert (hints in text) == (version >= (13, 3))


@pytest.mark.tileiras
def test_entry_hints_disassemble(vadd_module: Module, tileirdisasm: str, tmp_path: Path) -> None:
    module = _with_hints(
        vadd_module,
        EntryHints("sm_90", num_cta_in_cga=2, occupancy=1),
        EntryHints("default", num_worker_warps_per_cta=4),
    )
    text = _disassemble(tileirdisasm, write_bytecode(module), tmp_path)
    assert (
        "optimization_hints=<default = {num_worker_warps_per_cta = 4}, "
        "sm_90 = {num_cta_in_cga = 2, occupancy = 1}>"
    ) in text


@pytest.mark.tileiras
def test_regions_disassemble(for_module: Module, tileirdisasm: str, tmp_path: Path) -> None:
    text = _disassemble(tileirdisasm, write_bytecode(for_module), tmp_path)
    assert "%for = for %loopIdx in (" in text and "iter_values(%iterArg0 = " in text
    assert "continue %" in text
    assert "store_view_tko weak %for," in text  # the for's result is numbered after its body


@pytest.mark.tileiras
def test_grid_dependency_ops_disassemble(tileirdisasm: str, tmp_path: Path) -> None:
    text = _disassemble(tileirdisasm, write_bytecode(_grid_dependency_module(), (13, 4)), tmp_path)
    assert "%0 = gdc_launch_dependents_tko -> token" in text, text
    assert "%1 = gdc_wait_tko token = %0 -> token" in text, text


@pytest.mark.tileiras
def test_all_ops_disassemble(all_ops_module: Module, tileirdisasm: str, tmp_path: Path) -> None:
    text = _disassemble(tileirdisasm, write_bytecode(all_ops_module), tmp_path)
    for spelled in (
        "exp %2 rounding<approx>",
        "maxf %11, %12 propagate_nan",
        "cmpf less_than ordered",
        "select %19",
        "ftoi %22 signed",
        "exti %26 signed",
        "bitcast %28",
        "fma %13, %15, %10",
    ):
        assert spelled in text, spelled


# -- tileiras assembles them ----------------------------------------------------------


@pytest.mark.tileiras
@pytest.mark.parametrize("sm", ["sm_80", "sm_90", "sm_100", "sm_120"])
def test_vadd_assembles_for_each_gpu(vadd_module: Module, sm: str, tileiras: Tileiras) -> None:
    cubin = tileiras.assemble(write_bytecode(vadd_module), arch=sm)
    assert "vadd_ir" in function_symbols(cubin)


@pytest.mark.tileiras
@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_every_kernel_assembles(
    any_kernel: tuple[str, Module], version: tuple[int, int], tileiras: Tileiras
) -> None:
    name, module = any_kernel
    if name == "all_ops" and version < (13, 3):
        pytest.skip("all_ops uses exp rounding<approx>, which needs 13.3")
    cubin = tileiras.assemble(write_bytecode(module, version), arch="sm_90")
    assert module.functions[0].name in function_symbols(cubin)
