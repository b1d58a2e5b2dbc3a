"""Fuzz the front end: `compile_kernel` on mutated kernels, tileiras replaced by a stand-in.

    python -m tests.fuzz.frontend --inputs N [--seed S] [--jobs J] [--out DIR]

Every input (tests/fuzz/mutations.py) must come back as diagnostics or a result:
- no exception escapes, and no CT0999 internal error;
- every label of every diagnostic lies inside the source it names; only the codes in
  FILE_LEVEL, which are about the request or a whole file, may have no label;
- rendering each diagnostic, as text and as JSON, works and stays under RENDER_BOUND;
- a kernel that compiles comes with a launch contract the hosts accept (`validate_contract`
  of its protobuf form);
- the input finishes within TIME_BOUND seconds, measured in process.

The long run puts the inputs through worker processes, so that a native crash (tree-sitter
is C) costs one worker: the parent counts it, saves the input to --out and starts another
worker. A worker that has not finished an input HANG_KILL seconds after starting it is
killed and the input counted as a hang. Each failing input is saved as `<kind>-<seed>.rs`
with a `.json` beside it (entry, generics, mutations); `--replay FILE.rs` runs one again.

Input `i` of a run with seed `S` is made from `Random(f"{S}:{i}")`, so a run is reproducible
from its seed and any input from its number.

The fuzzer is our own mutator driven by a seeded `random.Random`; the brief pytest run
(tests/fuzz/test_frontend.py) draws that `Random` from hypothesis. Hypothesis over atheris:
it is pure Python (nothing to build, any Python the project supports), shrinks a failing
input's random choices to a small one and runs under pytest; coverage guidance, atheris's
strength, matters less here because the mutations already work on real kernels' tokens,
and a native crash would take atheris's own process down with it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import selectors
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from random import Random
from typing import IO

from client_stubs.contract import validate_contract
from client_stubs.errors import ContractError
from lowering.pipeline import CompileRequest, CompileResult, compile_kernel
from parser import codes
from parser.diagnostics import Diagnostic
from parser.render import render, to_json
from parser.spans import SourceFile
from service.convert import contract_to_proto
from tests.fake_cubin import StandInAssembler
from tests.fuzz.mutations import FuzzInput, make_input

TIME_BOUND = 10.0  # seconds one input may take in process
HANG_KILL = 60.0  # seconds before the parent kills a worker stuck on one input
RENDER_BOUND = 64 * 1024  # characters one rendered diagnostic may take
MEMORY_LIMIT = 4 << 30  # address space of a worker: a runaway input fails, not the machine
FILE_LEVEL = frozenset({"CT0003", "CT0101", "CT0104"})  # no kernel module, entry, facts
STAND_IN = StandInAssembler()  # the contract is built after assembly; it needs no cubin
CHUNK = 50  # inputs a worker is handed at once
PROGRESS_EVERY = 5000  # inputs between progress lines on stderr


class InputTimedOut(BaseException):
    """Raised by the in-process alarm; a BaseException, so compile_kernel's own
    `except Exception` cannot turn it into a diagnostic."""


def input_for(seed: int | str, index: int) -> FuzzInput:
    return make_input(Random(f"{seed}:{index}"))


def problems_of(fuzz_input: FuzzInput, time_bound: float = TIME_BOUND) -> list[str]:
    """What is wrong with how the front end handled `fuzz_input` (empty: nothing)."""
    source = SourceFile(fuzz_input.name, fuzz_input.text)
    request = CompileRequest(
        (source,),
        fuzz_input.entry,
        fuzz_input.generics,
        specialization=fuzz_input.facts,
        early_launch=fuzz_input.early_launch,
    )
    started = time.perf_counter()
    try:
        result = compile_kernel(request, assembler=STAND_IN)  # type: ignore[arg-type]
        found = [p for d in result.diagnostics for p in _diagnostic_problems(d, source)]
        found += _contract_problems(result)
    except InputTimedOut:
        return [f"hang: over {time_bound:.0f} s"]
    except Exception as exc:
        return [f"exception: {type(exc).__name__}: {exc}"]
    elapsed = time.perf_counter() - started
    if elapsed > time_bound:
        found.append(f"slow: {elapsed:.1f} s")
    return found


def _contract_problems(result: CompileResult) -> list[str]:
    """A kernel that compiled must come with a contract the hosts accept (both validate
    alike: tests/fuzz/launch_contracts.py)."""
    if not result.ok:
        return []
    if result.contract is None:
        return ["no contract: the kernel compiled without one"]
    try:
        validate_contract(contract_to_proto(result.contract))
    except ContractError as exc:
        return [f"bad contract: {exc}"]
    return []


def _diagnostic_problems(diagnostic: Diagnostic, source: SourceFile) -> list[str]:
    code = diagnostic.code.id
    if diagnostic.code is codes.INTERNAL_ERROR:
        return [f"internal error: {diagnostic.message[:300]}"]
    found = []
    if not diagnostic.labels and code not in FILE_LEVEL:
        found.append(f"no span: {code} {diagnostic.message[:200]}")
    for label in diagnostic.labels:
        span = label.span
        if span.file is not source or not 0 <= span.start <= span.end <= len(source.data):
            found.append(f"bad span: {code} [{span.start}, {span.end}) of {len(source.data)}")
    text = render(diagnostic)
    if len(text) > RENDER_BOUND or len(json.dumps(to_json(diagnostic))) > 3 * RENDER_BOUND:
        found.append(f"noisy: {code} renders {len(text)} characters")
    return found


def _kind(problem: str) -> str:
    return problem.split(":", 1)[0]


# ----------------------------------------------------------------------------- worker


def _alarm(_signum: int, _frame: object) -> None:
    raise InputTimedOut()


def worker(seed: str, time_bound: float, plant: dict[int, str]) -> None:
    """Read `start count` lines, answer one JSON line per input (`begin` first).
    `plant` (tests only) makes input i crash the worker or hang it with signals blocked."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    signal.signal(signal.SIGALRM, _alarm)
    for line in sys.stdin:
        start, count = map(int, line.split())
        for index in range(start, start + count):
            print(json.dumps({"begin": index}), flush=True)
            if plant.get(index) == "crash":
                os.kill(os.getpid(), signal.SIGSEGV)
            if plant.get(index) == "hang":
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
                time.sleep(3600)
            signal.setitimer(signal.ITIMER_REAL, time_bound * 2)
            try:
                found = problems_of(input_for(seed, index), time_bound)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            print(json.dumps({"done": index, "problems": found}), flush=True)


