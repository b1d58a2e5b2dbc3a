"""Bundle: loading a cutile-compile output folder (manifest.json + cubins + contracts)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
from pathlib import Path

import pytest
from google.protobuf import json_format

from client_stubs import (
    AmbiguousKernelError,
    Bundle,
    BundleError,
    DeviceTensor,
    IntegrityError,
    Kernel,
    KernelNotFoundError,
    Variants,
    driver,
)
from client_stubs.artifacts import MANIFEST
from protos.generated.cutile.compile.v1 import contract_pb2 as pb


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch):
    """Bundle selection must not depend on the machine the tests run on."""
    monkeypatch.setattr(driver, "device_count", lambda: 0)


def _contract_sha256(contract: pb.LaunchContract) -> str:
    return hashlib.sha256(contract.SerializeToString(deterministic=True)).hexdigest()


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
            "contract_sha256": _contract_sha256(contract),
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


def _one_entry(**fields: object) -> dict:
    """A manifest of one add entry with `fields` over (or beside) the required ones."""
    entry = {"function": "add", "sm": "sm_90", "cubin": "a.cubin", "cubin_sha256": "00"}
    return {"schema": 1, "kernels": [{**entry, **fields}]}


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"schema": 3, "kernels": []}, "schema"),
        ({"schema": 1, "kernels": {}}, "list"),
        ({"schema": 1, "kernels": [{"function": "add"}]}, "missing string field"),
        (_one_entry(cubin="../x.cubin", contract="c.pb"), "outside"),
        (_one_entry(), "contract"),
        (_one_entry(contract="c.pb\x00.txt"), "text without NUL, got 'c.pb\\\\x00.txt'"),
        (_one_entry(contract=5), "text without NUL, got 5"),
        (_one_entry(contract="c.pb", module=None), "`module` must be a string"),
        *(
            (_one_entry(contract="c.pb", facts=facts), message)
            for facts, message in (
                ({"param": "x"}, "`facts` must be a list"),
                (["x"], "must be an object"),
                ([{"param": "x", "dim_divisors": [0]}], "positive integers"),
                ([{"param": "x", "base_align": 3}], "power of two up to 16"),
                ([{"param": "x", "base_align": 32}], "power of two up to 16"),
                ([{"param": "x", "unit_last_stride": 0}], "must be a boolean"),
            )
        ),
    ],
)
def test_malformed_manifests(tmp_path, manifest, message):
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(BundleError, match=message):
        Bundle.open(tmp_path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000, "unreadable: maximum recursion depth"),
        ('{"schema": 1, "kernels": ' + "[" * 100_000 + "}", "unreadable: maximum recursion"),
        ('{"schema": [1], "kernels": []}', r"unsupported manifest schema \[1\]"),
        ('{"schema": true, "kernels": []}', "unsupported manifest schema True"),
    ],
)
def test_a_hostile_manifest_is_a_bundle_error(tmp_path, text, message):
    """Nesting deeper than Python recurses, and an unhashable schema, raised past BundleError."""
    (tmp_path / "manifest.json").write_text(text)
    with pytest.raises(BundleError, match=message):
        Bundle.open(tmp_path)


@pytest.fixture
def deadline():
    """A test that blocks (reading a FIFO) fails after 10 s instead of hanging the run."""

    def expire(*_: object) -> None:
        raise TimeoutError("blocked for 10 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("which", ["cubin", "contract", "manifest"])
def test_a_fifo_in_a_bundle_is_a_bundle_error_not_a_hang(tmp_path, kit, deadline, which):
    """An unpacked archive may hold a FIFO where a file should be: reading it blocked."""
    (entry,) = write_bundle(tmp_path, kit, [("add", 128, "sm_90")])
    fifo = tmp_path / (MANIFEST if which == "manifest" else entry[which])
    fifo.unlink()
    os.mkfifo(fifo)
    with pytest.raises(BundleError, match=f"{fifo.name}.*not a regular file"):
        Bundle.open(tmp_path).kernel("add", allow_unchecked=True)


def test_missing_manifest(tmp_path):
    with pytest.raises(BundleError, match="does not exist"):
        Bundle.open(tmp_path)


def test_corrupt_contract(tmp_path, kit):
    write_bundle(tmp_path, kit, [("add", 128, "sm_90")])
    (tmp_path / "add_B128_sm_90.contract.pb").write_bytes(b"\xff\xff\xff")
    with pytest.raises(BundleError, match="not a LaunchContract"):
        Bundle.open(tmp_path).kernel("add")


def _point_contract_at(root: Path, *, contract: str, json_only: bool = False) -> None:
    """Rewrite the manifest's one entry to name `contract` (as `contract_json` when
    `json_only`: then the binary contract is dropped)."""
    manifest = json.loads((root / "manifest.json").read_text())
    entry = manifest["kernels"][0]
    entry.pop("contract", None)
    entry["contract_json" if json_only else "contract"] = contract
    (root / "manifest.json").write_text(json.dumps(manifest))


def test_a_symlink_loop_in_a_path_is_a_bundle_error(tmp_path, kit):
    write_bundle(tmp_path, kit, [("add", 128, "sm_90")])
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    _point_contract_at(tmp_path, contract="a/x.pb")
    with pytest.raises(BundleError, match=r"kernels\[0\]: 'a/x.pb' cannot be resolved"):
        Bundle.open(tmp_path)


@pytest.mark.parametrize(
    ("name", "message"),
    [("folder", r"cannot read .*folder: not a regular file"), ("x" * 300, "name too long")],
)
def test_an_unreadable_contract_path_is_a_bundle_error(tmp_path, kit, name, message):
    write_bundle(tmp_path, kit, [("add", 128, "sm_90")])
    (tmp_path / "folder").mkdir()
    _point_contract_at(tmp_path, contract=name)
    with pytest.raises(BundleError, match=message) as info:
        Bundle.open(tmp_path).kernel("add")
    assert str(tmp_path / name) in str(info.value)


def test_a_contract_json_of_invalid_utf8_is_a_bundle_error(tmp_path, kit):
    write_bundle(tmp_path, kit, [("add", 128, "sm_90")], json_only=True)
    (tmp_path / "add_B128_sm_90.contract.json").write_bytes(b'{"kernel": {"function": "\xff"}}')
    with pytest.raises(BundleError, match=r"add_B128_sm_90\.contract\.json: not a LaunchContract"):
        Bundle.open(tmp_path).kernel("add")


def _add_variant(root: Path, kit, stem: str, facts: list[dict], min_tile_blocks: int = 0) -> dict:
    """An add<B=128> whose contract assumes what `facts` say of x (param 1): BASE_ALIGN 16 and
    STRIDE_ONE unless relaxed, DIM_DIV for `dim_divisors`; z and y keep the defaults. An
    occupancy variant with `min_tile_blocks`."""
    contract = kit.add(block=128)
    contract.launch.min_tile_blocks = min_tile_blocks
    x = next((f for f in facts if f["param"] == "x"), {})
    for param in (0, 1, 2):
        align = x.get("base_align", 16) if param == 1 else 16
        contract.assumptions.add(param=param, kind=pb.ASSUMPTION_KIND_BASE_ALIGN, value=align)
        if param != 1 or x.get("unit_last_stride", True):
            contract.assumptions.add(param=param, kind=pb.ASSUMPTION_KIND_STRIDE_ONE, value=1)
    for axis, divisor in enumerate(x.get("dim_divisors", [])):
        contract.assumptions.add(param=1, kind=pb.ASSUMPTION_KIND_DIM_DIV, axis=axis, value=divisor)
    cubin = f"{stem} cubin bytes".encode()
    (root / f"{stem}.cubin").write_bytes(cubin)
    (root / f"{stem}.contract.pb").write_bytes(contract.SerializeToString())
    return {
        "module": "kernel",
        "function": "add",
        "generics": {"B": "128"},
        "sm": "sm_90",
        "cubin": f"{stem}.cubin",
        "contract": f"{stem}.contract.pb",
        "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
        "contract_sha256": _contract_sha256(contract),
        "facts": facts,
        **({"min_tile_blocks": min_tile_blocks} if min_tile_blocks else {}),
    }


def test_relaxed_variants_rank_below_every_default_view_variant(tmp_path, kit):
    variants = {
        "general": [],
        "dims16": [{"param": "x", "dim_divisors": [16], "stride_divisors": []}],
        "relaxed": [{"param": "x", "base_align": 4, "unit_last_stride": False}],
        "relaxed_dims16": [{"param": "x", "dim_divisors": [16], "base_align": 4}],
    }
    kernels = [_add_variant(tmp_path, kit, stem, facts) for stem, facts in variants.items()]
    (tmp_path / "manifest.json").write_text(json.dumps({"schema": 1, "kernels": kernels}))
    bundle = Bundle.open(tmp_path)
    base = 0x7F10_0000_0000

    def chosen(n: int, offset: int = 0, stride: int = 1) -> str:
        z = DeviceTensor(0x7F00_0000_0000, (n,)).partition((128,))
        x = DeviceTensor(base + offset, (n,), strides=(stride,))
        y = DeviceTensor(0x7F20_0000_0000, (n,))
        return bundle.find("add", for_args=(z, x, y)).cubin.stem

    assert chosen(4097) == "general"
    assert chosen(4096) == "dims16"  # not relaxed_dims16, though as specialized
    assert chosen(4096, offset=4) == "relaxed_dims16"  # x[1:]: only relaxed variants fit
    assert chosen(4097, offset=4) == "relaxed"
    assert chosen(4096, stride=2) == "relaxed"  # x[::2]
    labels = {e.cubin.stem: e.label() for e in bundle}
    assert labels["relaxed"].endswith("relaxed (3)")  # log2(16 / 4) + a strided last axis
    assert labels["relaxed_dims16"].endswith("specialized (4) relaxed (2)")
    with pytest.raises(AmbiguousKernelError, match="for_args="):
        bundle.find("add")


def test_a_contract_that_is_not_the_manifests_is_refused(tmp_path, kit):
    (entry,) = write_bundle(tmp_path, kit, [("add", 128, "sm_90")])
    contract = kit.add(block=128)
    contract.launch_checks.clear()
    del contract.assumptions[:]
    contract.params[0].tile_shape[:] = [64]  # what a tampered contract file could say
    (tmp_path / entry["contract"]).write_bytes(contract.SerializeToString())
    with pytest.raises(IntegrityError, match="contract sha256"):
        Bundle.open(tmp_path).kernel("add", {"B": "128"}, sm="sm_90")
    entry.pop("contract_sha256")
    (tmp_path / "manifest.json").write_text(json.dumps({"schema": 1, "kernels": [entry]}))
    with pytest.raises(IntegrityError, match="no contract_sha256"):
        Bundle.open(tmp_path).kernel("add", {"B": "128"}, sm="sm_90")


def test_kernel_of_an_entry_in_variants_chooses_per_launch(tmp_path, kit):
    variants = {
        "general": [],
        "dims16": [{"param": "x", "dim_divisors": [16], "stride_divisors": [1]}],
        "relaxed": [{"param": "x", "base_align": 4, "unit_last_stride": False}],
    }
    kernels = [_add_variant(tmp_path, kit, stem, facts) for stem, facts in variants.items()]
    (tmp_path / "manifest.json").write_text(json.dumps({"schema": 1, "kernels": kernels}))
    bundle = Bundle.open(tmp_path)
    assert [e.cubin.stem for e in bundle.variants("add")] == ["dims16", "general", "relaxed"]
    kernel = bundle.kernel("add", {"B": "128"})  # no for_args
    assert isinstance(kernel, Variants) and kernel.general.cubin == b"general cubin bytes"

    def chosen(n: int, offset: int = 0) -> bytes:
        z = DeviceTensor(0x7F00_0000_0000, (n,)).partition((128,))
        x = DeviceTensor(0x7F10_0000_0000 + offset, (n,))
        return kernel.choose(z, x, DeviceTensor(0x7F20_0000_0000, (n,))).cubin

    assert chosen(4096) == b"dims16 cubin bytes"
    assert chosen(4097) == b"general cubin bytes"
    assert chosen(4096, offset=4) == b"relaxed cubin bytes"
    z = DeviceTensor(0x7F00_0000_0000, (4097,)).partition((128,))
    x, y = DeviceTensor(0x7F10_0000_0000, (4097,)), DeviceTensor(0x7F20_0000_0000, (4097,))
    only = bundle.kernel("add", {"B": "128"}, for_args=(z, x, y))  # still one variant
    assert not isinstance(only, Variants) and only.cubin == b"general cubin bytes"


def test_variants_of_several_kernels_stay_ambiguous(tmp_path, kit):
    write_bundle(tmp_path, kit, [("add", 128, "sm_90"), ("add", 256, "sm_90")])
    with pytest.raises(AmbiguousKernelError, match=r"give more generics or sm$"):
        Bundle.open(tmp_path).kernel("add")
    assert isinstance(Bundle.open(tmp_path).kernel("add", {"B": 256}), Kernel)


def test_an_occupancy_variant_ranks_first_and_serves_launches_of_its_many_tile_blocks(
    tmp_path, kit
):
    kernels = [
        _add_variant(tmp_path, kit, "general", []),
        _add_variant(tmp_path, kit, "dims16", [{"param": "x", "dim_divisors": [16]}]),
        _add_variant(tmp_path, kit, "occupancy", [], min_tile_blocks=64),
    ]
    (tmp_path / "manifest.json").write_text(json.dumps({"schema": 1, "kernels": kernels}))
    bundle = Bundle.open(tmp_path)
    assert [e.cubin.stem for e in bundle.variants("add")] == ["occupancy", "dims16", "general"]
    assert bundle.variants("add")[0].label().endswith("for 64+ tile blocks")
    kernel = bundle.kernel("add", {"B": "128"})
    assert isinstance(kernel, Variants) and kernel.general.cubin == b"general cubin bytes"

    def launch(n: int) -> tuple[object, ...]:
        z = DeviceTensor(0x7F00_0000_0000, (n,)).partition((128,))
        return z, DeviceTensor(0x7F10_0000_0000, (n,)), DeviceTensor(0x7F20_0000_0000, (n,))

    assert kernel.choose(*launch(64 * 128)).cubin == b"occupancy cubin bytes"
    assert kernel.choose(*launch(63 * 128 - 1)).cubin == b"general cubin bytes"  # odd length
    assert kernel.choose(*launch(62 * 128)).cubin == b"dims16 cubin bytes"
    assert bundle.find("add", for_args=launch(64 * 128)).cubin.stem == "occupancy"
    assert bundle.find("add", for_args=launch(62 * 128)).cubin.stem == "dims16"


@pytest.mark.parametrize(
    ("value", "error"),
    [(32, "min_tile_blocks 64 != 32"), (-1, "must be an integer"), ("64", "must be an integer")],
)
def test_a_manifest_min_tile_blocks_must_be_the_contracts_count(tmp_path, kit, value, error):
    entry = _add_variant(tmp_path, kit, "occupancy", [], min_tile_blocks=64)
    entry["min_tile_blocks"] = value
    (tmp_path / "manifest.json").write_text(json.dumps({"schema": 1, "kernels": [entry]}))
    with pytest.raises((BundleError, IntegrityError), match=error):
        Bundle.open(tmp_path).kernel("add", {"B": "128"})


def test_a_null_min_tile_blocks_is_absent_as_in_the_rust_host(tmp_path, kit):
    entry = _add_variant(tmp_path, kit, "general", [])
    entry["min_tile_blocks"] = None
    (tmp_path / "manifest.json").write_text(json.dumps({"schema": 2, "kernels": [entry]}))
    bundle = Bundle.open(tmp_path)
    assert bundle.find("add").min_tile_blocks == 0
    assert bundle.kernel("add", {"B": "128"}).cubin == b"general cubin bytes"
