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
fields; only add to them. Files are written to a temporary name and renamed, so a reader
never sees half.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from google.protobuf import json_format

from client_stubs.integrity import contract_bytes
from parser.front_end import DEFAULT_BASE_ALIGN, TensorFacts
from service.cache.artifact import Artifact
from service.cache.keys import RequestKey

MANIFEST_NAME = "manifest.json"
MANIFEST_SCHEMA = 1


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
    )
    contract_json = json_format.MessageToJson(contract, always_print_fields_with_no_presence=True)
    write_atomically(out_dir / record.cubin, artifact.cubin)
    write_atomically(out_dir / record.contract, contract_bytes(contract))
    write_atomically(out_dir / record.contract_json, (contract_json + "\n").encode("utf-8"))
    return record


def read_manifest(out_dir: Path) -> list[KernelRecord]:
    """The records of an existing manifest whose files are all still there ([] if none)."""
    try:
        data = json.loads((out_dir / MANIFEST_NAME).read_text(encoding="utf-8"))
        records = [KernelRecord(**item) for item in data["kernels"]]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    return [
        r
        for r in records
        if all((out_dir / name).is_file() for name in (r.cubin, r.contract, r.contract_json))
    ]


def write_manifest(out_dir: Path, records: Iterable[KernelRecord]) -> Path:
    manifest = {"schema": MANIFEST_SCHEMA, "kernels": [asdict(r) for r in records]}
    path = out_dir / MANIFEST_NAME
    write_atomically(path, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"))
    return path


def write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
