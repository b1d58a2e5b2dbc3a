"""The shared launch vectors (tests/vectors/launch): the Python planner and launcher must do
exactly what each case records; the Rust host runs the same files
(client_stubs/rust/cutile-host/tests/launch_vectors.rs)."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format

from client_stubs import Kernel, driver
from client_stubs.client import request_key
from client_stubs.errors import IntegrityError
from client_stubs.integrity import verify
from protos.generated.cutile.compile.v1 import compile_pb2
from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from tests.client_stubs.fake_driver import CUBIN, packed_params
from tests.vectors import generate
from tests.vectors.args import build_arg, outcome

VECTORS = Path(generate.OUT)
CASES = [
    (path.stem, c)
    for path in sorted(VECTORS.glob("*.json"))
    for c in json.loads(path.read_text(encoding="utf-8"))["cases"]
]
IDS = [f"{family}/{c['name']}" for family, c in CASES]


def contract_of(case: dict[str, Any]) -> pb.LaunchContract:
    return pb.LaunchContract.FromString(bytes.fromhex(case["contract_pb"]))


def find(family: str, name: str) -> dict[str, Any]:
    return next(c for f, c in CASES if f == family and c["name"] == name)


def test_the_vectors_are_what_the_generator_writes() -> None:
    wanted = generate.documents()
    stored = {
        p: p.read_text(encoding="utf-8")
        for folder in (generate.OUT, generate.HOST)
        for p in folder.glob("*.json")
    }
    assert stored == wanted, "stale: run python -m tests.vectors.generate"


def test_request_key_vectors_hold() -> None:
    doc = json.loads((generate.HOST / "request_keys.json").read_text(encoding="utf-8"))
    keys = [c["key"] for c in doc["cases"]]
    assert len(set(keys)) == len(keys) - 1  # skip_cache changes no key
    for c in doc["cases"]:
        request = compile_pb2.CompileRequest.FromString(bytes.fromhex(c["request_pb"]))
        assert request_key(request) == c["key"]


def test_artifact_vectors_hold() -> None:
    doc = json.loads((generate.HOST / "artifacts.json").read_text(encoding="utf-8"))
    key = bytes.fromhex(doc["signing_key"])
    for c in doc["cases"]:
        artifact = compile_pb2.Artifact.FromString(bytes.fromhex(c["artifact_pb"]))
        for holder, signing_key in (("with_key", key), ("without_key", None)):
            try:
                verify(artifact, c["name"], signing_key)
                verdict = "ok"
            except IntegrityError:
                verdict = "IntegrityError"
            assert verdict == c["expect"][holder], (c["name"], holder)


def test_every_check_kind_is_covered() -> None:
    kinds = {c["expect"]["error"]["kind"] for _, c in CASES if "error" in c["expect"]}
    # OutputRankError cannot happen past contract validation (an output's rank is 1..3 and
    # must equal the tensor's); HostArgumentError and TargetMismatchError are not planner
    # checks (host arrays are a Python matter; the target is checked when a cubin loads)
    assert kinds >= {
        "ArityError", "ArgumentKindError", "MovedArgumentError", "DTypeMismatchError",
        "RankMismatchError", "ShapeMismatchError", "TileShapeMismatchError",
        "MapShapeMismatchError", "NumTileBlocksError", "EmptyOutputError",
        "NegativeStrideError", "DeviceMismatchError", "AssumptionError", "OverlapError",
        "SelfOverlapError", "GridMismatchError", "GridLimitError", "LaunchCheckError",
        "ScalarValueError", "SlotValueError", "LaunchGridError", "ContractError",
    }  # fmt: skip
    assert sum("accepted" in c["expect"] for _, c in CASES) >= 30


@pytest.mark.parametrize(("family", "case"), CASES, ids=IDS)
def test_the_planner_does_what_the_vector_says(family: str, case: dict[str, Any]) -> None:
    contract = contract_of(case)
    assert json_format.ParseDict(case["contract"], pb.LaunchContract()) == contract
    assert outcome(contract, case["args"], case["grid"]) == case["expect"]


@pytest.mark.parametrize(
    ("family", "case"),
    [(f, c) for f, c in CASES if "accepted" in c["expect"]],
    ids=[i for i, (_, c) in zip(IDS, CASES, strict=True) if "accepted" in c["expect"]],
)
def test_an_accepted_vector_launches_those_bytes(
    family: str, case: dict[str, Any], fake_driver, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = case["expect"]["accepted"]
    buffer = bytes.fromhex(expected["param_buffer"])
    launched: list[tuple[object, ...]] = []

    def launch(function, grid, block, smem, stream, address) -> None:  # type: ignore[no-untyped-def]
        launched.append((grid, block, packed_params(address, len(buffer))))  # read it now

    monkeypatch.setattr(driver, "launch_params", launch)
    monkeypatch.setattr(driver, "launch_early", launch)  # a kernel that waits for prior grids
    kernel = Kernel(CUBIN, contract_of(case), allow_unchecked=True)
    args = [build_arg(a) for a in case["args"]]
    grid = tuple(case["grid"]) if case["grid"] is not None else None
    kernel.launch(*args, grid=grid, sync=True)
    assert launched == [(tuple(expected["grid"]), (1, 1, 1), buffer)]


# ---- a few vectors checked by hand ----------------------------------------------------------


def test_add_by_hand() -> None:
    n, z, x, y = 1_000_003, 0x7F00_0000_0000, 0x7F10_0000_0000, 0x7F20_0000_0000
    accepted = find("accepted", "add")["expect"]["accepted"]
    assert accepted["grid"] == [math.ceil(n / 128), 1, 1]
    # z: ptr, dim, stride, part dim, part stride; x and y: ptr, dim, stride (i32 index slots)
    assert bytes.fromhex(accepted["param_buffer"]) == struct.pack(
        "<QiiiiQiiQii", z, n, 1, 128, 1, x, n, 1, y, n, 1
    )


def test_scalar_extremes_by_hand() -> None:
    accepted = find("scalars", "extremes")["expect"]["accepted"]
    buffer = bytes.fromhex(accepted["param_buffer"])
    # z's five slots take 24 bytes; then bool, i8, u8 at 24, 25, 26; i16, u16 at 28, 30;
    # i32, u32 at 32, 36; i64, u64 at 40, 48; f16, bf16 at 56, 58; f32 at 60; f64 at 64
    assert buffer[24:27] == bytes([1, 0x80, 0xFF])
    assert struct.unpack_from("<hH", buffer, 28) == (-32768, 65535)
    assert struct.unpack_from("<iI", buffer, 32) == (-(2**31), 2**32 - 1)
    assert struct.unpack_from("<qQ", buffer, 40) == (-(2**63), 2**64 - 1)
    assert buffer[56:58] == struct.pack("<e", 65504.0)
    assert buffer[58:60] == bytes([0x80, 0x3F])  # 1 + 2^-8 is a tie: rounds to even, 1.0
    assert buffer[60:64] == struct.pack("<f", 0.1)
    assert buffer[64:72] == struct.pack("<d", -0.0) and len(buffer) == 72


def test_host_grid_by_hand() -> None:
    accepted = find("pointers", "addresses")["expect"]["accepted"]
    assert accepted["grid"] == [4, 1, 1]
    assert bytes.fromhex(accepted["param_buffer"]) == struct.pack(
        "<QQfi", 0x7F20_0000_0000, 0x7F10_0000_0000, 2.0, 4096
    )
