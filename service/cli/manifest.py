"""The batch output folder: one cubin + contract pair per kernel and `manifest.json`.

    OUT/<function>-<8 hex of request key>-<sm>.cubin
    OUT/<function>-<8 hex of request key>-<sm>.contract.pb     binary LaunchContract
    OUT/<function>-<8 hex of request key>-<sm>.contract.json   the same, as proto JSON
    OUT/manifest.json   {"schema": 1, "kernels": [{module, function, generics, sm, cubin,
                         contract, contract_json, cubin_sha256, contract_sha256, source,
                         request_key,
                         facts: [{param, dim_divisors, stride_divisors,
                                 base_align?, unit_last_stride?}]}]}

The request key covers the sources' texts, not their paths (`service.cache`), so a kernel
gets the same file names whether it was compiled from a relative path, an absolute one or
through `--server`. Paths in the manifest are relative to OUT. The Python client reads these
fields; only add to them (a record's unknown fields are dropped on reading). Files are written
to a temporary name and renamed, so a reader never sees half. A manifest that cannot be read
is never replaced (`OutputError`), and a kernel whose function, target or key would not make a
plain file name is never written.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path

from google.protobuf import json_format

from client_stubs.integrity import contract_bytes
from parser.front_end import DEFAULT_BASE_ALIGN, TensorFacts
from service.cache.artifact import Artifact
from service.cache.keys import RequestKey
from service.convert import clip

MANIFEST_NAME = "manifest.json"
MANIFEST_SCHEMA = 2  # 2: records may be occupancy variants (`min_tile_blocks`)
READABLE_SCHEMAS = frozenset({1, MANIFEST_SCHEMA})  # an earlier run's manifest

# what file names are built of: a server's reply must not name a path
_FUNCTION = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # a Rust identifier
_SM = re.compile(r"sm_[0-9]+[a-z]?")
_KEY = re.compile(r"[0-9a-fA-F]{64}")


class OutputError(Exception):
    """OUT cannot take this run's kernels; the text is the message for the user."""


@dataclass(frozen=True)
class KernelRecord:
    module: str
    function: str
    generics: dict[str, str] = field(hash=False)
    sm: str
    cubin: str
    contract: str
    contract_json: str
    cubin_sha256: str
    source: str  # the .rs file as given on the command line
    request_key: str
    # the request's tensor facts (`--facts`): variants of one kernel differ only here
    facts: list[dict[str, object]] = field(default_factory=list, hash=False)
    # sha256 of the contract's deterministic serialization (the .pb file): hosts refuse a
    # kernel whose contract does not match it
    contract_sha256: str = ""
    # an occupancy variant (its contract's `min_tile_blocks`): hosts take it only for
    # launches of at least this many tile blocks; 0: any launch
    min_tile_blocks: int = 0


_FIELDS = {f.name: f for f in fields(KernelRecord)}
_REQUIRED = [n for n, f in _FIELDS.items() if f.default is MISSING and f.default_factory is MISSING]


def file_name_problem(function: str, sm: str, request_key: str) -> str | None:
    """Why a kernel's files cannot be named after these, None when they can."""
    if not _FUNCTION.fullmatch(function):
        return f"function {clip(function)!a} is not a Rust identifier"
    if not _SM.fullmatch(sm):
        return f"target {clip(sm)!a} is not an sm_NN name"
    if not _KEY.fullmatch(request_key):
        return f"request key {clip(request_key)!a} is not 64 hex digits"
    return None


def facts_record(facts: Iterable[TensorFacts]) -> list[dict[str, object]]:
    """The manifest's `facts`; the view facts appear only where they relax the default."""
    return [_fact_record(f) for f in facts]


def _fact_record(facts: TensorFacts) -> dict[str, object]:
    record: dict[str, object] = {
        "param": facts.param,
        "dim_divisors": list(facts.dim_divisors),
        "stride_divisors": list(facts.stride_divisors),
    }
    if facts.base_align != DEFAULT_BASE_ALIGN:
        record["base_align"] = facts.base_align
    if not facts.unit_last_stride:
        record["unit_last_stride"] = False
    return record


