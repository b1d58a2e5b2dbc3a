"""client_stubs.driver: the parameter-layout check reads no parameter past the last one."""

from __future__ import annotations

import enum
from types import SimpleNamespace

import pytest

from client_stubs import driver
from client_stubs.errors import ContractError


class _Status(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_NOT_SUPPORTED = 801


_PARAMS = [(0, 8), (8, 4), (12, 4)]


def _fake_driver(with_count: bool) -> tuple[SimpleNamespace, list[int]]:
    probed: list[int] = []

    def info(function: object, index: int) -> tuple[_Status, int, int]:
        probed.append(index)
        if index < len(_PARAMS):
            return (_Status.CUDA_SUCCESS, *_PARAMS[index])
        return (_Status.CUDA_ERROR_INVALID_VALUE, 0, 0)

    fake = SimpleNamespace(cuFuncGetParamInfo=info)
    if with_count:
        fake.cuFuncGetParamCount = lambda function: (_Status.CUDA_SUCCESS, len(_PARAMS))
    return fake, probed


@pytest.mark.parametrize("with_count", [True, False])
def test_param_layout_reads_every_parameter(
    monkeypatch: pytest.MonkeyPatch, with_count: bool
) -> None:
    fake, probed = _fake_driver(with_count)
    monkeypatch.setitem(driver._state, "cu", fake)
    layout = driver.param_layout(object(), len(_PARAMS))
    assert [(p.offset, p.size) for p in layout or []] == _PARAMS
    # no query runs past the last parameter (a failing driver call, an error under memcheck)
    assert probed == [0, 1, 2]


@pytest.mark.parametrize("with_count", [True, False])
@pytest.mark.parametrize("expected", [_PARAMS[:2], [*_PARAMS, (16, 8)]])
def test_a_contract_with_other_parameters_is_refused(
    monkeypatch: pytest.MonkeyPatch, with_count: bool, expected: list[tuple[int, int]]
) -> None:
    fake, _ = _fake_driver(with_count)
    monkeypatch.setitem(driver._state, "cu", fake)
    if expected == _PARAMS[:2] and not with_count:
        # without a count, only the contract's parameters are read: the prefix matches
        driver.verify_param_layout(object(), expected, "k")
        return
    with pytest.raises(ContractError, match="parameter layout"):
        driver.verify_param_layout(object(), expected, "k")
