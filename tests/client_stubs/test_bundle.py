"""Bundle: loading a cutile-compile output folder (manifest.json + cubins + contracts)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from google.protobuf import json_format

from client_stubs import (
    AmbiguousKernelError,
    Bundle,
    BundleError,
    IntegrityError,
    Kernel,
    KernelNotFoundError,
    driver,
)


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch):
    """Bundle selection must not depend on the machine the tests run on."""
    monkeypatch.setattr(driver, "device_count", lambda: 0)


def write_bundle(root: Path, kit, variants, *, json_only: bool = False) -> list[dict]:
    kernels = []
    for function, block, sm in variants:
        contract = kit.add(block=block) if function == "add" else kit.saxpy(block=block)
        contract.target.sm = sm
        stem = f"{function}_B{block}_{sm}"
        cubin = f"{stem} cubin bytes".encode()
        (root / f"{stem}.cubin").write_bytes(cubin)
        (root / f"{stem}.contract.json").write_text(json_format.MessageToJson(contract))
        entry = {
            "module": "kernel",
            "function": function,
            "generics": {"B": str(block)},
            "sm": sm,
            "cubin": f"{stem}.cubin",
            "contract_json": f"{stem}.contract.json",
            "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
        }
        if not json_only:
            (root / f"{stem}.contract.pb").write_bytes(contract.SerializeToString())
            entry["contract"] = f"{stem}.contract.pb"
        kernels.append(entry)
    (root / "manifest.json").write_text(json.dumps({"schema": 1, "kernels": kernels}))
    return kernels


def test_open_and_load_a_kernel(tmp_path, kit):
    write_bundle(
        tmp_path, kit, [("add", 128, "sm_90"), ("add", 1024, "sm_90"), ("saxpy", 1024, "sm_90")]
    )
    bundle = Bundle.open(tmp_path)
    assert len(bundle) == 3
    kernel = bundle.kernel("add", {"B": "1024"})
    assert isinstance(kernel, Kernel)
    assert kernel.generics == {"B": "1024"} and kernel.sm == "sm_90"
    assert kernel.spec.params[0].tile_shape == (1024,)
    assert bundle.kernel("add", {"B": 128}).spec.params[0].tile_shape == (128,)
    assert bundle.kernel("saxpy").name == "saxpy"


def test_contract_json_is_a_fallback(tmp_path, kit):
    write_bundle(tmp_path, kit, [("add", 256, "sm_90")], json_only=True)
    assert Bundle.open(tmp_path).kernel("add").spec.params[0].tile_shape == (256,)


def test_ambiguity_and_target_selection(tmp_path, kit):
    write_bundle(
        tmp_path, kit, [("add", 128, "sm_90"), ("add", 128, "sm_100"), ("add", 256, "sm_90")]
    )
    bundle = Bundle.open(tmp_path)
    with pytest.raises(AmbiguousKernelError, match="give more generics"):
        bundle.kernel("add", {"B": "128"})
    assert bundle.kernel("add", {"B": "128"}, sm="sm_100").sm == "sm_100"


def test_current_gpu_target_is_preferred(tmp_path, kit, monkeypatch):
    write_bundle(tmp_path, kit, [("add", 128, "sm_90"), ("add", 128, "sm_100")])
    monkeypatch.setattr(driver, "device_count", lambda: 1)
    monkeypatch.setattr(driver, "current_device", lambda: 0)
    monkeypatch.setattr(driver, "device_sm", lambda ordinal: "sm_100")
    assert Bundle.open(tmp_path).kernel("add").sm == "sm_100"


def test_not_found_lists_what_is_there(tmp_path, kit):
    write_bundle(tmp_path, kit, [("add", 128, "sm_90")])
    with pytest.raises(KernelNotFoundError, match=r"kernel::add<B=128> for sm_90"):
        Bundle.open(tmp_path).kernel("add", {"B": "64"})
    with pytest.raises(KernelNotFoundError):
        Bundle.open(tmp_path).kernel("mul")


def test_sha_mismatch_rejected(tmp_path, kit):
    write_bundle(tmp_path, kit, [("add", 128, "sm_90")])
    (tmp_path / "add_B128_sm_90.cubin").write_bytes(b"tampered")
    with pytest.raises(IntegrityError, match="sha256"):
        Bundle.open(tmp_path).kernel("add")


def test_contract_must_agree_with_manifest(tmp_path, kit):
    kernels = write_bundle(tmp_path, kit, [("add", 128, "sm_90")])
    kernels[0]["generics"] = {"B": "256"}
    (tmp_path / "manifest.json").write_text(json.dumps({"schema": 1, "kernels": kernels}))
    with pytest.raises(BundleError, match="disagrees"):
        Bundle.open(tmp_path).kernel("add")


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"schema": 2, "kernels": []}, "schema"),
        ({"schema": 1, "kernels": {}}, "list"),
        ({"schema": 1, "kernels": [{"function": "add"}]}, "missing string field"),
        (
            {
                "schema": 1,
                "kernels": [
                    {
                        "function": "add",
                        "sm": "sm_90",
                        "cubin": "../x.cubin",
                        "cubin_sha256": "00",
                        "contract": "c.pb",
                    }
                ],
            },
            "outside",
        ),
        (
            {
                "schema": 1,
                "kernels": [
                    {"function": "add", "sm": "sm_90", "cubin": "a.cubin", "cubin_sha256": "00"}
                ],
            },
            "contract",
        ),
        *(
            (
                {
                    "schema": 1,
                    "kernels": [
                        {
                            "function": "add",
                            "sm": "sm_90",
                            "cubin": "a.cubin",
                            "cubin_sha256": "00",
                            "contract": "c.pb",
                            "facts": facts,
                        }
                    ],
                },
                message,
            )
            for facts, message in (
                ({"param": "x"}, "`facts` must be a list"),
                (["x"], "must be an object"),
                ([{"param": "x", "dim_divisors": [0]}], "positive integers"),
            )
        ),
    ],
)
def test_malformed_manifests(tmp_path, manifest, message):
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match=message):
        Bundle.open(tmp_path)


def test_missing_manifest(tmp_path):
    with pytest.raises(BundleError, match="does not exist"):
        Bundle.open(tmp_path)


def test_corrupt_contract(tmp_path, kit):
    write_bundle(tmp_path, kit, [("add", 128, "sm_90")])
    (tmp_path / "add_B128_sm_90.contract.pb").write_bytes(b"\xff\xff\xff")
    with pytest.raises(BundleError, match="not a LaunchContract"):
        Bundle.open(tmp_path).kernel("add")