def write_kernel(
    out_dir: Path,
    artifact: Artifact,
    key: RequestKey,
    source: str,
    facts: Iterable[TensorFacts] = (),
) -> KernelRecord:
    """Write the cubin and both contract forms of one kernel; its manifest record."""
    contract = artifact.contract
    problem = file_name_problem(contract.kernel.function, contract.target.sm, key.sha256)
    if problem is not None:
        raise OutputError(f"refusing to write a kernel into {out_dir}: {problem}")
    stem = f"{contract.kernel.function}-{key.short}-{contract.target.sm}"
    record = KernelRecord(
        module=contract.kernel.module,
        function=contract.kernel.function,
        generics={g.name: g.value for g in contract.specialization.generics},
        sm=contract.target.sm,
        cubin=f"{stem}.cubin",
        contract=f"{stem}.contract.pb",
        contract_json=f"{stem}.contract.json",
        cubin_sha256=hashlib.sha256(artifact.cubin).hexdigest(),
        source=source,
        request_key=key.sha256,
        facts=facts_record(facts),
        contract_sha256=artifact.contract_digest.sha256,
        min_tile_blocks=contract.launch.min_tile_blocks,
    )
    contract_json = json_format.MessageToJson(contract, always_print_fields_with_no_presence=True)
    write_atomically(out_dir / record.cubin, artifact.cubin)
    write_atomically(out_dir / record.contract, contract_bytes(contract))
    write_atomically(out_dir / record.contract_json, (contract_json + "\n").encode("utf-8"))
    return record


def read_manifest(out_dir: Path) -> list[KernelRecord]:
    """The records of an existing manifest whose files are all still there ([] if none);
    `OutputError` when there is one that cannot be read (writing would lose its kernels)."""
    path = out_dir / MANIFEST_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        records = _records(data)
    except FileNotFoundError:
        return []
    except (OSError, ValueError, RecursionError) as exc:  # RecursionError: nested too deep
        raise OutputError(f"{path} is unreadable: {exc}") from None
    return [
        r
        for r in records
        if all((out_dir / name).is_file() for name in (r.cubin, r.contract, r.contract_json))
    ]


def _records(data: object) -> list[KernelRecord]:
    """The records of a parsed manifest; `ValueError` says what is wrong with it."""
    schema = data.get("schema") if isinstance(data, dict) else None
    if not isinstance(data, dict) or type(schema) is not int or schema not in READABLE_SCHEMAS:
        known = sorted(READABLE_SCHEMAS)
        raise ValueError(f"unknown schema {clip(repr(schema))} (known: {known})")
    kernels = data.get("kernels")
    if not isinstance(kernels, list):
        raise ValueError("`kernels` is not a list")
    return [_record(index, item) for index, item in enumerate(kernels)]


def _record(index: int, item: object) -> KernelRecord:
    """One record; fields a later version added are dropped, the known ones type-checked."""
    if not isinstance(item, dict):
        raise ValueError(f"kernels[{index}] is not an object")
    missing = [name for name in _REQUIRED if name not in item]
    if missing:
        raise ValueError(f"kernels[{index}] lacks `{missing[0]}`")
    known = {name: value for name, value in item.items() if name in _FIELDS}
    for name, value in known.items():
        if not _well_typed(name, value):
            raise ValueError(f"kernels[{index}].{name} is not {_FIELDS[name].type}")
    return KernelRecord(**known)


def _well_typed(name: str, value: object) -> bool:
    if name == "generics":
        return isinstance(value, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        )
    if name == "facts":
        return isinstance(value, list) and all(isinstance(f, dict) for f in value)
    if name == "min_tile_blocks":
        return type(value) is int and 0 <= value < 2**32
    return isinstance(value, str)


def write_manifest(out_dir: Path, records: Iterable[KernelRecord]) -> Path:
    manifest = {"schema": MANIFEST_SCHEMA, "kernels": [asdict(r) for r in records]}
    path = out_dir / MANIFEST_NAME
    write_atomically(path, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))
    return path


def write_atomically(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file; `OutputError` names `path` when
    that fails (a read-only or full file system, a folder in the way)."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
