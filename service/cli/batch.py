"""`cutile-compile`: compile kernel files to cubins + launch contracts, here or on a server.

    cutile-compile FILE.rs [FILE.rs ...] --entry add [--entry saxpy ...]
                   [--generics B=128 | --generics 128 ...] [--arch sm_90 ...] -o OUT/
                   [--opt-level N] [--host-arch x86_64|aarch64] [--lineinfo] [--exact-accumulators]
                   [--exact-f32-products] [--no-early-launch]
                   [--message-format human|json|sarif] [-j N] [--cache-dir DIR | --no-cache]
                   [--tileiras PATH] [--summary-json PATH]
                   [--facts ENTRY:PARAM[:dims=D,..][:strides=S,..][:align=A][:last_stride=any] ...]
                   [--specialize none|auto|D[,D..]]
                   [--server HOST:PORT [--auth-token-file PATH] [--tls-ca PEM]]
    cutile-compile FILE.rs ... --entry add [--generics ...] [--arch ...]
                   --emit ast|typed|ir|bytecode|contract [-o OUT/]

Compiles every file x entry x generics set x arch and writes the results to OUT (see
`service.cli.manifest`); kernels already in OUT's manifest stay unless rebuilt, so several
runs can fill one bundle. `--generics saxpy:E=f16,B=1024` scopes a set to one entry.
An entry only has to exist in one of the files; all files are linked into every
compile (device functions may live in any of them).
`--generics` takes names (`E=f16,B=1024`) or positions
(`f16,1024`); commas inside brackets belong to the value (`S=[64, 32]`). No `--generics`
means one compile without generic arguments; no `--arch` means sm_90.

Every kernel is built fast by default: next to the general kernel, `--specialize auto` (the
default) builds a variant that assumes every extent and every stride (but the unit last one)
of every tensor parameter divisible by 16 (lowered to the target's `max_divisibility`), and
one that assumes only rows aligned to 16 bytes (every stride but the last a multiple of 16
bytes: TMA loads for launches whose extents are small or odd), and for an entry that names
no occupancy and multiplies no tiles (`mma`) one with the rows' facts and the hint
`occupancy = 4`, which hosts take only for launches of 1024 or more tile blocks
(`lowering.default_occupancy`); it keeps each whose machine code differs from those after it.
`--specialize 16,8` builds one variant per divisor, `--specialize rows` the rows variant,
`--specialize occupancy` the occupancy variant, `--specialize none` the general kernel only (see
`service.cli.specialize_arg`). Variants sit next to the general kernel in the manifest (field
`facts`); `Bundle.kernel(...)` returns a kernel that launches, per argument layout, the most
specialized variant the arguments meet. A variant that fails to compile is a warning (the
general kernel serves every launch). `--facts` specializes an entry for tensors with the
given divisibility instead (see `service.cli.facts_arg`): such an entry gets its general kernel
and exactly that variant beside it, no automatic ones.

The artifact cache is on by default and shared with `cutile-serve` (the same folder and
keys): `--cache-dir` moves it, `--no-cache` turns it off.

`--server HOST:PORT` compiles through a running `cutile-serve` instead (one streaming
`CompileBatch`, see `service.cli.remote_compiler`): no local tileiras or cache is used, and
the bundle, diagnostics, summary and exit status are the same as locally (kernels are
recorded in request order whatever order the server finishes them in). A server that
cannot be reached fails every kernel with a `CTS-UNAVAILABLE` error.
`--auth-token-file` sends its bearer token; `--tls-ca` connects over TLS, trusting PEM.

`-j N` (default: the CPUs) compiles N kernels at a time, each in a worker process of
`service.compile.worker_pool` (the server's isolation; the cache stays in this process); kernels are
recorded in request order, so the bundle is byte-for-byte the same for every N.

Diagnostics go to stderr, rustc-style or one JSON object per line
(`--message-format json`), each printed once even when several kernels report it;
`--message-format sarif` writes them instead as one SARIF 2.1.0 log on stdout
(`service.cli.sarif`, for CI code scanning). With human output, stderr also shows progress
(`service.cli.progress`): a bar with an ETA on a terminal, else one line per kernel,
`[3/12] compiled add<B=128> (sm_90) 212 ms` (or `failed`).

`--summary-json PATH` writes a machine-readable summary (also when kernels fail):
`{"kernels": [{"file", "entry", "generics", "arch", "ok", "cubin", "facts", "divisor",
"variant", "kept", "ms", "diagnostics"}], "ok": N, "failed": N, "unparsed_files": [{"file",
"diagnostics"}]}`. `generics` is an object for named generics, a list for positional ones;
`cubin` is the written cubin's path relative to OUT, or null; `facts` the request's facts
(as in the manifest); `variant` is null for a requested kernel and names an automatic
variant ("divisible by 16", "16-byte rows", "16-byte rows, occupancy 4 for 1024+ tile
blocks"; `divisor` is then D or null), which is `kept` when its machine code differs;
`diagnostics` holds the
`--message-format json` objects; `ok` and `failed` count the requested kernels (variants
do not fail a build), files that do not parse are listed in `unparsed_files`.

`--emit STAGE` stops each compile after that stage and prints its product to stdout
(`service.cli.stage_dump`: the entry's AST, the types of its expressions, the tile IR,
the bytecode in hex, the contract JSON), or with `-o OUT` writes one file per kernel
(`add_B=128_sm_90.ir.txt`, raw bytecode in `.tilebc`); no bundle is written and no cache is
used. Only `contract` runs tileiras.

Exit status: 0 when every kernel compiled, 1 when any failed, 2 for usage errors and for
an OUT that cannot be written (its manifest unreadable: it is never overwritten).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import re
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING

from google.protobuf.message import DecodeError

from client_stubs.files import read_regular_file
from client_stubs.integrity import MAX_CUBIN_BYTES
from lowering.build_id import RELEASE, version_text
from lowering.pipeline import (
    ARCHS,
    DEFAULT_ARCH,
    HOST_ARCHES,
    CompileRequest,
    Stage,
    compile_kernel,
    list_entries,
)
from parser.front_end import (
    Diagnostic,
    Severity,
    SourceFile,
    TensorFacts,
    codes,
    render,
    to_json,
)
from protos.generated.cutile.compile.v1 import contract_pb2
from service.cache.disk import DiskCache, default_cache_dir
from service.cache.keys import NO_KEY
from service.cli.facts_arg import (
    FactsError,
    facts_for_entry,
    names_entry,
    parse_facts,
    same_entry,
)
from service.cli.generics_arg import GenericsSet, UsageError, generics_for, parse_generics
from service.cli.manifest import (
    KernelRecord,
    OutputError,
    facts_record,
    read_manifest,
    write_kernel,
    write_manifest,
)
from service.cli.progress import Progress
from service.cli.sarif import sarif_log
from service.cli.specialize_arg import (
    AutoVariant,
    SpecializeError,
    builds,
    kept_variants,
    parse_specialize,
)
from service.cli.stage_dump import EMIT_STAGES, FILE_SUFFIXES, as_text, stage_product
from service.compile.engine import CompileEngine, Outcome
from service.compile.flight import default_workers
from service.compile.memory_share import default_total_bytes, tileiras_memory_share
from service.compile.toolchain import locate_assembler
from service.compile.worker import WorkerLimits
from service.compile.worker_pool import WorkerPool
from service.convert import DEFAULT_HOST_ARCH, DEFAULT_LIMITS, DEFAULT_OPT_LEVEL, MAX_OPT_LEVEL
from service.server.auth import TokenError, read_token

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
BATCH_CPU_SECONDS = 3600  # a worker's front-end CPU budget per kernel (the server's is 60 s)
MAX_SOURCE_BYTES = DEFAULT_LIMITS.max_source_bytes  # what the server takes
EMIT_NAME_CHARS = 128  # an --emit file name longer than this is cut and hashed

# --------------------------------------------------------------------------- the job


@dataclass(frozen=True)
class Kernel:
    """One compile of the batch: a requested kernel (with its `--facts`), or an automatic
    variant of one (`auto`, see `service.cli.specialize_arg`)."""

    source: SourceFile
    entry: str
    generics: GenericsSet
    arch: str
    facts: tuple[TensorFacts, ...] = ()
    auto: AutoVariant | None = None

    def describe(self) -> str:
        variant = f"; {self.auto.describe()}" if self.auto else ""
        return (
            f"`{self.entry}` ({self.source.name}; {self.generics.describe()}; {self.arch}{variant})"
        )

    def variant(self, facts: tuple[TensorFacts, ...], auto: AutoVariant) -> Kernel:
        return replace(self, facts=facts, auto=auto)


@dataclass
class Report:
    """Prints diagnostics (each once), notes and progress; counts failures."""

    message_format: str
    failed: int = 0
    progress: Progress | None = None
    collected: list[Diagnostic] = field(default_factory=list)  # for the SARIF log
    _printed: set[str] = field(default_factory=set)

    def diagnostics(self, diagnostics: Sequence[Diagnostic]) -> None:
        for diagnostic in diagnostics:
            text = render(diagnostic)
            if text in self._printed:
                continue
            self._printed.add(text)
            if self.message_format == "json":
                self._print(json.dumps(to_json(diagnostic)))
            elif self.message_format == "sarif":
                self.collected.append(diagnostic)  # in the log written at the end
            else:
                self._print(text + "\n")

    def failure(self, what: str) -> None:
        self.failed += 1
        self.note(f"error: could not compile {what}\n")

    def note(self, text: str) -> None:
        if self.message_format == "human":
            self._print(text)

    def _print(self, text: str) -> None:
        if self.progress is not None:
            self.progress.write(text)
        else:
            print(text, file=sys.stderr)


class LocalCompiler:
    """Compiles here through the engine (and its cache): one kernel after the other with
    `jobs` 1, else `jobs` at a time, each in a worker process of `service.compile.worker_pool` (the
    server's isolated workers; the cache stays in this process)."""

    def __init__(self, engine: CompileEngine, jobs: int = 1) -> None:
        self.engine = engine
        self.jobs = max(1, jobs)
        self._pool: WorkerPool | None = None

    def compile_all(self, requests: Sequence[CompileRequest]) -> Iterator[tuple[int, Outcome]]:
        """(index, outcome) of every request, as each finishes."""
        if self.jobs == 1 or len(requests) < 2:
            for index, request in enumerate(requests):
                yield index, self._compile(request)
            return
        self._start_pool()
        with ThreadPoolExecutor(self.jobs, thread_name_prefix="cutile-compile") as threads:
            running = {threads.submit(self._compile, r): i for i, r in enumerate(requests)}
            for done in as_completed(running):
                yield running[done], done.result()

    def _start_pool(self) -> None:
        if self._pool is None:
            limits = WorkerLimits(
                cpu_seconds=BATCH_CPU_SECONDS,
                tileiras_memory_bytes=self.engine.assembler.memory_cap,
            )
            self._pool = WorkerPool(self.jobs, self.engine.assembler.path, limits)
            self.engine.pool = self._pool

    def _compile(self, request: CompileRequest) -> Outcome:
        try:
            return self.engine.compile(request)
        except Exception as exc:  # a bug: reported like rustc's ICE, without a traceback
            message = f"internal compiler error: {type(exc).__name__}: {exc}"
            diagnostic = Diagnostic(Severity.ERROR, codes.INTERNAL_ERROR, message)
            return Outcome(NO_KEY, (diagnostic,))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
            self.engine.pool = None


if TYPE_CHECKING:  # RemoteCompiler (and gRPC) load only with --server
    from service.cli.remote_compiler import RemoteCompiler

    Compiler = LocalCompiler | RemoteCompiler


@dataclass
class Batch:
    """One `cutile-compile` run: every file x entry x generics set x arch."""

    args: argparse.Namespace
    compiler: Compiler
    report: Report
    records: list[KernelRecord] = field(default_factory=list)
    sources: tuple[SourceFile, ...] = ()
    summary: list[dict[str, object]] = field(default_factory=list)
    unparsed: list[dict[str, object]] = field(default_factory=list)
    total: int = 0
    done: int = 0
    earlier: list[KernelRecord] = field(default_factory=list)  # OUT's manifest before the run
    _rebuilt: set[str] = field(default_factory=set)  # identities this run compiled
    # per kernel (`_family`) whose general kernel this run wrote: the sources' digest
    _sources: dict[str, str] = field(default_factory=dict)

    def run(self, sources: Sequence[SourceFile]) -> int:
        try:
            return self._run(sources)
        except OutputError as exc:  # the bundle cannot be written: OUT is left as it was
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        finally:
            if self.args.summary_json is not None:
                self._write_summary(self.args.summary_json)
            if self.report.message_format == "sarif":
                log = sarif_log(self.report.collected, "cutile-compile", RELEASE)
                print(json.dumps(log, indent=2))

    def _run(self, sources: Sequence[SourceFile]) -> int:
        self.earlier = read_manifest(self.args.out)  # before compiling: it may be unreadable
        self.sources = tuple(s for s in sources if self._parses(s))
        kernels = requested_kernels(self.args, self.sources)
        automatic = sum(1 for k in kernels if self._automatic(k)) * len(self.args.specialize)
        self.total = len(kernels) + automatic
        if self.report.message_format == "human":
            self.report.progress = Progress(self.total)
        try:
            return self._build(kernels)
        finally:
            if self.report.progress is not None:
                self.report.progress.close()
                self.report.progress = None

    def _build(self, kernels: list[Kernel]) -> int:
        """Compile `kernels` and their automatic variants; write the bundle."""
        outcomes = self._compile_kernels(kernels)
        variants = [
            (index, variant)
            for index, kernel in enumerate(kernels)
            for variant in self._variants_of(kernel, outcomes[index][0])
        ]
        self.total = len(kernels) + len(variants)
        if self.report.progress is not None:
            self.report.progress.set_total(self.total)
        variant_outcomes = self._compile_kernels([v for _, v in variants])
        self._record(kernels, outcomes, variants, variant_outcomes)
        write_manifest(self.args.out, _unique(self._kept_records() + self.records))
        if self.report.failed:
            self.report.note(f"error: {self.report.failed} compile(s) failed")
            return EXIT_FAILED
        self.report.note(f"wrote {len(self.records)} kernel(s) to {self.args.out}")
        return EXIT_OK

    def _automatic(self, kernel: Kernel) -> bool:
        """Whether `kernel` gets automatic variants: an entry given `--facts` gets exactly
        those (and its general kernel), no automatic ones."""
        return not facts_for_entry(kernel.entry, self.args.facts)

    def _variants_of(self, kernel: Kernel, outcome: Outcome) -> list[Kernel]:
        """The automatic variants of a requested kernel that compiled without `--facts`."""
        if not self._automatic(kernel) or outcome.artifact is None:
            return []
        contract = outcome.artifact.contract
        return [
            kernel.variant(auto.facts(contract), auto)
            for auto in self.args.specialize
            if builds(auto, contract)
        ]

    def _record(
        self,
        kernels: Sequence[Kernel],
        outcomes: dict[int, tuple[Outcome, float]],
        variants: Sequence[tuple[int, Kernel]],
        variant_outcomes: dict[int, tuple[Outcome, float]],
    ) -> None:
        """Write every compiled kernel, and each variant whose machine code differs from its
        general kernel's and from every weaker variant's of it (`kept_variants`); summarize
        all of them."""
        for index, kernel in enumerate(kernels):
            outcome, ms = outcomes[index]
            record = self._write(kernel, outcome)
            self.summary.append(_kernel_summary(kernel, outcome, record, ms))
        keep: dict[int, bool] = {}
        for index, (outcome, _) in outcomes.items():
            positions = [p for p, (of, _) in enumerate(variants) if of == index]
            if outcome.artifact is not None and positions:
                cubins = [_cubin(variant_outcomes[p][0]) for p in positions]
                keep.update(
                    zip(positions, kept_variants(outcome.artifact.cubin, cubins), strict=True)
                )
        for position, (_, variant) in enumerate(variants):
            outcome, ms = variant_outcomes[position]
            artifact, record = outcome.artifact, None
            if artifact is not None:
                self._rebuilt.add(_identity_of(artifact.contract, facts_record(variant.facts)))
                if keep[position]:
                    record = self._write(variant, outcome)
            self.summary.append(_kernel_summary(variant, outcome, record, ms))

    def _write(self, kernel: Kernel, outcome: Outcome) -> KernelRecord | None:
        if outcome.artifact is None:
            return None
        record = write_kernel(
            self.args.out, outcome.artifact, outcome.key, kernel.source.name, kernel.facts
        )
        self.records.append(record)
        self._rebuilt.add(_identity(record))
        if not kernel.facts and not kernel.auto:
            self._sources[_family(record)] = outcome.artifact.contract.kernel.source_sha256
        return record

    def _kept_records(self) -> list[KernelRecord]:
        """An earlier run's kernels, but those this run rebuilt (kept or not) and the variants
        of a kernel whose general kernel it rebuilt from other sources: they are the old
        sources' code (an occupancy variant of an entry that now names its occupancy would
        still be taken first)."""
        return [
            r for r in self.earlier if _identity(r) not in self._rebuilt and self._same_sources(r)
        ]

    def _same_sources(self, record: KernelRecord) -> bool:
        """Whether an earlier record was compiled from the sources this run compiled its
        kernel from (True when this run did not compile that kernel)."""
        digest = self._sources.get(_family(record))
        if digest is None:
            return True
        try:
            data = read_regular_file(self.args.out / record.contract, MAX_CUBIN_BYTES)
            earlier = contract_pb2.LaunchContract.FromString(data).kernel.source_sha256
        except (OSError, ValueError, DecodeError):  # NotAFile is a ValueError
            return False
        return earlier == digest

    def _parses(self, source: SourceFile) -> bool:
        """Parse `source` once: a file that does not parse fails once, not once per kernel."""
        request = CompileRequest(sources=(source,), entry="_")
        result = compile_kernel(request, stop_after=Stage.PARSE)
        if not result.ok:
            self.report.diagnostics(result.diagnostics)
            self.report.failure(source.name)
            self.unparsed.append(
                {"file": source.name, "diagnostics": [to_json(d) for d in result.diagnostics]}
            )
        return result.ok

    def _compile_kernels(self, kernels: Sequence[Kernel]) -> dict[int, tuple[Outcome, float]]:
        """Compile every kernel, reporting each as it finishes; outcomes and times by index.
        An automatic variant that fails is a warning: the bundle keeps the general kernel."""
        outcomes: dict[int, tuple[Outcome, float]] = {}
        requests = [self._request(kernel) for kernel in kernels]
        start = time.perf_counter()
        for index, outcome in self.compiler.compile_all(requests):
            kernel = kernels[index]
            waited = (time.perf_counter() - start) * 1000.0
            start = time.perf_counter()
            ms = outcome.timings.total_ms or waited  # its own time when the compiler kept it
            self.done += 1
            if self.report.progress is not None:
                self.report.progress.finished(_label(kernel), outcome.ok, ms)
            self.report.diagnostics(outcome.diagnostics)
            if outcome.artifact is None and kernel.auto:
                self.report.note(
                    f"warning: could not compile the specialized variant {kernel.describe()}; "
                    "the bundle keeps the general kernel\n"
                )
            elif outcome.artifact is None:
                self.report.failure(kernel.describe())
            outcomes[index] = (outcome, ms)
        return outcomes

    def _write_summary(self, path: Path) -> None:
        requested = [k for k in self.summary if k["variant"] is None]
        ok = sum(1 for k in requested if k["ok"])
        summary = {
            "kernels": self.summary,
            "ok": ok,
            "failed": len(requested) - ok,
            "unparsed_files": self.unparsed,
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            print(f"error: cannot write {path}: {exc}", file=sys.stderr)

    def _request(self, kernel: Kernel) -> CompileRequest:
        return kernel_request(self.args, kernel, self.sources)


def requested_kernels(args: argparse.Namespace, sources: Sequence[SourceFile]) -> list[Kernel]:
    """Every requested kernel of the parsed `sources`: entry x generics set x arch (with its
    `--facts` variant beside it)."""
    defined = list_entries(tuple(sources))
    kernels: list[Kernel] = []
    for entry in args.entry:
        home = next(
            (s for s in sources if any(names_entry(q, entry) for q in defined[s.name])),
            None,
        )
        if home is None and sources:  # compiling reports the unknown entry
            home = sources[0]
        if home is not None:
            sets = generics_for(entry, args.generics)
            facts = facts_for_entry(entry, args.facts)
            for g, a in product(sets, args.arch):
                kernels.append(Kernel(home, entry, g, a))  # the general kernel
                if facts:  # and the --facts variant beside it
                    kernels.append(Kernel(home, entry, g, a, facts))
    return kernels


def kernel_request(
    args: argparse.Namespace, kernel: Kernel, sources: Sequence[SourceFile]
) -> CompileRequest:
    return CompileRequest(
        # the entry's file first; every other file is linked for device functions
        sources=(kernel.source, *(s for s in sources if s is not kernel.source)),
        entry=kernel.entry,
        generics=kernel.generics.named,
        generic_args=kernel.generics.positional,
        arch=kernel.arch,
        opt_level=args.opt_level,
        host_arch=args.host_arch,
        lineinfo=args.lineinfo,
        exact_accumulators=args.exact_accumulators,
        exact_f32_products=args.exact_f32_products,
        early_launch=args.early_launch,
        specialization=kernel.facts,
        occupancy=kernel.auto.occupancy if kernel.auto else 0,
    )


def _cubin(outcome: Outcome) -> bytes | None:
    return None if outcome.artifact is None else outcome.artifact.cubin


def _label(kernel: Kernel) -> str:
    """`add<B=128> (sm_90)`, `add<B=128> divisible by 16 (sm_90)`: a kernel in progress."""
    generics = kernel.generics.describe()
    what = kernel.entry if generics == "no generics" else f"{kernel.entry}<{generics}>"
    if kernel.auto:
        what += f" {kernel.auto.describe()}"
    return f"{what} ({kernel.arch})"


def _kernel_summary(
    kernel: Kernel, outcome: Outcome, record: KernelRecord | None, ms: float
) -> dict[str, object]:
    generics = kernel.generics
    return {
        "file": kernel.source.name,
        "entry": kernel.entry,
        "generics": dict(generics.named) if generics.named else list(generics.positional),
        "arch": kernel.arch,
        "ok": outcome.ok,
        "cubin": None if record is None else record.cubin,
        "facts": facts_record(kernel.facts),
        "divisor": (kernel.auto.divisor or None) if kernel.auto else None,
        "variant": kernel.auto.describe() if kernel.auto else None,
        "kept": record is not None,
        "ms": round(ms, 1),
        "diagnostics": [to_json(d) for d in outcome.diagnostics],
    }


def _identity(record: KernelRecord) -> str:
    """What makes a kernel the same kernel: entry, generics, target, facts and the launches
    it serves."""
    generics = sorted(record.generics.items())
    return json.dumps(
        [record.module, record.function, record.sm, generics, record.facts, record.min_tile_blocks]
    )


def _family(record: KernelRecord) -> str:
    """The kernel a record is a variant of: entry, generics and target."""
    return json.dumps([record.module, record.function, record.sm, sorted(record.generics.items())])


def _identity_of(contract: contract_pb2.LaunchContract, facts: list[dict[str, object]]) -> str:
    """`_identity` of the record a compiled kernel would get."""
    generics = sorted((g.name, g.value) for g in contract.specialization.generics)
    kernel, least = contract.kernel, contract.launch.min_tile_blocks
    return json.dumps([kernel.module, kernel.function, contract.target.sm, generics, facts, least])


def _unique(records: list[KernelRecord]) -> list[KernelRecord]:
    seen: set[str] = set()
    kept = []
    for record in records:
        if record.request_key not in seen:
            seen.add(record.request_key)
            kept.append(record)
    return kept


# --------------------------------------------------------------------------- arguments


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="cutile-compile",
        description="Compile cuTile Rust kernels to cubins and launch contracts.",
    )
    parser.add_argument("--version", action="version", version=version_text("cutile-compile"))
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE.rs")
    parser.add_argument("--entry", action="append", required=True, help="entry function")
    parser.add_argument(
        "--generics",
        action="append",
        metavar="SPEC",
        help="one specialization: B=128 or E=f16,B=1024 (by name), 128 (by position); "
        "ENTRY:SPEC applies to one entry only",
    )
    parser.add_argument("--arch", action="append", choices=ARCHS, help=f"default {DEFAULT_ARCH}")
    parser.add_argument("-o", "--out", type=Path, help="output folder (required but with --emit)")
    parser.add_argument(
        "--emit",
        choices=tuple(EMIT_STAGES),
        help="stop after this stage and print (or with -o write) its product for each kernel",
    )
    parser.add_argument(
        "--opt-level", type=int, choices=range(MAX_OPT_LEVEL + 1), default=DEFAULT_OPT_LEVEL
    )
    parser.add_argument("--host-arch", choices=HOST_ARCHES, default=DEFAULT_HOST_ARCH)
    parser.add_argument("--lineinfo", action="store_true", help="keep source lines in the cubin")
    parser.add_argument(
        "--exact-accumulators",
        action="store_true",
        help="keep f16 mma accumulators of loops nested in loops in f16 at every step "
        "(default: carried in f32 and rounded once after the loop, much faster on tileiras)",
    )
    parser.add_argument(
        "--exact-f32-products",
        action="store_true",
        help="multiply f32 mma operands by f32 FMA (default: products the tensor cores take "
        "as three TF32 products there, summed per k-tile: as accurate as f32)",
    )
    parser.add_argument(
        "--early-launch",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="the kernel waits for prior grids before it touches memory, and hosts launch "
        "it while the kernel before it drains (programmatic dependent launch; bytecode 13.4; "
        "the default); --no-early-launch: a plain kernel",
    )
    parser.add_argument(
        "--message-format",
        choices=("human", "json", "sarif"),
        default="human",
        help="diagnostics on stderr, rustc-style (human) or one JSON object a line (json); "
        "sarif: a SARIF 2.1.0 log of every diagnostic on stdout, for code scanning",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=default_workers(),
        metavar="N",
        help="compile N kernels at a time, each in a worker process (default: the CPUs, "
        f"{default_workers()} here); the bundle is the same for every N",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log progress and internal tracebacks"
    )
    parser.add_argument(
        "--tileiras",
        metavar="PATH",
        help="the tileiras binary (default: $CUTILE_TILEIRAS, the nvidia wheel, then PATH)",
    )
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache-dir", type=Path, help=f"default {default_cache_dir()}")
    cache.add_argument("--no-cache", action="store_true", help="do not use the artifact cache")
    parser.add_argument(
        "--facts",
        action="append",
        metavar="ENTRY:PARAM[:dims=..][:strides=..][:align=A][:last_stride=any]",
        help="specialize ENTRY for tensors PARAM whose extents / strides are multiples of "
        "these powers of two (1..16); align=A (bytes) and last_stride=any relax the default "
        "16-byte aligned base and unit last stride; the host checks them before every launch",
    )
    parser.add_argument(
        "--specialize",
        default="auto",
        metavar="none|auto|rows|occupancy|D[,D..]",
        help="the variants built next to each general kernel: auto (default) adds one that "
        "assumes every extent and stride of every tensor divisible by 16, one that assumes "
        "rows aligned to 16 bytes and, for an entry that names no occupancy and has no "
        "mma, one with the hint occupancy = 4 that hosts take for launches of "
        "1024+ tile blocks; D,.. one per divisor, rows and occupancy those, none only the "
        "general kernel; a variant is kept when its machine code differs",
    )
    parser.add_argument(
        "--server",
        metavar="HOST:PORT",
        help="compile through this cutile-serve instead of locally",
    )
    parser.add_argument(
        "--auth-token-file",
        type=Path,
        metavar="PATH",
        help="with --server: send the token in this file as `authorization: Bearer`",
    )
    parser.add_argument(
        "--tls-ca",
        type=Path,
        metavar="PEM",
        help="with --server: connect over TLS, trusting these root certificates",
    )
    parser.add_argument(
        "--summary-json",
        type=Path,
        metavar="PATH",
        help="write a machine-readable summary of every kernel to PATH",
    )
    args = parser.parse_args(argv)
    try:
        args.generics = [parse_generics(text) for text in args.generics or [""]]
        args.facts = [parse_facts(text) for text in args.facts or []]
        args.specialize = parse_specialize(args.specialize)
    except (UsageError, FactsError, SpecializeError) as exc:
        parser.error(str(exc))
    if args.jobs < 1:
        parser.error("-j/--jobs must be at least 1")
    if args.out is None and args.emit is None:
        parser.error("the following arguments are required: -o/--out")
    if args.emit is not None and args.server is not None:
        parser.error("--emit compiles here: --server does not apply")
    if args.server is None and (args.auth_token_file or args.tls_ca):
        parser.error("--auth-token-file and --tls-ca go with --server")
    if args.server is not None and (args.tileiras or args.cache_dir or args.no_cache):
        parser.error("--server compiles on the server: --tileiras and the cache flags do not apply")
    args.arch = list(dict.fromkeys(args.arch or [DEFAULT_ARCH]))
    args.entry = list(dict.fromkeys(args.entry))
    for entry in args.entry:
        if not entry:
            parser.error("--entry must not be empty")
    for name, _ in args.facts:
        if not any(same_entry(name, entry) for entry in args.entry):
            parser.error(f"--facts for `{name}`, which is not an --entry")
    return args


class _DropTraceback(logging.Filter):
    """Keep log records but not their tracebacks (users get diagnostics, not stacks)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info, record.exc_text = None, None
        return True


def _configure_logging(verbose: bool) -> None:
    root = logging.getLogger()
    if root.handlers:  # embedded in a program that set up logging: leave it alone
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("cutile-compile: %(levelname)s: %(message)s"))
    if not verbose:
        handler.addFilter(_DropTraceback())
    root.addHandler(handler)
    root.setLevel(logging.INFO if verbose else logging.WARNING)


def read_sources(paths: Sequence[Path]) -> list[SourceFile]:
    return [SourceFile(str(path), read_source(path)) for path in paths]


def read_source(path: Path) -> str:
    """The UTF-8 text of `path` (newlines as text mode reads them): a regular file (a FIFO
    would block, a device never end) of at most MAX_SOURCE_BYTES, the server's limit;
    `UsageError` otherwise."""
    try:
        text = read_regular_file(path, MAX_SOURCE_BYTES).decode("utf-8")
    except (OSError, ValueError) as exc:  # NotAFile and UnicodeDecodeError are ValueErrors
        raise UsageError(f"cannot read {path}: {exc}") from exc
    return text.replace("\r\n", "\n").replace("\r", "\n")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        status = _main(argv)
        sys.stdout.flush()  # a closed pipe shows here rather than at exit
    except BrokenPipeError:  # `cutile-compile --emit ir ... | head`: stop quietly
        _discard_stdout()
        return EXIT_FAILED
    return status


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's flush at exit does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # a stdout without a descriptor (embedded, tests)
        pass


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return int(exc.code or 0)
    _configure_logging(args.verbose)
    try:
        sources = read_sources(args.files)
        if args.out is not None:
            args.out.mkdir(parents=True, exist_ok=True)
    except (UsageError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.emit is not None:
        return _emit(args, sources)
    if args.server is not None:
        return _run_remote(args, sources)
    memory_cap = tileiras_memory_share(args.jobs, default_total_bytes())
    assembler = locate_assembler(args.tileiras, memory_cap)
    if assembler is None:
        print("error: tileiras not found or not working (see above)", file=sys.stderr)
        return EXIT_FAILED
    cache = None if args.no_cache else DiskCache(args.cache_dir or default_cache_dir())
    compiler = LocalCompiler(CompileEngine(assembler, cache=cache), args.jobs)
    try:
        return Batch(args, compiler, Report(args.message_format)).run(sources)
    finally:
        compiler.close()


def _emit(args: argparse.Namespace, sources: Sequence[SourceFile]) -> int:
    """`--emit`: each kernel compiled up to the stage, its product printed or written."""
    report = Report(args.message_format)
    assembler = None
    if args.emit == "contract":
        assembler = locate_assembler(args.tileiras)
        if assembler is None:
            print("error: tileiras not found or not working (see above)", file=sys.stderr)
            return EXIT_FAILED
    parsed = []
    for source in sources:
        result = compile_kernel(CompileRequest((source,), "_"), stop_after=Stage.PARSE)
        if result.ok:
            parsed.append(source)
        else:
            report.diagnostics(result.diagnostics)
            report.failure(source.name)
    kernels = requested_kernels(args, parsed)
    for kernel in kernels:
        request = kernel_request(args, kernel, parsed)
        stage = EMIT_STAGES[args.emit]
        result = compile_kernel(request, stop_after=stage, assembler=assembler)
        report.diagnostics(result.diagnostics)
        if not result.ok:
            report.failure(_label(kernel))
            continue
        try:
            product = stage_product(args.emit, request, result)
        except ValueError as exc:  # e.g. an entry no file defines (parsing does not look)
            print(f"error: {_label(kernel)}: {exc}", file=sys.stderr)
            report.failure(_label(kernel))
            continue
        if args.out is None:
            if len(kernels) > 1:
                print(f"// {_label(kernel)}: {args.emit}")
            sys.stdout.write(as_text(product))
            continue
        path = args.out / (_emit_name(kernel) + FILE_SUFFIXES[args.emit])
        try:
            _write_product(path, product)
        except OSError as exc:
            print(f"error: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_USAGE
        report.note(f"wrote {path}")
    if report.message_format == "sarif":
        print(json.dumps(sarif_log(report.collected, "cutile-compile", RELEASE), indent=2))
    return EXIT_FAILED if report.failed else EXIT_OK


def _emit_name(kernel: Kernel) -> str:
    """`add_B=128_sm_90`: the kernel's label as a file name, cut and made unique by a hash
    of it when long generics would make it longer than a file system takes."""
    name = re.sub(r"[^A-Za-z0-9_.=-]+", "_", _label(kernel)).strip("_")
    if len(name) <= EMIT_NAME_CHARS:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]
    return f"{name[: EMIT_NAME_CHARS - 17]}-{digest}"


def _write_product(path: Path, product: str | bytes) -> None:
    if isinstance(product, bytes):
        path.write_bytes(product)
    else:
        path.write_text(product, encoding="utf-8")


def _run_remote(args: argparse.Namespace, sources: Sequence[SourceFile]) -> int:
    try:
        token = None if args.auth_token_file is None else read_token(args.auth_token_file)
        roots = None if args.tls_ca is None else args.tls_ca.read_bytes()
    except (TokenError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    from service.cli.remote_compiler import RemoteCompiler

    compiler = RemoteCompiler(args.server, token=token, root_certificates=roots)
    try:
        return Batch(args, compiler, Report(args.message_format)).run(sources)
    finally:
        compiler.close()


if __name__ == "__main__":
    sys.exit(main())
