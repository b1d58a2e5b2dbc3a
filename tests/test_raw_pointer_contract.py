"""End to end on the CPU: the compiled `scale_ptr` (raw pointers) carries a contract whose
pointer params and host grid the Python client validates, refuses without the opt-in, and
plans a launch from."""

from __future__ import annotations

import struct

import pytest

from client_stubs import ContractError, DeviceTensor, Kernel, LaunchGridError
from client_stubs.contract import HOST, POINTER, validate_contract
from lowering.contract import ParamKind
from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from service.convert import contract_to_proto
from tests.lowering.kernels import compile_example

N = 5000


@pytest.fixture(scope="module")
def compiled():  # type: ignore[no-untyped-def]
    result = compile_example("scale_ptr.rs", "scale_ptr", {"B": "1024"})
    if result.cubin is None:
        pytest.skip("tileiras not installed")
    assert result.ok, result.diagnostics
    return result


def test_the_contract_names_pointer_params_and_a_host_grid(compiled) -> None:  # type: ignore[no-untyped-def]
    contract = compiled.contract
    assert [p.kind for p in contract.params] == [
        ParamKind.POINTER,
        ParamKind.POINTER,
        ParamKind.SCALAR,
        ParamKind.SCALAR,
    ]
    assert contract.host_grid and contract.grid_outputs == ()
    assert contract.assumptions == ()  # the kernel's own `assume_div_by` is its promise
    message = contract_to_proto(contract)
    assert message.grid.mode == pb.GridRule.MODE_HOST
    assert [p.kind for p in message.params[:2]] == [pb.PARAM_KIND_POINTER] * 2
    assert [(s.role, s.ctype, s.offset) for s in message.abi] == [
        (pb.SLOT_ROLE_PTR, "u64", 0),
        (pb.SLOT_ROLE_PTR, "u64", 8),
        (pb.SLOT_ROLE_VALUE, "f32", 16),
        (pb.SLOT_ROLE_VALUE, "i32", 20),
    ]
    spec = validate_contract(message)
    assert spec.grid_mode == HOST and [p.kind for p in spec.params[:2]] == [POINTER] * 2


def test_the_client_launches_it_only_when_asked_to(compiled) -> None:  # type: ignore[no-untyped-def]
    message = contract_to_proto(compiled.contract)
    with pytest.raises(ContractError, match="raw pointers"):
        Kernel(compiled.cubin, message)
    kernel = Kernel(compiled.cubin, message, allow_unchecked=True)
    y, x = DeviceTensor(0x7000_0000, N), DeviceTensor(0x8000_0000, N)
    blocks = -(-N // 1024)
    plan = kernel.plan(y, x, 2.0, N, grid=(blocks, 1, 1))
    assert plan.grid == (5, 1, 1)
    assert plan.param_buffer == struct.pack("<QQfi", 0x7000_0000, 0x8000_0000, 2.0, N)
    with pytest.raises(LaunchGridError):
        kernel.plan(y, x, 2.0, N)