# ----------------------------------------------------------------------------- parent


@dataclass
class Tally:
    inputs: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    saved: list[str] = field(default_factory=list)

    def line(self, seconds: float) -> str:
        counts = ", ".join(
            f"{k}={self.kinds[k]}"
            for k in (
                "internal error",
                "hang",
                "crash",
                "slow",
                "exception",
                "bad span",
                "no span",
                "noisy",
                "bad contract",
                "no contract",
            )
        )
        rate = self.inputs / seconds if seconds else 0.0
        return f"inputs={self.inputs} {counts} ({rate:.1f} inputs/s, {seconds:.0f} s)"


class _Worker:
    def __init__(self, seed: str, time_bound: float, plant: dict[int, str]) -> None:
        command = [
            sys.executable,
            "-m",
            "tests.fuzz.frontend",
            "--worker",
            "--seed",
            seed,
            "--time-bound",
            str(time_bound),
            "--plant",
            json.dumps(plant),
        ]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=False,
            bufsize=0,
            cwd=Path(__file__).resolve().parents[2],
            stderr=subprocess.DEVNULL,
        )
        self.current: int | None = None
        self.since = time.monotonic()
        self.pending: list[int] = []
        self.buffer = b""

    def messages(self) -> list[dict[str, object]] | None:
        """The complete lines the worker has written since the last call (None at EOF);
        read unbuffered, so no line waits in a buffer the selector cannot see."""
        data = os.read(self.stdout.fileno(), 1 << 16)
        if not data:
            return None
        *lines, self.buffer = (self.buffer + data).split(b"\n")
        return [json.loads(line) for line in lines]

    @property
    def stdout(self) -> IO[bytes]:
        assert self.process.stdout is not None
        return self.process.stdout

    def hand(self, start: int, count: int) -> None:
        assert self.process.stdin is not None
        self.pending = list(range(start, start + count))
        self.process.stdin.write(f"{start} {count}\n".encode())
        self.process.stdin.flush()


