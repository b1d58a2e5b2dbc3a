"""Compile every entry of a cutile-rs checkout unchanged and write COMPATIBILITY.md.

    python -m tests.compat.runner --cutile-rs PATH [-o COMPATIBILITY.md] [-j N]
           [--bundle DIR] [--gpu-results FILE] [--only SUBSTRING] [--no-cache]

Entries come from the checkout (`tests.compat.discover`), generics and expected verdicts
from the hand-read tables (`tests.compat.table`). Each entry is compiled to a cubin with
the real tileiras for the target its host code uses. `--bundle DIR` also writes the
cubins and contracts there as a `cutile-compile` bundle (with the variants `cutile-compile`
builds by default, `service.cli.specialize_arg`), for the GPU mode
(`tests.compat.gpu_check` on the GPU host, whose results `--gpu-results` merges back into
the table). `CUTILE_RS` stands in for `--cutile-rs`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from lowering.pipeline import CompileRequest, Stage, compile_kernel
from lowering.tileiras import Tileiras
from parser.diagnostics import Diagnostic
from parser.spans import SourceFile
from parser.specialization import TensorFacts
from protos.generated.cutile.compile.v1 import contract_pb2
from service.cache.artifact import Artifact
from service.cache.disk import DiskCache
from service.cache.keys import RequestKey
from service.cli.manifest import KernelRecord, read_manifest, write_kernel, write_manifest
from service.cli.specialize_arg import AUTO_VARIANTS, builds, kept_variants
from service.compile.engine import CompileEngine, Outcome
from tests.compat.discover import find_entries
from tests.compat.report import write_report
from tests.compat.result import Result
from tests.compat.table import Case, cases_for, load_rows, load_tuned, tuned_case


@dataclass(frozen=True)
class Job:
    case: Case
    source: SourceFile


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    root = args.cutile_rs or (Path(os.environ["CUTILE_RS"]) if "CUTILE_RS" in os.environ else None)
    if root is None or not root.is_dir():
        print(
            "error: give --cutile-rs PATH (or set CUTILE_RS) to a cutile-rs checkout",
            file=sys.stderr,
        )
        return 2
    sites = [s for s in find_entries(root) if args.only is None or args.only in s.key]
    rows = load_rows(args.tables) if args.tables else load_rows()
    cases = [case for site in sites for case in cases_for(site, rows)]
    tuned = load_tuned(args.tables) if args.tables else load_tuned()
    controls = [c for c in (tuned_case(case, tuned) for case in cases) if c is not None]
    stop_after = Stage.BYTECODE if args.front_end_only else Stage.CUBIN
    results = list(
        compile_cases(
            root,
            cases + controls,
            jobs=args.jobs,
            cache=not args.no_cache,
            bundle=args.bundle,
            stop_after=stop_after,
            early_launch=args.early_launch,
            # the GPU columns name the variant each launch ran: its machine code is needed
            variants=args.bundle is not None or args.gpu_results is not None,
        )
    )
    write_report(args.output, results, revision=_revision(root), gpu_results=args.gpu_results)
    results = [r for r in results if not r.case.control]
    compiled = sum(r.compiled for r in results)
    print(f"{compiled}/{len(results)} compiled; wrote {args.output}")
    return 0


def compile_cases(
    root: Path,
    cases: Sequence[Case],
    *,
    jobs: int = 1,
    cache: bool = True,
    bundle: Path | None = None,
    stop_after: Stage = Stage.CUBIN,
    early_launch: bool = True,
    variants: bool | None = None,
) -> Iterator[Result]:
    """Each case's result, in the order given; its artifact into `bundle` when it compiled
    (`early_launch`: every kernel compiled to wait for prior grids, the default), with the
    automatic variants `cutile-compile` builds (`variants`; None: when writing a bundle)."""
    texts: dict[str, SourceFile] = {}
    work = []
    for case in cases:
        path = case.site.path
        if path not in texts:
            texts[path] = SourceFile(path, (root / path).read_text(encoding="utf-8"))
        work.append(Job(case, texts[path]))
    records: list[KernelRecord] = []
    if bundle is not None:
        bundle.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(
        max_workers=max(1, jobs),
        initializer=_start_worker,
        initargs=(
            cache,
            stop_after,
            bundle is not None if variants is None else variants,
            early_launch,
        ),
    ) as pool:
        for job, done in zip(work, pool.map(_compile_one, work), strict=True):
            key, diagnostics, cubin, contract, variants = done
            builds = [(cubin, contract), *((v[2], v[3]) for v in variants)] if cubin else []
            if bundle is not None and cubin:
                artifact = Artifact(cubin, contract_pb2.LaunchContract.FromString(contract))
                records.append(write_kernel(bundle, artifact, key, job.source.name))
                for v_key, facts, v_cubin, v_contract in variants:
                    v_artifact = Artifact(
                        v_cubin, contract_pb2.LaunchContract.FromString(v_contract)
                    )
                    records.append(write_kernel(bundle, v_artifact, v_key, job.source.name, facts))
            yield Result(job.case, cubin is not None, diagnostics, len(cubin or b""), tuple(builds))
    if bundle is not None:
        kept = [
            r
            for r in read_manifest(bundle)
            if r.request_key not in {n.request_key for n in records}
        ]
        write_manifest(bundle, kept + records)


_ENGINE: CompileEngine | None = None


_STOP_AFTER = Stage.CUBIN
_VARIANTS = False  # also compile the automatic variants (for a bundle)
_EARLY_LAUNCH = True  # compile every kernel to wait for prior grids (the default)


def _start_worker(
    cache: bool, stop_after: Stage, variants: bool = False, early_launch: bool = True
) -> None:
    global _ENGINE, _STOP_AFTER, _VARIANTS, _EARLY_LAUNCH
    _ENGINE = CompileEngine(Tileiras.locate(), cache=DiskCache() if cache else None)
    _STOP_AFTER = stop_after
    _VARIANTS = variants
    _EARLY_LAUNCH = early_launch


# an automatic variant: its key, facts, cubin and serialized contract
Variant = tuple[RequestKey, tuple[TensorFacts, ...], bytes, bytes]
Done = tuple[RequestKey, tuple[Diagnostic, ...], bytes | None, bytes, tuple[Variant, ...]]


def _compile_one(job: Job) -> Done:
    """Compile one case in a worker; what crosses back is plain data (protobuf classes do
    not pickle)."""
    if _STOP_AFTER is not Stage.CUBIN:
        result = compile_kernel(_request(job.case, job.source), stop_after=_STOP_AFTER)
        return RequestKey("", 0), result.diagnostics, None if not result.ok else b"", b"", ()
    outcome = _outcome(job)
    artifact = outcome.artifact
    if artifact is None:
        return outcome.key, outcome.diagnostics, None, b"", ()
    variants = _variants(job, artifact) if _VARIANTS else ()
    contract = artifact.contract.SerializeToString()
    return outcome.key, outcome.diagnostics, artifact.cubin, contract, variants


def _variants(job: Job, general: Artifact) -> tuple[Variant, ...]:
    """What `cutile-compile` builds next to the general kernel by default (`--specialize
    auto`): the variants that assemble to another cubin (a failing one is left out)."""
    assert _ENGINE is not None
    built: list[Variant | None] = []
    plain = _request(job.case, job.source)
    for auto in (a for a in AUTO_VARIANTS if builds(a, general.contract)):
        facts = auto.facts(general.contract)
        request = replace(plain, specialization=facts, occupancy=auto.occupancy)
        try:
            outcome = _ENGINE.compile(request)
        except Exception:  # the general kernel serves every launch
            built.append(None)
            continue
        artifact = outcome.artifact
        if artifact is None:
            built.append(None)
            continue
        contract = artifact.contract.SerializeToString()
        built.append((outcome.key, facts, artifact.cubin, contract))
    keep = kept_variants(general.cubin, [None if v is None else v[2] for v in built])
    return tuple(v for v, kept in zip(built, keep, strict=True) if kept and v is not None)


def _outcome(job: Job) -> Outcome:
    assert _ENGINE is not None
    request = _request(job.case, job.source)
    try:
        return _ENGINE.compile(request)
    except Exception as exc:  # reported in the table like any other failure
        from parser.codes import INTERNAL_ERROR
        from parser.diagnostics import Severity

        message = f"internal compiler error: {type(exc).__name__}: {exc}"
        return Outcome(_ENGINE.key(request), (Diagnostic(Severity.ERROR, INTERNAL_ERROR, message),))


def _request(case: Case, source: SourceFile) -> CompileRequest:
    return CompileRequest(
        sources=(source,),
        entry=f"{case.site.module}::{case.site.function}",
        generics=case.generics,
        arch=case.arch,
        early_launch=_EARLY_LAUNCH,
    )


def _revision(root: Path) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except OSError:
        return "unknown"
    return done.stdout.strip() or "unknown"


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tests.compat.runner", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--cutile-rs", type=Path, help="a cutile-rs checkout (or CUTILE_RS)")
    parser.add_argument("-o", "--output", type=Path, default=Path("COMPATIBILITY.md"))
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--bundle", type=Path, help="also write the cubins here (GPU mode)")
    parser.add_argument("--gpu-results", type=Path, help="tests.compat.gpu_check's JSON")
    parser.add_argument("--only", help="only entries whose key contains this")
    parser.add_argument("--tables", type=Path, help=argparse.SUPPRESS)  # the unit test's
    parser.add_argument("--no-cache", action="store_true", help="compile everything anew")
    parser.add_argument(
        "--early-launch",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="compile every kernel to wait for prior grids, as cutile-compile does by default "
        "(and the GPU check then launches them early); --no-early-launch: plain kernels",
    )
    parser.add_argument(
        "--front-end-only",
        action="store_true",
        help="stop at bytecode (no tileiras): a quick look at the verdicts",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
