"""Served: the general kernel until a launch's measured facts bring their specialization,
compiled once per facts, waited for or (non-blocking) compiled in the background."""

from __future__ import annotations

import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor

import grpc
import pytest
from google.protobuf.message import DecodeError

from client_stubs import (
    CompileError,
    DeviceTensor,
    IntegrityError,
    Kernel,
    MovedArgumentError,
    ServiceError,
    driver,
)
from client_stubs.served import Served
from protos.generated.cutile.compile.v1 import compile_pb2
from protos.generated.cutile.compile.v1 import contract_pb2 as pb

Z, X, Y = 0x7F00_0000_0000, 0x7F10_0000_0000, 0x7F20_0000_0000


class Service:
    """compile_for: an add<B=128> kernel assuming what the facts say (its cubin lists them)."""

    def __init__(
        self,
        kit,
        fail: bool = False,
        gate: threading.Event | None = None,
        error: Exception | None = None,
    ) -> None:
        self.kit = kit
        self.fail = fail
        self.error = error
        self.gate = gate
        self.asked: list[list[tuple[str, list[int], int]]] = []
        self.occupancies: list[int] = []  # the occupancy variant asked for, per request

    def __call__(self, facts: list[compile_pb2.TensorFacts], occupancy: int = 0) -> Kernel:
        described = [(f.param, list(f.dim_divisors), f.base_align) for f in facts]
        self.asked.append(described)
        self.occupancies.append(occupancy)
        if self.gate is not None:
            self.gate.wait(5)
        if self.fail:
            raise CompileError("add", ["error: no"], ())
        if self.error is not None:
            raise self.error
        contract = self.kit.add(block=128)
        params = {p.name: p.index for p in contract.params}
        for fact in facts:
            align = fact.base_align or 16
            contract.assumptions.add(
                param=params[fact.param], kind=pb.ASSUMPTION_KIND_BASE_ALIGN, value=align
            )
            for axis, divisor in enumerate(fact.dim_divisors):
                kind = pb.ASSUMPTION_KIND_DIM_DIV
                contract.assumptions.add(
                    param=params[fact.param], kind=kind, axis=axis, value=divisor
                )
        contract.launch.min_tile_blocks = 1024 if occupancy else 0
        return Kernel(f"special {described} {occupancy}".encode(), contract)


def general(kit, takes_occupancy_variant: bool = True) -> Kernel:
    contract = kit.add(block=128)
    contract.launch.takes_occupancy_variant = takes_occupancy_variant
    for param in range(3):
        contract.assumptions.add(param=param, kind=pb.ASSUMPTION_KIND_BASE_ALIGN, value=16)
    return Kernel(b"general cubin", contract)


class ByHand(Executor):
    """An executor whose work runs when the test says so."""

    def __init__(self) -> None:
        self.queued: list[tuple[Future, object, tuple]] = []

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        future: Future = Future()
        self.queued.append((future, fn, args))
        return future

    def run_all(self) -> None:
        for future, fn, args in self.queued:
            try:
                future.set_result(fn(*args))  # type: ignore[operator]
            except Exception as exc:
                future.set_exception(exc)
        self.queued = []


@pytest.fixture
def launched(fake_driver, monkeypatch) -> list[str]:
    monkeypatch.setattr(driver, "load_function", lambda cubin, *a: cubin.decode().split()[0])
    names: list[str] = []
    monkeypatch.setattr(driver, "launch_params", lambda function, *a: names.append(function))
    return names


def args(n: int = 4096, x_offset: int = 0) -> tuple[object, ...]:
    z = DeviceTensor(Z, (n,)).partition((128,))
    return z, DeviceTensor(X + x_offset, (n,)), DeviceTensor(Y, (n,))


def test_the_first_launch_of_a_layout_waits_for_its_specialization_once(kit, launched):
    service = Service(kit)
    served = Served(general(kit), service)
    given = args(4096)
    served(*given)
    served(*given)
    served(*args(4096))  # new objects, the same layout
    assert launched == ["special"] * 3
    assert service.asked == [[("x", [16], 0), ("y", [16], 0), ("z", [16], 0)]]
    served(*args(4104))  # divisible by 8: another specialization
    assert service.asked[-1][0] == ("x", [8], 0) and len(served.specializations) == 2


def test_facts_that_say_nothing_run_the_general_kernel_without_a_request(kit, launched):
    service = Service(kit)
    served = Served(general(kit), service)
    served(*args(4097))
    assert launched == ["general"] and service.asked == []


