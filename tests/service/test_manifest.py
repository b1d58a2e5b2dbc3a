"""service.cli.manifest: the batch output folder layout the Python client reads."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest
from google.protobuf import json_format

from parser.specialization import TensorFacts
from protos.generated.cutile.compile.v1 import contract_pb2
from service.cache.artifact import Artifact
from service.cache.keys import RequestKey
from service.cli.manifest import (
    MANIFEST_NAME,
    OutputError,
    facts_record,
    read_manifest,
    write_kernel,
    write_manifest,
)
from service.convert import contract_to_proto

CLIENT_FIELDS = {
    "module",
    "function",
    "generics",
    "sm",
    "cubin",
    "contract",
    "contract_json",
    "cubin_sha256",
}


def test_kernel_files_and_manifest(tmp_path: Path, make_contract) -> None:
    artifact = Artifact(b"\x7fELF cubin", contract_to_proto(make_contract("add", "sm_100")))
    key = RequestKey("0123abcd" + "0" * 56, 99)
    record = write_kernel(tmp_path, artifact, key, "src/add.rs")
    assert record.cubin == "add-0123abcd-sm_100.cubin"
    assert (tmp_path / record.cubin).read_bytes() == artifact.cubin
    pb = contract_pb2.LaunchContract.FromString((tmp_path / record.contract).read_bytes())
    assert pb == artifact.contract
    text = (tmp_path / record.contract_json).read_text()
    assert json_format.Parse(text, contract_pb2.LaunchContract()) == artifact.contract
    assert '"offset": 0' in text  # zero values are written, not omitted

    path = write_manifest(tmp_path, [record])
    assert path == tmp_path / MANIFEST_NAME
    manifest = json.loads(path.read_text())
    assert manifest["schema"] == 2
    (kernel,) = manifest["kernels"]
    assert kernel.keys() >= CLIENT_FIELDS
    assert kernel["generics"] == {"B": "128"}
    assert kernel["sm"] == "sm_100"
    assert kernel["cubin_sha256"] == hashlib.sha256(artifact.cubin).hexdigest()
    assert kernel["source"] == "src/add.rs" and kernel["request_key"] == key.sha256
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [record.cubin, record.contract, record.contract_json, MANIFEST_NAME]
    )  # no temporary files left behind


def test_empty_manifest(tmp_path: Path) -> None:
    write_manifest(tmp_path, [])
    assert json.loads((tmp_path / MANIFEST_NAME).read_text()) == {"schema": 2, "kernels": []}


def test_facts_record_names_view_facts_only_where_they_relax_the_default() -> None:
    record = facts_record(
        (
            TensorFacts("x", (16,), (1,)),
            TensorFacts("y", base_align=4),
            TensorFacts("z", (), (2,), unit_last_stride=False),
        )
    )
    assert record == [
        {"param": "x", "dim_divisors": [16], "stride_divisors": [1]},
        {"param": "y", "dim_divisors": [], "stride_divisors": [], "base_align": 4},
        {"param": "z", "dim_divisors": [], "stride_divisors": [2], "unit_last_stride": False},
    ]


def _bundle_of_one(tmp_path: Path, make_contract) -> dict:
    """A bundle of one kernel; its manifest as JSON."""
    artifact = Artifact(b"\x7fELF cubin", contract_to_proto(make_contract("add", "sm_90")))
    write_manifest(tmp_path, [write_kernel(tmp_path, artifact, RequestKey("ab" * 32, 9), "a.rs")])
    return json.loads((tmp_path / MANIFEST_NAME).read_text())


def test_fields_a_later_version_added_are_dropped_not_the_kernel(tmp_path, make_contract) -> None:
    """One unknown key in one record made the whole manifest "no earlier kernels"."""
    manifest = _bundle_of_one(tmp_path, make_contract)
    manifest["kernels"][0]["added_later"] = 1
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(manifest))
    (record,) = read_manifest(tmp_path)
    assert record.function == "add" and record.generics == {"B": "128"}


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (lambda m: m["kernels"][0].update(cubin=None), r"kernels\[0\]\.cubin is not str"),
        (lambda m: m["kernels"][0].update(generics=[]), r"kernels\[0\]\.generics is not dict"),
        (lambda m: m["kernels"][0].update(facts=[1]), r"kernels\[0\]\.facts is not list"),
        (lambda m: m["kernels"][0].pop("sm"), r"kernels\[0\] lacks `sm`"),
        (lambda m: m["kernels"].append([]), r"kernels\[1\] is not an object"),
        (lambda m: m.update(kernels={}), "`kernels` is not a list"),
        (lambda m: m.update(schema=3), "unknown schema 3"),
        (lambda m: m.update(schema=[1]), r"unknown schema \[1\]"),
    ],
)
def test_a_manifest_that_does_not_validate_is_unreadable(
    tmp_path, make_contract, edit, problem
) -> None:
    """Such a manifest was silently replaced (its kernels lost) or crashed the run."""
    manifest = _bundle_of_one(tmp_path, make_contract)
    edit(manifest)
    (tmp_path / MANIFEST_NAME).write_text(json.dumps(manifest))
    with pytest.raises(OutputError, match=f"{MANIFEST_NAME} is unreadable: {problem}"):
        read_manifest(tmp_path)


@pytest.mark.parametrize("text", ["[" * 100_000, '{"schema": 1, "kern', "\xff"])
def test_a_manifest_that_does_not_parse_is_unreadable(tmp_path: Path, text: str) -> None:
    (tmp_path / MANIFEST_NAME).write_text(text, encoding="latin-1")
    with pytest.raises(OutputError, match="is unreadable"):
        read_manifest(tmp_path)


def test_no_manifest_is_no_earlier_kernels(tmp_path: Path) -> None:
    assert read_manifest(tmp_path) == []


@pytest.mark.parametrize(
    ("function", "sm", "key", "problem"),
    [
        ("../../escaped", "sm_90", "ab" * 32, "function '../../escaped' is not a Rust identifier"),
        ("add", "sm_90/../x", "ab" * 32, "target 'sm_90/../x' is not an sm_NN name"),
        ("add", "sm_90", "../" + "a" * 61, "is not 64 hex digits"),
        ("add", "sm_90", "ab", "request key 'ab' is not 64 hex digits"),
    ],
)
def test_a_kernel_whose_file_names_would_be_paths_is_not_written(
    tmp_path: Path, make_contract, function: str, sm: str, key: str, problem: str
) -> None:
    contract = contract_to_proto(make_contract("add", "sm_90"))
    contract.kernel.function, contract.target.sm = function, sm
    out = tmp_path / "a" / "out"
    out.mkdir(parents=True)
    with pytest.raises(OutputError, match=problem):
        write_kernel(out, Artifact(b"\x7fELF", contract), RequestKey(key, 1), "a.rs")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_a_write_that_fails_names_the_file(tmp_path: Path) -> None:
    """A read-only or full OUT, or a folder in the way, ended in a traceback."""
    (tmp_path / MANIFEST_NAME).mkdir()
    with pytest.raises(OutputError, match=re.escape(f"cannot write {tmp_path / MANIFEST_NAME}: ")):
        write_manifest(tmp_path, [])
    with pytest.raises(OutputError, match=r"cannot write .*nope/manifest\.json: No such file"):
        write_manifest(tmp_path / "nope", [])
    assert [p.name for p in tmp_path.iterdir()] == [MANIFEST_NAME]  # no temporary file left
