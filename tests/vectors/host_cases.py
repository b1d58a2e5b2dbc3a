"""Vectors for the host's artifact layer, written from the Python client: request cache keys
(`client_stubs.client.request_key` of requests `CompileClient.build_request` makes) and
sealed artifacts (`client_stubs.integrity`), signed and tampered. The Rust host's tests read
them from tests/vectors/host (client_stubs/rust/cutile-host/tests/host_vectors.rs)."""

from __future__ import annotations

from typing import Any

from client_stubs.client import CompileClient, request_key
from client_stubs.integrity import seal
from client_stubs.specialization import facts_for
from client_stubs.tensor import DeviceTensor
from protos.generated.cutile.compile.v1 import compile_pb2
from tests.client_stubs.conftest import add_contract, scale_ptr_contract

SIGNING_KEY = b"a key the daemon and its hosts share"
KERNEL = "#[cutile::module]\nmod kernel {\n    // \u00fcber: non-ASCII text\n}\n"


def _request_case(name: str, **kwargs: Any) -> dict[str, Any]:
    """A request from build_request's keywords, its serialization and key."""
    inputs = {
        "source_text": KERNEL,
        "entry": "add",
        "generics": {},
        "target": "",
        "file_name": "kernel.rs",
        **kwargs,
    }
    request = CompileClient.build_request(
        inputs["source_text"],
        inputs["entry"],
        inputs["generics"],
        inputs["target"],
        inputs["file_name"],
        **{k: v for k, v in inputs.items() if k not in _POSITIONAL},
    )
    facts = [
        {
            "param": f.param,
            "dim_divisors": list(f.dim_divisors),
            "stride_divisors": list(f.stride_divisors),
            "base_align": f.base_align,
            "any_last_stride": f.any_last_stride,
        }
        for f in request.specialization
    ]
    return {
        "name": name,
        "inputs": {
            **{k: v for k, v in inputs.items() if k != "specialize_for"},
            "specialization": facts,
        },
        "request_pb": request.SerializeToString(deterministic=True).hex(),
        "key": request_key(request),
    }


_POSITIONAL = ("source_text", "entry", "generics", "target", "file_name")


def request_keys() -> list[dict[str, Any]]:
    return [
        _request_case("plain"),
        _request_case("generics", generics={"B": "1024", "E": "f32", "A": "[64, 32]"}),
        _request_case("empty_generic", generics={"B": "", "": "x"}),
        _request_case(
            "prefix_keys", generics={"A": "1", "AB": "2", "B": "3", "BA": "4", "\u00e9": "5"}
        ),
        _request_case("target_and_options", target="sm_90", host_arch="x86_64", opt_level=0),
        _request_case("lineinfo", lineinfo=True, opt_level=2, host_arch="aarch64"),
        _request_case("exact_accumulators", exact_accumulators=True),
        _request_case("exact_f32_products", exact_f32_products=True),
        _request_case("plain_launch", early_launch=False),
        _request_case("skip_cache_ignored", skip_cache=True),
        _request_case("generic_args", generic_args=["f16", "128"]),
        _request_case("extra_sources", extra_sources={"util.rs": "fn util() {}", "b.rs": ""}),
        _request_case("module_entry", entry="kernel::add", file_name="add.rs"),
    ]


def _artifact(contract: Any, cubin: bytes, key: bytes | None) -> compile_pb2.Artifact:
    artifact = compile_pb2.Artifact(cubin=cubin)
    artifact.contract.CopyFrom(contract)
    artifact.request_key.sha256 = "ab" * 32
    return seal(artifact, key)


def artifacts() -> list[dict[str, Any]]:
    """Sealed artifacts and what a host with (or without) the signing key makes of them."""
    cubin = b"\x7fELF a cubin of bytes " * 10
    signed = _artifact(add_contract(), cubin, SIGNING_KEY)
    unsigned = _artifact(scale_ptr_contract(), cubin, None)
    swapped = compile_pb2.Artifact()
    swapped.CopyFrom(signed)
    swapped.contract.launch.param_buffer_bytes += 8  # a contract changed on the way
    bad_cubin = compile_pb2.Artifact()
    bad_cubin.CopyFrom(signed)
    bad_cubin.cubin = cubin[:-1] + b"!"
    no_digest = compile_pb2.Artifact()
    no_digest.CopyFrom(unsigned)
    no_digest.ClearField("contract_digest")
    forged = compile_pb2.Artifact()
    forged.CopyFrom(signed)
    forged.signature = bytes(32)
    rows = [
        ("signed", signed, {"with_key": "ok", "without_key": "ok"}),
        ("unsigned", unsigned, {"with_key": "IntegrityError", "without_key": "ok"}),
        (
            "contract_changed",
            swapped,
            {"with_key": "IntegrityError", "without_key": "IntegrityError"},
        ),
        (
            "cubin_changed",
            bad_cubin,
            {"with_key": "IntegrityError", "without_key": "IntegrityError"},
        ),
        (
            "no_contract_digest",
            no_digest,
            {"with_key": "IntegrityError", "without_key": "IntegrityError"},
        ),
        ("forged_signature", forged, {"with_key": "IntegrityError", "without_key": "ok"}),
    ]
    return [
        {
            "name": name,
            "artifact_pb": artifact.SerializeToString(deterministic=True).hex(),
            "signature": artifact.signature.hex(),
            "expect": expect,
        }
        for name, artifact, expect in rows
    ]


def _layout(
    ptr: int, shape: list[int], strides: list[int] | None = None, dtype: str = "f32"
) -> dict[str, Any]:
    return {"ptr": hex(ptr), "shape": shape, "strides": strides, "dtype": dtype}


def facts() -> list[dict[str, Any]]:
    """Named tensor layouts and the facts `specialization.facts_for` measures of them (what a
    served kernel asks the service for: both hosts must ask alike, as they share a cache)."""
    cases = {
        "contiguous": {"x": _layout(0x7F00_0000_0000, [4096, 4096])},
        "odd_extents": {"x": _layout(0x7F00_0000_0000, [1001, 3])},
        "nothing_to_say": {"x": _layout(0x7F00_0000_0010, [3, 5], [5, 1])},
        "misaligned_base": {"x": _layout(0x7F00_0000_0004, [64])},
        "column_block": {"x": _layout(0x7F00_0000_0000, [512, 64], [3000, 1])},
        "transposed": {"x": _layout(0x7F00_0000_0000, [64, 48], [1, 64])},
        "zero_and_negative": {"x": _layout(0x7F00_0000_0000, [0, 8], [-8, -1])},
        "rank3_bf16": {"q": _layout(0x7F00_0000_0100, [2, 32, 128], None, "bf16")},
        "sorted_by_name": {
            "z": _layout(0x7F00_0000_0000, [1024]),
            "a": _layout(0x7F00_0000_0008, [7]),
            "m": _layout(0x7F00_0000_0000, [3]),
        },
    }
    out = []
    for name, tensors in cases.items():
        objects = {
            param: DeviceTensor(int(t["ptr"], 16), t["shape"], t["strides"], t["dtype"])
            for param, t in tensors.items()
        }
        measured = facts_for(objects)
        out.append(
            {
                "name": name,
                "tensors": tensors,
                "facts_pb": [f.SerializeToString(deterministic=True).hex() for f in measured],
            }
        )
    return out


def families() -> dict[str, Any]:
    return {
        "facts": {"cases": facts()},
        "request_keys": {"cases": request_keys()},
        "artifacts": {"signing_key": SIGNING_KEY.hex(), "cases": artifacts()},
    }
