"""service.cli.manifest: the batch output folder layout the Python client reads."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from google.protobuf import json_format

from parser.specialization import TensorFacts
from protos.generated.cutile.compile.v1 import contract_pb2
from service.cache.artifact import Artifact
from service.cache.keys import RequestKey
from service.cli.manifest import MANIFEST_NAME, facts_record, write_kernel, write_manifest
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
    assert manifest["schema"] == 1
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
    assert json.loads((tmp_path / MANIFEST_NAME).read_text()) == {"schema": 1, "kernels": []}


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
