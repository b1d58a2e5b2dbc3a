"""Launching a raw-pointer kernel (`*mut E` params, grid passed by the host): contract
validation of POINTER params and the HOST grid mode, the explicit opt-in, binding a
`DeviceTensor` or a device address, the grid argument, and what reaches cuLaunchKernel."""

from __future__ import annotations

import struct

import pytest

from client_stubs import (
    ArgumentKindError,
    ContractError,
    DeviceTensor,
    DTypeMismatchError,
    Kernel,
    LaunchGridError,
    MovedArgumentError,
    ScalarValueError,
    plan_launch,
)
from client_stubs.contract import HOST, POINTER, validate_contract
from client_stubs.pending import PENDING
from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from tests.client_stubs.fake_driver import CUBIN

N = 10_000
GRID = (10, 1, 1)


def test_contract_with_pointers_validates_to_a_host_grid(kit):
    spec = validate_contract(kit.scale_ptr())
    assert spec.grid_mode == HOST and spec.host_grid and spec.grid_outputs == ()
    assert [p.kind for p in spec.params[:2]] == [POINTER, POINTER]
    assert spec.raw_pointers == ("y", "x")
    assert [(s.param, s.role, s.ctype, s.offset) for s in spec.slots] == [
        (0, "PTR", "u64", 0),
        (1, "PTR", "u64", 8),
        (2, "VALUE", "f32", 16),
        (3, "VALUE", "i32", 20),
    ]


@pytest.mark.parametrize(
    ("break_it", "message"),
    [
        (
            lambda c: c.abi.add(param=0, role=pb.SLOT_ROLE_DIM, ctype="i32", offset=24, size=4),
            "role DIM is invalid for POINTER `y`",
        ),
        (lambda c: c.params[0].declared_shape.append(4), "a pointer has no rank or shape"),
        (
            lambda c: c.assumptions.add(param=0, kind=pb.ASSUMPTION_KIND_BASE_ALIGN, value=16),
            "BASE_ALIGN does not apply to raw pointer `y`",
        ),
        (lambda c: c.grid.output_params.append(0), "grid mode HOST cannot launch"),
    ],
)
def test_inconsistent_pointer_contracts_are_refused(kit, break_it, message):
    contract = kit.scale_ptr()
    break_it(contract)
    with pytest.raises(ContractError, match=message):
        validate_contract(contract)


def test_host_grid_needs_no_output(kit, add):
    add.grid.mode = pb.GridRule.MODE_HOST
    with pytest.raises(ContractError, match="grid mode HOST cannot launch the output"):
        validate_contract(add)


def test_a_kernel_without_outputs_or_pointers_takes_the_host_grid(kit):
    """`fn f(x: &Tensor<f32, {[-1]}>, n: i32)` (reads and prints only): no output defines
    the grid, so the launch must pass it; nothing unchecked, so no opt-in is needed."""
    plain = kit.build("f", [kit.P("x", kit.IN, "f32", (-1,)), kit.P("n", kit.SCALAR, "i32")])
    plain.grid.mode = pb.GridRule.MODE_HOST
    spec = validate_contract(plain)
    assert spec.host_grid and spec.raw_pointers == ()
    x = DeviceTensor(0x7000_0000, N)
    assert plan_launch(spec, [x, N], grid=GRID).grid == GRID
    with pytest.raises(LaunchGridError, match="no output defines this kernel's grid"):
        plan_launch(spec, [x, N])
    assert Kernel(CUBIN, plain).host_grid


def test_pointer_kernels_need_the_unchecked_opt_in(kit):
    with pytest.raises(ContractError, match=r"raw pointers \(`y`, `x`\).*allow_unchecked=True"):
        Kernel(CUBIN, kit.scale_ptr())
    kernel = Kernel(CUBIN, kit.scale_ptr(), allow_unchecked=True)
    assert kernel.host_grid


def test_plan_packs_tensor_addresses_and_int_addresses(kit):
    y = DeviceTensor(0x7000_0000, N)
    plan = plan_launch(kit.scale_ptr(), [y, 0x8000_0040, 2.5, N], grid=GRID)
    assert plan.grid == GRID
    assert plan.param_buffer == struct.pack("<QQfi", 0x7000_0000, 0x8000_0040, 2.5, N)
    assert plan.keep_alive == (y.owner,)
    (access,) = plan.accesses  # the tensor is tracked as written; the bare address is not
    assert access.writes and (access.lo, access.hi) == (0x7000_0000, 0x7000_0000 + 4 * N)


@pytest.mark.parametrize(
    ("arg", "error", "message"),
    [
        (DeviceTensor(0x7000_0000, N, dtype="f16"), DTypeMismatchError, "f16"),
        (0, ScalarValueError, r"device address in \[1, 2\^64\)"),
        (1 << 64, ScalarValueError, "device address"),
        (True, ArgumentKindError, "DeviceTensor or a device address"),
        (2.0, ArgumentKindError, "DeviceTensor or a device address"),
        (DeviceTensor(0x7000_0000, N).partition([128]), ArgumentKindError, "Partition"),
    ],
)
def test_bad_pointer_arguments_are_refused(kit, arg, error, message):
    with pytest.raises(error, match=message):
        plan_launch(kit.scale_ptr(), [arg, 0x8000_0000, 1.0, N], grid=GRID)