def test_a_launch_of_many_tile_blocks_asks_for_the_occupancy_variant_with_its_facts(kit, launched):
    service = Service(kit)
    served = Served(general(kit), service)
    served(*args(1024 * 128))  # 1024 tile blocks of 128
    served(*args(1023 * 128))  # one fewer: the facts alone
    served(*args(1024 * 128 + 1))  # nothing divisible, but many blocks: the variant alone
    served(*args(4097))  # neither: the general kernel, no request
    assert service.occupancies == [4, 0, 4]
    assert service.asked[0] == [("x", [16], 0), ("y", [16], 0), ("z", [16], 0)]
    assert service.asked[2] == []
    assert launched == ["special", "special", "special", "general"]
    assert len(served.specializations) == 3
    # an entry that takes no occupancy variant (it names one, or multiplies tiles): facts only
    service = Service(kit)
    served = Served(general(kit, takes_occupancy_variant=False), service)
    served(*args(1024 * 128))
    served(*args(1024 * 128 + 1))
    assert service.occupancies == [0] and launched[-2:] == ["special", "general"]


def test_a_misaligned_view_gets_a_kernel_that_assumes_only_what_it_has(kit, launched):
    service = Service(kit)
    served = Served(general(kit), service)
    served(*args(4096, x_offset=4))  # x[1:] of f32: the general kernel refuses it
    assert service.asked == [[("x", [16], 4), ("y", [16], 0), ("z", [16], 0)]]
    assert launched == ["special"]


def test_non_blocking_runs_the_general_kernel_until_the_specialization_arrives(kit, launched):
    service, executor = Service(kit), ByHand()
    served = Served(general(kit), service, executor=executor)
    given = args(4096)
    served(*given)
    served(*given)
    assert launched == ["general", "general"] and len(executor.queued) == 1
    served(*args(4096))  # the same facts: no second request
    assert len(executor.queued) == 1 and service.asked == []
    executor.run_all()
    served(*given)  # the memo of the general kernel's plan was dropped
    assert launched[-1] == "special" and len(service.asked) == 1


def test_non_blocking_waits_when_only_the_specialization_takes_the_arguments(kit, launched):
    gate = threading.Event()
    service = Service(kit, gate=gate)
    with ThreadPoolExecutor(1) as executor:
        served = Served(general(kit), service, executor=executor)
        threading.Timer(0.05, gate.set).start()
        served(*args(4096, x_offset=4))
    assert launched == ["special"]


def test_a_specialization_that_does_not_compile_leaves_the_general_kernel(kit, launched):
    service = Service(kit, fail=True)
    served = Served(general(kit), service)
    served(*args(4096))
    served(*args(4096))
    assert launched == ["general", "general"] and len(service.asked) == 1  # asked once
    assert [type(e) for e in served.errors] == [CompileError]


def test_a_failed_background_compile_leaves_the_general_kernel(kit, launched):
    service, executor = Service(kit, fail=True), ByHand()
    served = Served(general(kit), service, executor=executor)
    served(*args(4096))
    executor.run_all()
    served(*args(4096))
    assert launched == ["general", "general"] and len(service.asked) == 1
    assert [type(e) for e in served.errors] == [CompileError] and executor.queued == []


def test_bad_arguments_raise_the_general_kernels_error(kit, launched):
    service = Service(kit)
    served = Served(general(kit), service)
    z, x, y = args()
    z.unpartition()
    with pytest.raises(MovedArgumentError):
        served(z, x, y)
    assert service.asked == [] and launched == []


@pytest.mark.parametrize(
    "error",
    [
        ServiceError(grpc.StatusCode.UNAVAILABLE, "Compile on x: down"),
        IntegrityError("`add` from x: cubin sha256 differs"),
        DecodeError("not an artifact"),
    ],
)
def test_a_specialization_the_service_cannot_give_leaves_the_general_kernel(kit, launched, error):
    """The general kernel takes these arguments: an outage or a bad reply must not fail the
    launch (or be asked again at every launch)."""
    service = Service(kit, error=error)
    served = Served(general(kit), service)
    served(*args(4096))
    served(*args(4096))
    assert launched == ["general", "general"] and len(service.asked) == 1
    assert served.errors == [error]


def test_a_non_blocking_kernel_outliving_its_client_compiles_in_the_launch(kit, launched):
    service = Service(kit)
    executor = ThreadPoolExecutor(1)
    executor.shutdown()  # as `with CompileClient(...)` ending does
    served = Served(general(kit), service, executor=executor)
    served(*args(4096))
    assert launched == ["special"] and len(service.asked) == 1


def test_a_host_grid_decides_the_occupancy_variant_per_launch_size(kit, launched):
    def raw(name: str, least: int = 0) -> Kernel:
        contract = kit.scale_ptr(block=1024)
        contract.launch.min_tile_blocks = least
        contract.launch.takes_occupancy_variant = True
        return Kernel(f"{name} cubin".encode(), contract, allow_unchecked=True)

    asked: list[int] = []

    def compile_for(facts: list, occupancy: int) -> Kernel:
        asked.append(occupancy)
        return raw(f"occ{occupancy}", 1024 if occupancy else 0)

    big, small, raw_args = (4096, 1, 1), (8, 1, 1), (Z, X, 2.0, 4096 * 1024)
    served = Served(raw("general"), compile_for)
    for grid in (small, big, small, big):  # one argument layout, two launch sizes
        served(*raw_args, grid=grid)
    assert asked == [4] and launched == ["general", "occ4", "general", "occ4"]