def run(
    inputs: int,
    seed: str,
    jobs: int,
    out: Path,
    time_bound: float = TIME_BOUND,
    hang_kill: float = HANG_KILL,
    plant: dict[int, str] | None = None,
) -> Tally:
    """Fuzz `inputs` inputs over `jobs` workers; failing inputs are saved under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    fuzz = _Run(inputs, seed, out, time_bound, plant or {})
    for _ in range(max(1, jobs)):
        fuzz.start_worker()
    while fuzz.workers:
        for key, _ in fuzz.selector.select(timeout=1.0):
            fuzz.on_output(key.data)
        for w in list(fuzz.workers):
            if w.current is not None and time.monotonic() - w.since > hang_kill:
                fuzz.retire(w, "hang")
    return fuzz.tally


class _Run:
    """The parent's state: workers, the next input to hand out, and the tally."""

    def __init__(
        self, inputs: int, seed: str, out: Path, time_bound: float, plant: dict[int, str]
    ) -> None:
        self.inputs, self.seed, self.out = inputs, seed, out
        self.time_bound, self.plant = time_bound, plant
        self.next_index = 0
        self.workers: list[_Worker] = []
        self.selector = selectors.DefaultSelector()
        self.tally = Tally()
        self.began = time.monotonic()

    def start_worker(self, indices: list[int] | None = None) -> None:
        """A new worker for `indices` (consecutive), or for the next chunk."""
        if indices is None:
            count = min(CHUNK, self.inputs - self.next_index)
            if count <= 0:
                return
            indices = list(range(self.next_index, self.next_index + count))
            self.next_index += count
        w = _Worker(self.seed, self.time_bound, self.plant)
        w.hand(indices[0], len(indices))
        self.workers.append(w)
        self.selector.register(w.stdout, selectors.EVENT_READ, w)

    def on_output(self, w: _Worker) -> None:
        messages = w.messages()
        if messages is None:
            self.retire(w, "crash")
            return
        for message in messages:
            if "begin" in message:
                w.current, w.since = int(message["begin"]), time.monotonic()
                continue
            index, problems = int(message["done"]), list(message["problems"])
            self.count(index, problems)
            w.pending.remove(index)
            w.current = None
        if not w.pending:
            count = min(CHUNK, self.inputs - self.next_index)
            if count > 0:
                w.hand(self.next_index, count)
                self.next_index += count
            else:
                self.stop(w)

    def count(self, index: int, problems: list[str]) -> None:
        self.tally.inputs += 1
        if problems:
            _record(self.tally, self.seed, index, problems, self.out)
        if self.tally.inputs % PROGRESS_EVERY == 0:
            print(self.tally.line(time.monotonic() - self.began), file=sys.stderr, flush=True)

    def stop(self, w: _Worker) -> None:
        self.selector.unregister(w.stdout)
        w.process.kill()
        w.process.wait()
        self.workers.remove(w)

    def retire(self, w: _Worker, kind: str) -> None:
        """A worker that died or hung: count its input, give the rest of its chunk to a
        fresh worker."""
        self.stop(w)
        if w.current is not None:
            self.count(w.current, [f"{kind}: worker exit {w.process.returncode}"])
        rest = [i for i in w.pending if i != w.current]
        self.start_worker(rest or None)


def _record(tally: Tally, seed: str, index: int, problems: list[str], out: Path) -> None:
    kinds = sorted({_kind(p) for p in problems})
    tally.kinds.update(kinds)
    fuzz_input = input_for(seed, index)
    stem = out / f"{kinds[0].replace(' ', '_')}-{seed}-{index}"
    stem.with_suffix(".rs").write_text(fuzz_input.text)
    details = json.loads(fuzz_input.to_json())
    details.update(seed=seed, index=index, problems=problems)
    stem.with_suffix(".json").write_text(json.dumps(details, indent=1))
    tally.saved.append(str(stem))


def replay(path: Path) -> list[str]:
    details = json.loads(path.with_suffix(".json").read_text())
    fuzz_input = FuzzInput(
        details["file"],
        path.read_text(),
        details["entry"],
        tuple(details["generics"].items()),
        tuple(details["mutations"]),
    )
    return problems_of(fuzz_input)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=10_000)
    parser.add_argument("--seed", default="0")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=Path("fuzz-findings"))
    parser.add_argument("--time-bound", type=float, default=TIME_BOUND)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--plant", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--replay", type=Path, help="run one saved input again")
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.seed, args.time_bound, {int(k): v for k, v in json.loads(args.plant).items()})
        return 0
    if args.replay:
        found = replay(args.replay)
        print("\n".join(found) or "no problems")
        return 1 if found else 0
    started = time.monotonic()
    tally = run(args.inputs, args.seed, args.jobs, args.out, args.time_bound)
    print(tally.line(time.monotonic() - started))
    for stem in tally.saved[:50]:
        print(f"  saved {stem}.rs")
    return 1 if tally.kinds else 0


if __name__ == "__main__":
    sys.exit(main())
