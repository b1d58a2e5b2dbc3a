"""Fuzz the hosts' launch checks: hostile contracts and arguments (tests/fuzz/contract_inputs.py)
through the Python planner, the Python launch path, and the Rust planner.

    python -m tests.fuzz.launch_contracts --inputs N [--seed S] [--rust] [--out DIR]

Every input must come back as an accepted plan or a `ClientError` (no other exception, within
TIME_BOUND seconds), and:
- an accepted plan packs exactly the contract's `param_buffer_bytes`, every ABI slot inside
  them, and a grid the driver takes (x in 1..2^31-1, y and z in 1..65535);
- `Kernel.launch` (on the recording fake driver, tests/client_stubs/fake_driver.py) gives the
  planner's verdict: the same error, or a launch of the same grid and bytes; when only the
  arguments were mutated, the kernel first launches the fitting arguments, so the mutated
  launch meets a warm plan memo (client_stubs/plan_memo.py) and must still be checked in full;
- with `--rust`, the Rust host plans every input too (`cargo test --test launch_vectors`
  reading the inputs from $CUTILE_LAUNCH_VECTORS) and must give the same verdict, grid,
  bytes and message, and never panic.

Failing inputs are printed with their number (`make_input(seed, number)` makes one again) and,
with `--out`, saved as launch-vector JSON. `tests/fuzz/test_launch_contracts.py` runs a brief
campaign under pytest; `tests/vectors/launch/fuzzed.json` keeps a seeded sample of inputs for
both hosts.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from client_stubs import Kernel, driver
from client_stubs.errors import ClientError
from tests.client_stubs.fake_driver import CUBIN, FakeDriver
from tests.fuzz.campaign import report, rust_disagrees, scratch_folder
from tests.fuzz.contract_inputs import LaunchInput, describe, make_input
from tests.vectors.args import build_arg, outcome

TIME_BOUND = 5.0  # seconds one input may take, planner and launch (GC pauses of a long run)
GRID_LIMITS = (2**31 - 1, 65535, 65535)
MESSAGE_BOUND = 8192  # characters an error message may take


def vector_case(name: str, case: LaunchInput, expect: dict[str, Any]) -> dict[str, Any]:
    """The input as a launch vector (the format of tests/vectors/launch)."""
    return {
        "name": name,
        "about": describe(case),
        "contract_pb": case.contract.SerializeToString(deterministic=True).hex(),
        "contract": json_format.MessageToDict(case.contract, preserving_proto_field_name=True),
        "args": case.args,
        "grid": case.grid,
        "expect": expect,
    }


def planner_verdict(case: LaunchInput) -> dict[str, Any]:
    """`tests.vectors.args.outcome`, with anything but a ClientError as {"exception": ...},
    and {"unbuildable": ...} for arguments no host can hold (a tensor the constructors refuse:
    a negative extent, an int64 overflow), which are no launch to check."""
    try:
        [build_arg(a) for a in case.args]
    except (ValueError, TypeError, OverflowError) as exc:
        return {"unbuildable": f"{type(exc).__name__}: {exc}"}
    except ClientError:
        pass  # the planner's verdict says so
    try:
        return outcome(case.contract, case.args, case.grid)
    except Exception as exc:  # the finding itself
        return {"exception": f"{type(exc).__name__}: {exc}"}


def plan_problems(case: LaunchInput, expect: dict[str, Any]) -> list[str]:
    """What is wrong with the planner's verdict on its own."""
    if "unbuildable" in expect:
        return []
    if "exception" in expect:
        return [f"the planner raised {expect['exception']}"]
    if "error" in expect:
        message = expect["error"]["message"]
        return [f"a {len(message)}-character message"] if len(message) > MESSAGE_BOUND else []
    plan = expect["accepted"]
    buffer = bytes.fromhex(plan["param_buffer"])
    problems = []
    declared = case.contract.launch.param_buffer_bytes  # 0: up to the last slot's end
    if declared and len(buffer) != declared:
        problems.append(f"{len(buffer)} bytes packed for param_buffer_bytes {declared}")
    for slot in case.contract.abi:
        if slot.offset + slot.size > len(buffer):
            problems.append(f"slot at {slot.offset}+{slot.size} past the {len(buffer)}-byte buffer")
    grid = plan["grid"]
    limits = zip(grid, GRID_LIMITS, strict=False)
    if len(grid) != 3 or any(not 1 <= g <= limit for g, limit in limits):
        problems.append(f"grid {grid} outside the driver's limits")
    return problems


