"""Fuzz the service's request handling and the hosts' request keys with hostile compile
requests (tests/fuzz/request_inputs.py).

    python -m tests.fuzz.compile_requests --inputs N [--seed S] [--rust]

Every input must:
- get a local cache key from the Python host (`client_stubs.client_core.request_key`);
- be refused by the service's conversion (`service.convert.request_from_proto`) with field
  violations that each name a field, or become a domain request;
- then compile (tileiras replaced by a stand-in) to diagnostics without CT0999 or a result
  whose contract the hosts accept, within TIME_BOUND seconds;
- with `--rust`, get the same cache key from the Rust host (`cargo test --test host_vectors`
  reading the inputs from $CUTILE_REQUEST_KEY_VECTORS): both hosts share one artifact cache.

`tests/fuzz/test_compile_requests.py` runs a brief campaign under pytest.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from client_stubs.client_core import request_key
from client_stubs.contract import validate_contract
from client_stubs.errors import ContractError
from lowering.pipeline import compile_kernel
from parser import codes
from service.convert import InvalidRequest, contract_to_proto, request_from_proto
from tests.fake_cubin import StandInAssembler
from tests.fuzz.campaign import report, rust_disagrees, scratch_folder
from tests.fuzz.request_inputs import RequestInput, describe, make_input

TIME_BOUND = 10.0  # seconds one input may take in process
PARSE_LIMIT_MS = 2000  # the server's parse limit
STAND_IN = StandInAssembler()


def problems_of(case: RequestInput) -> list[str]:
    """What is wrong with how the service and the host handled `case` (empty: nothing)."""
    started = time.perf_counter()
    try:
        request_key(case.request)
    except Exception as exc:  # the finding itself
        return [f"request key: {type(exc).__name__}: {exc}"]
    try:
        request = request_from_proto(case.request)
    except InvalidRequest as exc:
        unnamed = [v for v in exc.violations if not v.field or not v.description]
        if unnamed or not exc.violations:
            return [f"violation without a field or text: {unnamed}"]
        return []
    except Exception as exc:
        return [f"conversion: {type(exc).__name__}: {exc}"]
    try:
        result = compile_kernel(request, assembler=STAND_IN, parse_limit_ms=PARSE_LIMIT_MS)  # type: ignore[arg-type]
    except Exception as exc:
        return [f"compile: {type(exc).__name__}: {exc}"]
    found = [
        f"internal error: {d.message[:300]}"
        for d in result.diagnostics
        if d.code is codes.INTERNAL_ERROR
    ]
    if result.ok:
        try:
            validate_contract(contract_to_proto(result.contract))  # type: ignore[arg-type]
        except ContractError as exc:
            found.append(f"bad contract: {exc}")
    took = time.perf_counter() - started
    if took > TIME_BOUND:
        found.append(f"slow: {took:.1f} s")
    return found


def key_case(name: str, case: RequestInput) -> dict[str, Any]:
    """The input as a request-key vector (the format of tests/vectors/host/request_keys.json,
    without the `inputs` a Source would be built from)."""
    return {
        "name": name,
        "about": describe(case),
        "request_pb": case.request.SerializeToString(deterministic=True).hex(),
        "key": request_key(case.request),
    }


def run_rust(cases: Sequence[dict[str, Any]], folder: Path) -> str | None:
    """The Rust host's keys of `cases`: None when every one is Python's, else cargo's report."""
    return rust_disagrees(
        cases, folder, "CUTILE_REQUEST_KEY_VECTORS", ("host_vectors", "request_keys")
    )


def run(seed: str, count: int, rust: bool) -> int:
    started = time.perf_counter()
    findings: dict[int, list[str]] = {}
    keys = []
    for index in range(count):
        case = make_input(seed, index)
        found = problems_of(case)
        if found:
            findings[index] = found
        else:
            keys.append(key_case(f"input_{index}", case))
    took = time.perf_counter() - started
    report(
        f"inputs={count} findings={sum(map(len, findings.values()))} "
        f"({count / took:.0f} inputs/s, {took:.0f} s)",
        findings,
        lambda index: describe(make_input(seed, index)),
    )
    failed = bool(findings)
    if rust:
        differs = run_rust(keys, scratch_folder())
        same = f"rust: the same key for all {len(keys)}"
        print(same if differs is None else f"rust: differs\n{differs}")
        failed = failed or differs is not None
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=1000)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--rust", action="store_true", help="the Rust host's keys too")
    options = parser.parse_args(argv)
    return run(options.seed, options.inputs, options.rust)


if __name__ == "__main__":
    sys.exit(main())
