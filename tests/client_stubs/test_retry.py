"""call_with_retries: which statuses are retried, how long it waits, RetryInfo honoured."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import duration_pb2
from google.rpc import error_details_pb2, status_pb2

from client_stubs import ServiceError
from client_stubs.retry import RetryPolicy, call_with_retries, server_retry_delay


class FakeRpcError(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode, retry_after: float | None = None) -> None:
        self._code = code
        self._trailing: tuple[tuple[str, bytes], ...] = ()
        if retry_after is not None:
            delay = duration_pb2.Duration()
            delay.FromNanoseconds(int(retry_after * 1e9))
            status = status_pb2.Status(code=code.value[0], message="busy")
            status.details.add().Pack(error_details_pb2.RetryInfo(retry_delay=delay))
            self._trailing = (("grpc-status-details-bin", status.SerializeToString()),)

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return f"{self._code.name.lower()} details"

    def trailing_metadata(self) -> tuple[tuple[str, bytes], ...]:
        return self._trailing


def failing(*errors: Exception):
    queue = list(errors)
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        if queue:
            raise queue.pop(0)
        return "ok"

    return call, calls


def test_backoff_doubles_up_to_the_cap_with_jitter_in_half_to_one():
    policy = RetryPolicy(max_attempts=9, initial_backoff=0.1, max_backoff=0.5)
    assert [policy.delay(n, None, 0.0) for n in (1, 2, 3, 4)] == [0.05, 0.1, 0.2, 0.25]
    assert policy.delay(1, None, 0.999) == pytest.approx(0.09995)


def test_a_server_delay_is_a_lower_bound_and_capped():
    policy = RetryPolicy(initial_backoff=0.1, max_server_delay=2.0)
    assert policy.delay(1, 1.5, 0.0) == 1.5
    assert policy.delay(1, 60.0, 0.0) == 2.0
    assert policy.delay(1, 0.001, 0.0) == 0.05


def test_retry_info_is_read_from_the_status_details():
    assert server_retry_delay(FakeRpcError(grpc.StatusCode.RESOURCE_EXHAUSTED, 1.25)) == 1.25
    assert server_retry_delay(FakeRpcError(grpc.StatusCode.UNAVAILABLE)) is None


def test_status_details_that_do_not_parse_are_no_delay_and_still_retried():
    garbage = FakeRpcError(grpc.StatusCode.UNAVAILABLE)
    garbage._trailing = (("grpc-status-details-bin", b"\xff\xff not a status"),)
    status = status_pb2.Status(code=14)
    status.details.add(
        type_url=f"type.googleapis.com/{error_details_pb2.RetryInfo.DESCRIPTOR.full_name}",
        value=b"\xff\xff",
    )
    bad_any = FakeRpcError(grpc.StatusCode.UNAVAILABLE)
    bad_any._trailing = (("grpc-status-details-bin", status.SerializeToString()),)
    for error in (garbage, bad_any):
        assert server_retry_delay(error) is None
        call, calls = failing(error)
        assert call_with_retries(call, RetryPolicy(3, 0.001, 0.002), "Compile") == "ok"
        assert len(calls) == 2


@pytest.mark.parametrize("code", [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED])
def test_transient_statuses_are_retried(code):
    call, calls = failing(FakeRpcError(code), FakeRpcError(code, retry_after=0.7))
    slept: list[float] = []
    policy = RetryPolicy(initial_backoff=0.1)
    result = call_with_retries(call, policy, "here", sleep=slept.append, jitter=lambda: 0.0)
    assert result == "ok" and len(calls) == 3 and slept == [0.05, 0.7]


def test_other_statuses_fail_at_once_naming_status_and_place():
    call, calls = failing(FakeRpcError(grpc.StatusCode.INVALID_ARGUMENT))
    with pytest.raises(ServiceError) as info:
        call_with_retries(call, RetryPolicy(), "target t:1", sleep=lambda s: None)
    assert len(calls) == 1 and info.value.code == "INVALID_ARGUMENT"
    assert "invalid_argument details (target t:1, attempt 1/5)" in str(info.value)


def test_retries_give_up_after_max_attempts():
    call, calls = failing(*[FakeRpcError(grpc.StatusCode.UNAVAILABLE)] * 5)
    with pytest.raises(ServiceError, match="attempt 3/3"):
        call_with_retries(call, RetryPolicy(max_attempts=3), "x", sleep=lambda s: None)
    assert len(calls) == 3
