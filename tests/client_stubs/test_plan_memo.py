"""PlanMemo: a repeated launch with the same arguments reuses the checked, packed plan."""

from __future__ import annotations

import gc
import weakref

import pytest

from client_stubs import DeviceTensor, Kernel, MovedArgumentError, plan_launch
from client_stubs.plan_memo import PlanMemo
from client_stubs.tensor import Moves

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
    assert memo.lookup((args[0], DeviceTensor(0x1000_4000, 4096), args[2])) is None
    assert memo.lookup((args[0], DeviceTensor(0x1000_0000, 4096, dtype="f16"), args[2])) is None
    assert memo.lookup((args[0], args[1], DeviceTensor(0x2000_0000, 4096).partition([64]))) is None


def test_new_handles_of_equal_layouts_hit(saxpy):
    """A loop that wraps the same memory in new handles every step (torch tensors through
    `DeviceTensor.wrap`) reuses the plan, handing back the new objects and their owners."""
    args = saxpy_args()
    memo = PlanMemo()
    plan = plan_launch(saxpy, args)
    memo.store(tuple(args), plan)
    owner = object()
    fresh = (2.0, DeviceTensor(0x1000_0000, 4096, owner=owner), args[2])
    again = memo.lookup(fresh)
    assert again is not None and again.param_buffer == plan.param_buffer
    assert again.results == fresh and owner in again.keep_alive


def test_foreign_arguments_are_not_memoized(saxpy):
    memo = PlanMemo()
    args = (2.0, object(), object())
    memo.store(args, plan_launch(saxpy, saxpy_args()))
    assert memo.lookup(args) is None


def test_memo_keeps_no_memory_alive(saxpy):
    class Owner:
        pass

    owner = Owner()
    died = weakref.ref(owner)
    args = [2.0, DeviceTensor(0x1000_0000, 4096, owner=owner), saxpy_args()[2]]
    memo = PlanMemo()
    memo.store(tuple(args), plan_launch(saxpy, args))
    assert memo.find(tuple(args)) is not None
    del args, owner
    gc.collect()
    assert died() is None


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


def test_alternating_argument_sets_all_stay_remembered(saxpy):
    first, second = tuple(saxpy_args()), (2.0, DeviceTensor(0x3000_0000, 4096), saxpy_args()[2])
    memo = PlanMemo()
    memo.store(first, plan_launch(saxpy, first))
    memo.store(second, plan_launch(saxpy, second))
    for _ in range(3):
        assert memo.find(first) is not memo.find(second)
        assert memo.find(first) is not None and memo.find(second) is not None


def test_the_oldest_plan_is_dropped_beyond_the_size(saxpy):
    memo = PlanMemo(size=2)
    sets = [
        (2.0, DeviceTensor(0x1000_0000 + i * 0x10_0000, 4096), saxpy_args()[2]) for i in range(3)
    ]
    for args in sets:
        memo.store(args, plan_launch(saxpy, args))
    assert memo.find(sets[0]) is None and memo.find(sets[2]) is not None
    assert len(memo.entries) == 2


def test_a_move_elsewhere_falls_back_to_the_full_comparison(saxpy):
    args = tuple(saxpy_args())
    memo = PlanMemo()
    entry = memo.store(args, plan_launch(saxpy, args))
    assert entry is not None and entry.moves == Moves.count
    DeviceTensor(0x9000_0000, 64).partition([64])  # any move anywhere
    assert entry.moves != Moves.count
    assert memo.find(args) is entry and entry.moves == Moves.count  # matched and rebound
    args[2].unpartition()
    assert memo.find(args) is None  # the consumed partition no longer matches


def test_a_dead_handle_disables_the_identity_path(saxpy):
    """A remembered handle that died can never match again, even when a new object takes
    its id (and so the argument tuple's hash): the comparison against its proxy misses."""
    args = saxpy_args()
    memo = PlanMemo()
    entry = memo.store(tuple(args), plan_launch(saxpy, args))
    assert entry is not None and memo.hit(tuple(args)) is entry
    dead = id(args[1])
    del args[1]
    gc.collect()
    reborn = DeviceTensor(0x1000_0000, 4096)
    again = (args[0], reborn, args[1])
    if id(reborn) == dead:  # the id was reused: the hash matches, the proxy does not
        assert memo.entries.get(hash(again)) is entry
    assert memo.hit(again) is None and not entry.matches(again)


def test_the_identity_path_matches_only_the_very_objects(saxpy):
    """`hit` (the launch path's identity check) accepts the remembered objects themselves,
    never an equal scalar of another type or sign, nor an equal layout in a new handle."""
    args = saxpy_args(a=1.0)
    memo = PlanMemo()
    entry = memo.store(tuple(args), plan_launch(saxpy, args))
    assert memo.hit(tuple(args)) is entry
    for scalar in (1, True, float("1.0")):  # equal values, other objects (or types)
        assert memo.hit((scalar, *args[1:])) is None
    assert memo.hit((args[0], DeviceTensor(0x1000_0000, 4096), args[2])) is None
    assert memo.hit((args[0], args[2], args[1])) is None  # the same objects, other places
    assert memo.hit(([], *args[1:])) is None  # unhashable: foreign, never remembered


def test_an_entry_whose_hash_collides_is_replaced_not_confused(saxpy, monkeypatch):
    first, second = tuple(saxpy_args()), tuple(saxpy_args())
    memo = PlanMemo()
    monkeypatch.setattr("client_stubs.plan_memo.hash", lambda _: 7, raising=False)
    entry = memo.store(first, plan_launch(saxpy, first))
    assert entry is not None and entry.ident == 7
    assert not entry.matches(second)  # the same hash, other objects
    other = memo.store(second, plan_launch(saxpy, second))
    assert memo.entries == {7: other} and other.matches(second)