def launch_verdict(
    case: LaunchInput,
    expect: dict[str, Any],
    fitting: LaunchInput | None,
    patch: pytest.MonkeyPatch,
) -> dict[str, Any]:
    """What `Kernel.launch` does with the input on the fake driver (after launching `fitting`
    on the same kernel, when given), in the form of the planner's verdict `expect`."""
    launched: list[tuple[tuple[int, ...], bytes]] = []
    size = len(bytes.fromhex(expect["accepted"]["param_buffer"])) if "accepted" in expect else 0

    first = case.contract.abi[0].offset if case.contract.abi else 0  # kernelParams[0] points there

    def launch(function, grid, block, smem, stream, address) -> None:  # type: ignore[no-untyped-def]
        base = (ctypes.c_void_p.from_address(address).value or 0) - first
        launched.append((tuple(grid), ctypes.string_at(base, size)))

    patch.setattr(driver, "launch_params", launch)
    patch.setattr(driver, "launch_early", launch)
    try:
        kernel = Kernel(CUBIN, case.contract, allow_unchecked=True)
        if fitting is not None:
            _launch(kernel, fitting)
            launched.clear()
        _launch(kernel, case)
    except ClientError as exc:
        param = getattr(exc, "param", None)
        return {"error": {"kind": type(exc).__name__, "param": param, "message": str(exc)}}
    except Exception as exc:  # the finding itself
        return {"exception": f"{type(exc).__name__}: {exc}"}
    if len(launched) != 1:
        return {"exception": f"{len(launched)} launches"}
    grid, buffer = launched[0]
    return {"accepted": {"grid": list(grid), "param_buffer": buffer.hex()}}


def _launch(kernel: Kernel, case: LaunchInput) -> None:
    args = [build_arg(a) for a in case.args]
    grid = tuple(case.grid) if case.grid is not None else None
    kernel.launch(*args, grid=grid, sync=True)


def check(case: LaunchInput, patch: pytest.MonkeyPatch) -> tuple[dict[str, Any], list[str]]:
    """The planner's verdict on `case` and what is wrong with it (with the fake driver
    installed on `patch`)."""
    started = time.perf_counter()
    expect = planner_verdict(case)
    findings = [f"[planner] {p}" for p in plan_problems(case, expect)]
    if "unbuildable" in expect:
        return expect, []
    launched = launch_verdict(case, expect, _fitting_twin(case), patch)
    if "exception" not in expect and not _same(launched, expect):
        findings.append(f"[launch] planner {expect}, launch {launched}")
    took = time.perf_counter() - started
    if took > TIME_BOUND:
        findings.append(f"[slow] {took:.2f} s")
    return expect, findings


def _fitting_twin(case: LaunchInput) -> LaunchInput | None:
    """The input with its seed's fitting arguments, when only the arguments were mutated and
    the contract accepts those (the launch then meets a warm plan memo)."""
    if case.contract_edits or not case.arg_edits:
        return None
    fitting = LaunchInput(
        case.seed, case.contract, case.fitting_args, case.fitting_grid, (), (), [], None
    )
    return fitting if "accepted" in planner_verdict(fitting) else None


def _same(launched: dict[str, Any], expect: dict[str, Any]) -> bool:
    """The launch gave the planner's verdict, or refused a target (arch, bytecode, host) the
    planner does not look at (a launch checks it against the device it loads on)."""
    if "error" in launched and launched["error"]["kind"] == "TargetMismatchError":
        return "accepted" in expect
    if "error" in launched and "error" in expect:
        return launched["error"]["kind"] == expect["error"]["kind"] and (
            launched["error"]["message"] == expect["error"]["message"]
        )
    return launched == expect


def run_rust(cases: Sequence[dict[str, Any]], folder: Path) -> str | None:
    """The Rust planner on `cases`: None when it agrees on every one, else cargo's report."""
    return rust_disagrees(cases, folder, "CUTILE_LAUNCH_VECTORS", ("launch_vectors",))


def run(seed: str, count: int, rust: bool, out: Path | None) -> int:
    findings: dict[int, list[str]] = {}
    cases = []
    started = time.perf_counter()
    with pytest.MonkeyPatch.context() as patch:
        FakeDriver(patch)
        for index in range(count):
            case = make_input(seed, index)
            expect, found = check(case, patch)
            cases.append(vector_case(f"input_{index}", case, expect))
            if found:
                findings[index] = found
    took = time.perf_counter() - started
    accepted = sum("accepted" in c["expect"] for c in cases)
    report(
        f"inputs={count} accepted={accepted} refused={count - accepted} "
        f"findings={sum(map(len, findings.values()))} ({count / took:.0f} inputs/s, {took:.0f} s)",
        findings,
        lambda index: cases[index]["about"],
    )
    failed = bool(findings)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        kept = [cases[i] for i in findings]
        (out / f"findings-{seed}.json").write_text(json.dumps({"cases": kept}, indent=1))
    if rust:
        folder = out or scratch_folder()
        folder.mkdir(parents=True, exist_ok=True)
        clean = [c for c in cases if not {"exception", "unbuildable"} & set(c["expect"])]
        differs = run_rust(clean, folder)
        if differs is None:
            print(f"rust: the same verdict on all {len(clean)} inputs")
        else:
            print(f"rust: differs\n{differs}")
            failed = True
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=2000)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--rust", action="store_true", help="the Rust planner on every input too")
    parser.add_argument("--out", type=Path, help="a folder for failing inputs (launch vectors)")
    options = parser.parse_args(argv)
    return run(options.seed, options.inputs, options.rust, options.out)


if __name__ == "__main__":
    sys.exit(main())
