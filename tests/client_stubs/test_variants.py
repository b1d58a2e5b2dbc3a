"""Variants: one kernel in several variants, launched as one; each launch runs the best variant
its arguments meet, chosen once per argument layout (fake driver)."""

from __future__ import annotations

import pytest

from client_stubs import (
    AssumptionError,
    DeviceTensor,
    DTypeMismatchError,
    Graph,
    Kernel,
    OverlapError,
    Variants,
    driver,
    variants,
)
from protos.generated.cutile.compile.v1 import contract_pb2 as pb

N = 4096
Z, X, Y = 0x7F00_0000_0000, 0x7F10_0000_0000, 0x7F20_0000_0000


def _variant(
    kit, name: str, divisor: int = 0, x_align: int = 16, min_tile_blocks: int = 0
) -> Kernel:
    """add<B=128> assuming dims of x and y divisible by `divisor` (0: no facts) and x's base
    aligned to `x_align`, for launches of `min_tile_blocks` or more; its cubin names it."""
    contract = kit.add(block=128)
    contract.launch.min_tile_blocks = min_tile_blocks
    for param in (0, 1, 2):
        align = x_align if param == 1 else 16
        contract.assumptions.add(param=param, kind=pb.ASSUMPTION_KIND_BASE_ALIGN, value=align)
        if divisor and param:
            contract.assumptions.add(param=param, kind=pb.ASSUMPTION_KIND_DIM_DIV, value=divisor)
    return Kernel(f"{name} cubin".encode(), contract)


@pytest.fixture
def family(kit) -> Variants:
    """div16 (best), div4, general, and a variant relaxing x's alignment to 4 bytes."""
    kernels = [_variant(kit, "div16", 16), _variant(kit, "div4", 4), _variant(kit, "general")]
    return Variants([*kernels, _variant(kit, "relaxed", 0, x_align=4)], general=2)


@pytest.fixture
def launched(fake_driver, monkeypatch) -> list[str]:
    """The variant each launch ran (the fake driver's function is the cubin's name)."""
    monkeypatch.setattr(driver, "load_function", lambda cubin, *a: cubin.decode().split()[0])
    names: list[str] = []
    monkeypatch.setattr(driver, "launch_params", lambda function, *a: names.append(function))
    return names


@pytest.fixture
def plans(family, monkeypatch) -> list[str]:
    """The variants `plan_launch` checked, in order."""
    checked: list[str] = []
    real = variants.plan_launch
    names = {id(k.spec): k.cubin.decode().split()[0] for k in family.variants}

    def counting(spec, args, **kw):
        checked.append(names[id(spec)])
        return real(spec, args, **kw)

    monkeypatch.setattr(variants, "plan_launch", counting)
    return checked


def args(n: int = N, x_offset: int = 0, x: DeviceTensor | None = None) -> tuple[object, ...]:
    z = DeviceTensor(Z, (n,)).partition((128,))
    return z, x if x is not None else DeviceTensor(X + x_offset, (n,)), DeviceTensor(Y, (n,))


def test_each_launch_runs_the_most_specialized_variant_its_arguments_meet(family, launched):
    family(*args(4096))
    family(*args(4100))  # divisible by 4, not 16
    family(*args(4097))
    family(*args(4096, x_offset=4))  # x[1:] of f32: only the relaxed variant takes it
    assert launched == ["div16", "div4", "general", "relaxed"]
    assert family.choose(*args(4096, x_offset=16)).cubin.startswith(b"div16")


def test_arguments_no_variant_takes_raise_the_general_kernels_error(family, launched):
    with pytest.raises(AssumptionError, match="address of `x` % 16 == 0"):
        family(*args(4096, x_offset=2))  # not even the relaxed variant: the general's error
    z, x, _ = args()
    with pytest.raises(DTypeMismatchError):
        family(z, x, DeviceTensor(Y, (N,), dtype="f16"))
    with pytest.raises(OverlapError):
        family(z, x, DeviceTensor(Z, (N,)))  # y aliases the output: every check still runs
    assert launched == []


def test_a_repeated_launch_reuses_the_choice_and_the_plan(family, launched, plans):
    given = args(4097)
    for _ in range(3):
        family(*given)
    assert launched == ["general"] * 3
    assert plans == ["div16", "div4", "general"]  # refused once each, the general planned once


