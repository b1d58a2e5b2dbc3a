"""Hostile launches for the hosts: real launch contracts mutated field by field, with arguments
that fit the contract before it was mutated (and are sometimes mutated too).

The seeds are the contracts of every catalog specialization (rust_examples/catalog.json),
lowered by the compiler with a stand-in assembler (the contract does not depend on the cubin),
plus the hand-built contracts of the client tests (raw pointers, a host grid, a mapped output).
A mutation edits one field anywhere in the message: a boundary number, an unknown enum value,
a wrong name, a repeated entry removed, duplicated or appended, a message cleared. Arguments
fit the seed: one size shared by every dynamic extent (so the launch checks that relate
inputs to outputs hold), tiles and static extents from the contract.

Input `i` of seed `S` is made from `Random(f"{S}:{i}")`, so any input can be made again from
its number.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from random import Random
from typing import Any

from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from tests.fuzz.proto_mutations import SIGNED, mutate_message
from tests.vectors.args import mapped, partition, scalar, tensor

Args = list[dict[str, Any]]

SIZES = (1024, 2048, 4096)  # the last two axes: a multiple of every tile the catalog declares
LEAD = 2  # the axes before those (batch and head axes)
BASE = 0x1000_0000_0000  # the first argument's address; the next ones SPREAD apart
SPREAD = 0x0010_0000_0000  # 64 GiB: far past any tensor of fitting arguments

WORDS = (
    "",
    "f32",
    "f16",
    "bf16",
    "f64",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "u32",
    "u64",
    "bool",
    "f8e4m3fn",
    "f8e5m2",
    "tf32",
    "c64",
    "sm_80",
    "sm_90",
    "sm_100",
    "sm_9",
    "13.3",
    "13.4",
    "13.99",
    "x86_64",
    "aarch64",
    "riscv64",
    "é\u0301",
    "add\x00",
    "it's",
    "a\"b'c\\",
    "\x1b[2J",
    "\U0001f600\t",
    "[1, 2]",
    "x" * 300,
)


@dataclass(frozen=True)
class LaunchInput:
    """One hostile launch: a contract, argument descriptions (tests/vectors/args.py), the
    host grid where the contract takes one, what was done to the seed contract and to the
    arguments, and the arguments before that."""

    seed: str
    contract: pb.LaunchContract
    args: Args
    grid: list[int] | None
    contract_edits: tuple[str, ...]
    arg_edits: tuple[str, ...]
    fitting_args: Args
    fitting_grid: list[int] | None


# ---- seeds ----------------------------------------------------------------------------------


@functools.cache
def seed_contracts() -> tuple[tuple[str, bytes], ...]:
    """(name, serialized contract) of every seed, built once per process."""
    from tests.client_stubs.conftest import (
        add_contract,
        copy_persistent_contract,
        saxpy_contract,
        scale_ptr_contract,
    )

    seeds = [(name, contract.SerializeToString()) for name, contract in _catalog_contracts()]
    built: list[tuple[str, Callable[[], pb.LaunchContract]]] = [
        ("add (built)", add_contract),
        ("saxpy (built)", saxpy_contract),
        ("copy_persistent (built)", copy_persistent_contract),
        ("scale_ptr (built)", scale_ptr_contract),
    ]
    seeds += [(name, make().SerializeToString()) for name, make in built]
    return tuple(seeds)


def _catalog_contracts() -> list[tuple[str, pb.LaunchContract]]:
    from lowering.pipeline import CompileRequest, compile_kernel
    from parser.spans import SourceFile
    from rust_examples.catalog import specializations
    from service.convert import contract_to_proto
    from tests.fake_cubin import StandInAssembler

    out = []
    for spec in specializations():
        source = SourceFile(f"rust_examples/{spec.file}", spec.path.read_text())
        request = CompileRequest((source,), spec.entry, spec.generics)
        result = compile_kernel(request, assembler=StandInAssembler())  # type: ignore[arg-type]
        if result.contract is not None:
            contract = contract_to_proto(result.contract)
            contract.kernel.compiler_version = "<compiler>"  # a digest of the compiler's source
            out.append((spec.label, contract))
    return out


# ---- arguments that fit a contract ----------------------------------------------------------


def fitting_args(contract: pb.LaunchContract, rng: Random) -> tuple[Args, list[int] | None]:
    """Arguments the (unmutated) contract should accept, and the grid where it takes one."""
    size = rng.choice(SIZES)
    args: Args = []
    for index, param in enumerate(contract.params):
        args.append(_fitting_arg(param, size, BASE + SPREAD * index, rng))
    grid = None
    if contract.grid.mode == pb.GridRule.MODE_HOST:
        cluster = max(contract.launch.cluster_blocks, 1)
        grid = [cluster * rng.randint(1, 4), 1, 1]
    return args, grid


def _fitting_arg(param: pb.Param, size: int, base: int, rng: Random) -> dict[str, Any]:
    dtype = param.dtype or "f32"
    if param.kind == pb.PARAM_KIND_SCALAR:
        if dtype == "bool":
            return scalar(rng.random() < 0.5)
        if dtype.startswith(("f", "bf")):
            return scalar(rng.choice((0.5, 1.0, -2.25)))
        return scalar(rng.choice((size, 1, 0)))
    if param.kind == pb.PARAM_KIND_POINTER:
        return scalar(base)
    if param.kind == pb.PARAM_KIND_TENSOR_IN:
        extents = _extents(len(param.declared_shape), size)
        shape = [e if d < 0 else d for e, d in zip(extents, param.declared_shape, strict=True)]
        return tensor(base, shape, dtype)
    tile = [extent if extent > 0 else rng.choice((1, 4, 16)) for extent in param.tile_shape]
    extents = _extents(len(tile), size)
    shape = [math.lcm(e, t) for e, t in zip(extents, tile, strict=True)]
    whole = tensor(base, shape, dtype)
    if param.kind == pb.PARAM_KIND_TENSOR_OUT_MAPPED:
        blocks = rng.choice((1, 2, 8))
        return mapped(whole, tile, list(param.map_shape), blocks)
    return partition(whole, tile)


def _extents(rank: int, size: int) -> list[int]:
    return [LEAD] * max(rank - 2, 0) + [size] * min(rank, 2)


# ---- mutations ------------------------------------------------------------------------------


def mutate_contract(contract: pb.LaunchContract, rng: Random) -> str:
    """Edit one field somewhere in `contract`; say what was done."""
    return mutate_message(contract, rng, WORDS)


def mutate_args(
    args: Args, grid: list[int] | None, rng: Random
) -> tuple[Args, list[int] | None, str]:
    """Edit the arguments or the grid once; say what was done."""
    args = [dict(a) for a in args]
    if grid is not None and rng.random() < 0.2:
        grid = list(grid)
        axis = rng.randrange(3)
        grid[axis] = rng.choice((0, 1, 2, 3, 65535, 65536, 2**31 - 1, 2**31))
        return args, grid, f"grid[{axis}] = {grid[axis]}"
    if not args or rng.random() < 0.1:
        extra = tensor(BASE, [SIZES[0]])
        args.append(extra)
        return args, grid, "one argument more"
    i = rng.randrange(len(args))
    ((kind, body),) = args[i].items()
    if kind == "scalar" or rng.random() < 0.1:
        args[i] = rng.choice(
            (scalar(rng.choice(SIGNED)), scalar(1.5), scalar(True), tensor(BASE, [4]))
        )
        return args, grid, f"args[{i}] = {args[i]}"
    whole = dict(body["tensor"] if kind != "tensor" else body)
    what = rng.randrange(5)
    if what == 0:
        whole["dtype"] = rng.choice(("f16", "f32", "bf16", "i32", "u8", "f64"))
    elif what == 1 and whole["shape"]:
        axis = rng.randrange(len(whole["shape"]))
        whole["shape"] = list(whole["shape"])
        whole["shape"][axis] = rng.choice((0, 1, 3, 15, 17, 2**31, 2**40, 2**62, 2**63 - 1, -1))
    elif what == 2:
        whole["strides"] = [
            rng.choice((0, 1, 2, 3, -1, 2**31, 2**62, 2**63 - 1)) for _ in whole["shape"]
        ]
    elif what == 3:
        whole["ptr"] = hex(rng.choice((0, int(whole["ptr"], 16) + rng.choice((1, 2, 8)))))
    else:
        whole["device"] = rng.choice((1, 7))
    if kind == "tensor":
        args[i] = {"tensor": whole}
    else:
        args[i] = {kind: {**body, "tensor": whole}}
    return args, grid, f"args[{i}] {('dtype', 'shape', 'strides', 'ptr', 'device')[what]} edited"


def make_input(seed: int | str, index: int) -> LaunchInput:
    """Input `index` of the run seeded `seed`."""
    return input_from(Random(f"{seed}:{index}"))


def input_from(rng: Random) -> LaunchInput:
    """One input, every choice drawn from `rng`."""
    name, blob = rng.choice(seed_contracts())
    contract = pb.LaunchContract.FromString(blob)
    fitting, fitting_grid = fitting_args(contract, rng)
    edits = tuple(mutate_contract(contract, rng) for _ in range(rng.choice((0, 1, 1, 1, 2, 3))))
    args, grid, arg_edits = fitting, fitting_grid, ()
    if rng.random() < 0.3:
        args, grid, what = mutate_args(fitting, fitting_grid, rng)
        arg_edits = (what,)
    return LaunchInput(name, contract, args, grid, edits, arg_edits, fitting, fitting_grid)


def describe(case: LaunchInput) -> str:
    return f"{case.seed}: {'; '.join(case.contract_edits + case.arg_edits) or 'unmutated'}"
