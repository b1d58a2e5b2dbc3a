"""PlanMemo: a repeated launch with the same arguments reuses the checked, packed plan."""

from __future__ import annotations

import gc

import pytest

from client_stubs import DeviceTensor, Kernel, MovedArgumentError, plan_launch
from client_stubs.plan_memo import PlanMemo

CUBIN = b"\x7fELF fake"


def saxpy_args(a: object = 2.0) -> list[object]:
    return [a, DeviceTensor(0x1000_0000, 4096), DeviceTensor(0x2000_0000, 4096).partition([128])]


def test_same_arguments_hit(saxpy):
    args = tuple(saxpy_args())
    memo = PlanMemo()
    assert memo.lookup(args) is None
    plan = plan_launch(saxpy, args)
    memo.store(args, plan)
    again = memo.lookup(args)
    assert again is not None and again.param_buffer == plan.param_buffer
    assert again.results == args and len(again.keep_alive) == 2


def test_changed_scalar_or_new_tensor_misses(saxpy):
    args = saxpy_args()
    memo = PlanMemo()
    memo.store(tuple(args), plan_launch(saxpy, args))
    assert memo.lookup((3.0, *args[1:])) is None
    assert memo.lookup((-0.0, *args[1:])) is None and memo.lookup((0.0, *args[1:])) is None
    assert memo.lookup((2, *args[1:])) is None  # int, not float
    assert memo.lookup((args[0], DeviceTensor(0x1000_0000, 4096), args[2])) is None


def test_foreign_arguments_are_not_memoized(saxpy):
    memo = PlanMemo()
    args = (2.0, object(), object())
    memo.store(args, plan_launch(saxpy, saxpy_args()))
    assert memo.lookup(args) is None


def test_memo_holds_layouts_weakly(saxpy):
    args = saxpy_args()
    memo = PlanMemo()
    memo.store(tuple(args), plan_launch(saxpy, args))
    x_layout = args[1].layout
    entry = memo.find(tuple(args))
    assert entry is not None
    key_ref = next(ref for ref in entry.layouts if ref is not None and ref() is x_layout)
    del args, x_layout, entry
    gc.collect()
    assert key_ref() is None


def test_kernel_reuses_the_plan_but_still_rejects_moved_arguments(saxpy, monkeypatch):
    from client_stubs import launcher

    calls = []
    real = launcher.plan_launch
    monkeypatch.setattr(launcher, "plan_launch", lambda *a, **k: calls.append(1) or real(*a, **k))
    kernel = Kernel(CUBIN, saxpy)
    args = saxpy_args()
    first = kernel.plan(*args)
    second = kernel.plan(*args)
    assert len(calls) == 1 and first.param_buffer == second.param_buffer
    args[2].unpartition()
    with pytest.raises(MovedArgumentError):
        kernel.plan(*args)