def test_a_moved_tensor_is_not_a_pointer(kit):
    y = DeviceTensor(0x7000_0000, N)
    y.partition([128])
    with pytest.raises(MovedArgumentError, match="moved"):
        plan_launch(kit.scale_ptr(), [y, 0x8000_0000, 1.0, N], grid=GRID)


def test_a_freed_tensor_is_not_a_pointer(kit, fake_driver):
    y = DeviceTensor.empty(N)
    view = y.narrow(0, 0, N)
    y.free()
    with pytest.raises(MovedArgumentError, match=r"parameter `y`.*memory was freed"):
        plan_launch(kit.scale_ptr(), [view, 0x8000_0000, 1.0, N], grid=GRID)


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        (None, "no output defines this kernel's grid"),
        ((4, 1), r"three ints"),
        ((4.0, 1, 1), r"three ints"),
        ((0, 1, 1), "1 <= grid axis 0"),
        ((1, 70_000, 1), "1 <= grid axis 1 <= 65535"),
    ],
)
def test_the_host_grid_is_required_and_checked(kit, grid, message):
    with pytest.raises(LaunchGridError, match=message):
        plan_launch(kit.scale_ptr(), [0x7000_0000, 0x8000_0000, 1.0, N], grid=grid)


def test_other_kernels_refuse_a_grid(add):
    given = [DeviceTensor(0x1000_0000, N).partition([128]), DeviceTensor(0x2000_0000, N)]
    given.append(DeviceTensor(0x3000_0000, N))
    with pytest.raises(LaunchGridError, match="its outputs define the grid"):
        plan_launch(add, given, grid=GRID)
    with pytest.raises(LaunchGridError, match="its outputs define the grid"):
        Kernel(CUBIN, add).launch(*given, grid=GRID)


def test_launch_reaches_the_driver_with_the_host_grid(kit, fake_driver):
    kernel = Kernel(CUBIN, kit.scale_ptr(), allow_unchecked=True)
    y, x = DeviceTensor(0x7000_0000, N), DeviceTensor(0x8000_0000, N)
    kernel(y, x, 3.0, N, stream=5, grid=GRID, sync=True)
    kernel(y, x, 3.0, N, stream=5, grid=(20, 1, 1), sync=True)  # a new grid, a new plan
    launches = [a for name, a in fake_driver.calls if name == "launch"]
    assert [(grid, stream) for _, grid, _, _, stream, _ in launches] == [
        (GRID, 5),
        ((20, 1, 1), 5),
    ]
    plan = kernel.plan(y, x, 3.0, N, grid=(20, 1, 1))
    assert plan.param_buffer == struct.pack("<QQfi", 0x7000_0000, 0x8000_0000, 3.0, N)
    assert plan.slot_offsets == (0, 8, 16, 20)
    with pytest.raises(LaunchGridError, match="no output defines"):
        kernel(y, x, 3.0, N)
    assert not PENDING.others_pending(5)


def test_a_lazy_op_carries_the_host_grid(kit, fake_driver):
    kernel = Kernel(CUBIN, kit.scale_ptr(), allow_unchecked=True)
    y, x = DeviceTensor(0x7000_0000, N), DeviceTensor(0x8000_0000, N)
    results = kernel.op(y, x, 3.0, N, grid=GRID).sync()
    assert results[0] is y and results[1] is x
    launches = [a for name, a in fake_driver.calls if name == "launch"]
    assert [grid for _, grid, *_ in launches] == [GRID]
    with pytest.raises(LaunchGridError, match="no output defines"):
        kernel.op(y, x, 3.0, N).sync()


def test_a_repeated_host_grid_launch_reuses_its_checked_plan(kit, fake_driver, monkeypatch):
    from client_stubs import launcher

    planned: list[object] = []
    real = launcher.plan_launch
    monkeypatch.setattr(
        launcher, "plan_launch", lambda *a, **k: planned.append(k.get("grid")) or real(*a, **k)
    )
    kernel = Kernel(CUBIN, kit.scale_ptr(), allow_unchecked=True)
    y, x = DeviceTensor(0x7000_0000, N), DeviceTensor(0x8000_0000, N)
    for _ in range(3):
        kernel(y, x, 3.0, N, grid=GRID)
    kernel(y, x, 3.0, N, grid=(GRID[0], 1, 1))  # an equal grid in another tuple
    kernel(y, x, 3.0, N, grid=[10, 1, 1])  # and as a list
    assert planned == [GRID]  # checked once
    kernel(y, x, 3.0, N, grid=(20, 1, 1))  # the grid is part of what is remembered
    kernel(y, x, 3.0, N + 1, grid=(20, 1, 1))
    assert planned == [GRID, (20, 1, 1), (20, 1, 1)]
    for _ in range(2):  # a refused grid is refused every time, never remembered
        with pytest.raises(LaunchGridError, match="1 <= grid axis 0"):
            kernel(y, x, 3.0, N, grid=(0, 1, 1))
    launches = [a for name, a in fake_driver.calls if name == "launch"]
    assert [grid for _, grid, *_ in launches] == [GRID] * 5 + [(20, 1, 1)] * 2