def test_new_arguments_of_a_known_layout_are_checked_once_by_the_variant_it_chose(
    family, launched, plans
):
    family(*args(4097))
    plans.clear()
    family(*args(4097))  # new objects of equal values: the memo's plan, unchecked
    assert plans == []
    family(*args(4097, x_offset=64))  # another address, the same layout class
    assert plans == ["general"] and launched == ["general"] * 3


def test_the_memo_follows_the_layout_when_it_changes(family, launched, plans):
    z, x, y = args(4096)
    family(z, x, y)
    short = (
        DeviceTensor(Z, (N - 4,)).partition((128,)),
        x.narrow(0, 4, N - 4),
        y.narrow(0, 0, N - 4),
    )
    family(*short)  # 16-byte aligned views of 4092 elements: divisible by 4 only
    family(z, DeviceTensor(X + 4, (N,)), y)  # x[1:]
    plans.clear()
    family(z, x, y)  # the first layouts again: from the memo, unchecked
    assert launched == ["div16", "div4", "relaxed", "div16"] and plans == []


def test_a_variant_kernel_runs_in_ops_and_graphs(family, launched, fake_driver):
    given = args(4097)
    family.op(*given).sync()
    with Graph.capture(family.op(*args(4096)).then(family.op(*given))) as graph:
        graph.replay(sync=True)
    assert launched == ["general", "div16", "general"]


def test_metadata_is_the_general_kernels(family):
    assert family.general.cubin.startswith(b"general")
    assert family.sha256 == family.general.sha256 and family.spec is family.general.spec
    assert family.name == "add" and family.generics == {"B": "128"}
    assert "4 variants" in repr(family)
    plan = family.plan(*args(4100))
    assert plan.entry_symbol == "add_entry" and plan.grid == (33, 1, 1)


def test_an_occupancy_variant_runs_first_but_only_for_launches_of_its_many_tile_blocks(
    kit, launched
):
    occupancy = _variant(kit, "occupancy", min_tile_blocks=64)
    family = Variants([occupancy, _variant(kit, "div16", 16), _variant(kit, "general")], 2)
    family(*args(64 * 128))  # 64 tile blocks of 128: the occupancy variant's launches
    family(*args(63 * 128))  # one fewer: the best of the others
    family(*args(62 * 128 + 1))  # 63 tiles, the last one partial
    family(*args(64 * 128))  # the memo follows the tile count
    assert launched == ["occupancy", "div16", "general", "occupancy"]
    assert family.choose(*args(4096 * 128)).cubin.startswith(b"occupancy")


def _raw(kit, name: str, min_tile_blocks: int = 0) -> Kernel:
    """scale_ptr<B=1024> (a raw-pointer kernel: the launch gives its grid)."""
    contract = kit.scale_ptr(block=1024)
    contract.launch.min_tile_blocks = min_tile_blocks
    return Kernel(f"{name} cubin".encode(), contract, allow_unchecked=True)


def test_a_host_grid_decides_the_occupancy_variant_on_every_launch(kit, launched):
    big, small, raw_args = (4096, 1, 1), (8, 1, 1), (Y, X, 2.0, 4096 * 1024)
    family = Variants([_raw(kit, "occupancy", 1024), _raw(kit, "general")], general=1)
    for grid in (big, small, big, small):  # one argument layout, two launch sizes
        family(*raw_args, grid=grid)
    assert launched == ["occupancy", "general", "occupancy", "general"]


def test_the_general_kernel_serves_every_size(kit, launched):
    only = Variants([_raw(kit, "occupancy", 1024)])  # its general: the last, here this one
    only(Y, X, 2.0, 1024, grid=(8, 1, 1))
    assert launched == ["occupancy"]


def test_tile_blocks_are_counted_not_the_ctas_of_their_clusters(kit, launched):
    def clustered(name: str, least: int) -> Kernel:
        contract = kit.add(block=128)
        contract.launch.cluster_blocks = 2
        contract.launch.min_tile_blocks = least
        return Kernel(f"{name} cubin".encode(), contract)

    family = Variants([clustered("occupancy", 1024), clustered("general", 0)], general=1)
    family(*args(512 * 128))  # 512 tile blocks: 1024 CTAs
    family(*args(1024 * 128))
    assert launched == ["general", "occupancy"]
