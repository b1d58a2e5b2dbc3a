"""service.cli.batch (`cutile-compile`): in-process through `main(argv)` and as a process."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import json_format

from lowering.cubin_info import ELF_MAGIC, function_symbols
from protos.generated.cutile.compile.v1 import contract_pb2
from service.cache.disk import DiskCache
from service.cli.batch import MAX_SOURCE_BYTES, main
from service.cli.generics_arg import GenericsSet, UsageError, parse_generics
from service.cli.manifest import MANIFEST_NAME
from service.compile.engine import CompileEngine
from tests.service.conftest import ADD_RS

REPO_ROOT = Path(__file__).resolve().parents[2]

SUB_RS = """\
#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn sub<const B: i32>(z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1] }>) {
        z.store(z.load() - x.load_like(z));
    }
}
"""

MALFORMED_RS = """\
#[cutile::module]
mod kernel {
    fn add( {
}
"""


# --------------------------------------------------------------------------- --generics


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("B=128", GenericsSet(named=(("B", "128"),))),
        ("E=f16,B=1024", GenericsSet(named=(("E", "f16"), ("B", "1024")))),
        (" E = f16 , B = 1024 ", GenericsSet(named=(("E", "f16"), ("B", "1024")))),
        ("128", GenericsSet(positional=("128",))),
        ("f16,1024", GenericsSet(positional=("f16", "1024"))),
        ("S=[64, 32],B=8", GenericsSet(named=(("S", "[64, 32]"), ("B", "8")))),
        ("{[64, 32]}", GenericsSet(positional=("{[64, 32]}",))),
        ("", GenericsSet()),
        ("saxpy:E=f16,B=8", GenericsSet(named=(("E", "f16"), ("B", "8")), entry="saxpy")),
        ("kernel::add:64", GenericsSet(positional=("64",), entry="kernel::add")),
    ],
)
def test_parse_generics(text: str, expected: GenericsSet) -> None:
    assert parse_generics(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "B=128,256",
        "B=",
        "B=1,B=2",
        "128,,256",
        "S=[64",
        "S=64]",
        "saxpy:add:B=1",  # the inner scope was dropped
        "a:" * 1000 + "B=1",  # RecursionError, one level per scope
    ],
)
def test_parse_generics_rejects(text: str) -> None:
    with pytest.raises(UsageError):
        parse_generics(text)


# --------------------------------------------------------------------------- usage errors


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["add.rs", "-o", "out"],  # no --entry
        ["add.rs", "--entry", "add"],  # no -o
        ["add.rs", "--entry", "add", "--arch", "sm_91", "-o", "out"],
        ["add.rs", "--entry", "add", "--generics", "B=1,2", "-o", "out"],
        ["add.rs", "--entry", "", "-o", "out"],
        ["add.rs", "--entry", "add", "--opt-level", "4", "-o", "out"],
        ["add.rs", "--entry", "add", "--facts", "add:x:dims=3", "-o", "out"],
        ["add.rs", "--entry", "add", "--facts", "sub:x:dims=16", "-o", "out"],
        ["add.rs", "--entry", "add", "--specialize", "fast", "-o", "out"],
        ["add.rs", "--entry", "add", "--specialize", "16,3", "-o", "out"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys) -> None:
    assert main(argv) == 2
    assert "usage:" in capsys.readouterr().err


def test_missing_file_exits_2(tmp_path: Path, capsys) -> None:
    assert main([str(tmp_path / "nope.rs"), "--entry", "add", "-o", str(tmp_path / "o")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_an_input_that_is_not_a_regular_file_exits_2(tmp_path: Path) -> None:
    """Reading a FIFO blocked forever (and /dev/zero until memory ran out)."""
    fifo = tmp_path / "k.rs"
    os.mkfifo(fifo)
    done = _run_cli(str(fifo), "--entry", "add", "--emit", "ast")
    assert done.returncode == 2
    assert done.stderr == f"error: cannot read {fifo}: not a regular file\n"


def test_an_input_larger_than_the_server_takes_exits_2(tmp_path: Path, capsys) -> None:
    big = tmp_path / "big.rs"
    big.write_text(" " * (MAX_SOURCE_BYTES + 1))
    assert main([str(big), "--entry", "add", "--emit", "ast"]) == 2
    assert f"error: cannot read {big}: larger than {MAX_SOURCE_BYTES} bytes" in (
        capsys.readouterr().err
    )


# --------------------------------------------------------------------------- compiling


def _compile(tmp_path: Path, *args: str) -> int:
    return main([*args, "-o", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")])


def _manifest(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "out" / MANIFEST_NAME).read_text())


def test_success_writes_cubin_contracts_and_manifest(tileiras, add_rs, tmp_path, capsys) -> None:
    assert _compile(tmp_path, str(add_rs), "--entry", "add", "--generics", "B=128") == 0
    manifest = _manifest(tmp_path)
    assert manifest["schema"] == 2
    (kernel,) = manifest["kernels"]
    out = tmp_path / "out"
    assert (kernel["module"], kernel["function"], kernel["sm"]) == ("kernel", "add", "sm_90")
    assert kernel["generics"] == {"B": "128"}
    assert kernel["cubin"] == f"add-{kernel['request_key'][:8]}-sm_90.cubin"
    assert kernel["contract"] == kernel["cubin"].replace(".cubin", ".contract.pb")
    assert kernel["contract_json"] == kernel["cubin"].replace(".cubin", ".contract.json")
    cubin = (out / kernel["cubin"]).read_bytes()
    assert cubin.startswith(ELF_MAGIC)
    assert kernel["cubin_sha256"] == hashlib.sha256(cubin).hexdigest()
    contract = contract_pb2.LaunchContract.FromString((out / kernel["contract"]).read_bytes())
    assert contract.kernel.entry_symbol in function_symbols(cubin)
    from_json = json_format.Parse(
        (out / kernel["contract_json"]).read_text(), contract_pb2.LaunchContract()
    )
    assert from_json == contract
    assert "wrote 1 kernel(s)" in capsys.readouterr().err


def test_every_generics_set_and_arch(tileiras, add_rs, tmp_path) -> None:
    argv = [str(add_rs), "--entry", "add", "--generics", "B=128", "--generics", "256"]
    assert _compile(tmp_path, *argv, "--arch", "sm_90", "--arch", "sm_100") == 0
    kernels = [k for k in _manifest(tmp_path)["kernels"] if not k["facts"]]  # the general ones
    assert sorted((k["generics"]["B"], k["sm"]) for k in kernels) == [
        ("128", "sm_100"),
        ("128", "sm_90"),
        ("256", "sm_100"),
        ("256", "sm_90"),
    ]
    assert len({k["cubin"] for k in kernels}) == 4
    for kernel in kernels:
        assert (tmp_path / "out" / kernel["cubin"]).is_file()


def test_entries_are_matched_to_the_files_that_define_them(tileiras, add_rs, tmp_path) -> None:
    sub = tmp_path / "sub.rs"
    sub.write_text(SUB_RS)
    argv = [str(add_rs), str(sub), "--entry", "add", "--entry", "sub", "--generics", "B=64"]
    assert _compile(tmp_path, *argv) == 0
    kernels = _manifest(tmp_path)["kernels"]
    assert [(k["function"], Path(k["source"]).name) for k in kernels] == [
        ("add", "add.rs"),
        ("sub", "sub.rs"),
    ]


def test_scoped_generics_build_several_entries_in_one_run(tileiras, tmp_path) -> None:
    examples = REPO_ROOT / "rust_examples"
    argv = [
        str(examples / "add.rs"),
        str(examples / "saxpy.rs"),
        "--entry",
        "add",
        "--entry",
        "saxpy",
        "--generics",
        "add:B=64",
        "--generics",
        "saxpy:E=f16,B=64",
        "--generics",
        "saxpy:f32,64",
    ]
    assert _compile(tmp_path, *argv) == 0
    built = sorted(
        (k["function"], k["generics"].get("E", "-")) for k in _manifest(tmp_path)["kernels"]
    )
    assert built == [("add", "-"), ("saxpy", "f16"), ("saxpy", "f32")]


def test_later_runs_add_to_the_bundle_and_replace_rebuilt_kernels(tileiras, add_rs, tmp_path):
    assert _compile(tmp_path, str(add_rs), "--entry", "add", "--generics", "B=64") == 0
    sub = tmp_path / "sub.rs"
    sub.write_text(SUB_RS)
    assert _compile(tmp_path, str(sub), "--entry", "sub", "--generics", "B=64") == 0
    assert _compile(tmp_path, str(add_rs), "--entry", "add", "--generics", "B=64") == 0
    kernels = _manifest(tmp_path)["kernels"]
    assert sorted(k["function"] for k in kernels) == ["add", "sub"]


SQUARES_RS = """\
#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry(HINTS)]
    fn scale_rows<const D: i32, const B: i32>(
        out: &mut Tensor<f32, { [1, D] }>,
        x: &Tensor<f32, { [-1, D] }>,
    ) {
        let row = get_tile_block_id().0;
        let parts = x.partition(const_shape![1, B]);
        let mut sum: Tile<f32, { [1, B] }> = constant(0.0f32, const_shape![1, B]);
        for j in 0i32..(D / B) {
            let t: Tile<f32, { [1, B] }> = parts.load([row, j]);
            sum = sum + t * t;
        }
        let total: Tile<f32, { [1] }> = reduce_sum(sum, 1i32);
        let scale = total.reshape(const_shape![1, 1]).broadcast(const_shape![1, B]);
        let mut dst = out.partition_mut(const_shape![1, B]);
        for j in 0i32..(D / B) {
            let t: Tile<f32, { [1, B] }> = parts.load([row, j]);
            dst.store(t * scale, [0i32, j]);
        }
    }
}
"""


def test_an_occupancy_variant_is_built_and_a_rebuild_that_names_one_drops_it(
    tileiras, tmp_path
) -> None:
    source = tmp_path / "squares.rs"
    source.write_text(SQUARES_RS.replace("HINTS", ""))
    argv = [str(source), "--entry", "scale_rows", "--generics", "D=2048,B=128"]
    assert _compile(tmp_path, *argv) == 0
    (variant,) = [k for k in _manifest(tmp_path)["kernels"] if k.get("min_tile_blocks")]
    assert variant["min_tile_blocks"] == 1024
    contract = _contract(tmp_path / "out", variant)
    assert (contract.launch.min_tile_blocks, contract.launch.takes_occupancy_variant) == (
        1024,
        True,
    )
    # the entry now names its occupancy: no occupancy variant is built, and the earlier one,
    # compiled from the source as it was, is not left for hosts to take first
    source.write_text(SQUARES_RS.replace("HINTS", "optimization_hints = (sm_90 = (occupancy = 2))"))
    assert _compile(tmp_path, *argv) == 0
    kernels = _manifest(tmp_path)["kernels"]
    assert kernels and not [k for k in kernels if k.get("min_tile_blocks")]
    general = next(k for k in kernels if not k["facts"])
    assert not _contract(tmp_path / "out", general).launch.takes_occupancy_variant


def test_a_rebuild_from_the_same_sources_keeps_earlier_variants_it_can_read(
    tileiras, add_rs, tmp_path
) -> None:
    general = (str(add_rs), "--entry", "add", "--generics", "B=128")
    facts = ("--facts", "add:x:dims=16", "--facts", "add:y:dims=16")
    assert _compile(tmp_path, *general, *facts) == 0
    assert _compile(tmp_path, *general) == 0  # the same sources: the --facts variant stays
    special = next(k for k in _manifest(tmp_path)["kernels"] if k["facts"])
    (tmp_path / "out" / special["contract"]).write_bytes(b"\xff" * 64)  # not a contract
    assert _compile(tmp_path, *general) == 0  # one it cannot read is not kept
    assert [k["facts"] for k in _manifest(tmp_path)["kernels"]] == [[]]


def test_unknown_entry_fails(tileiras, add_rs, tmp_path, capsys) -> None:
    assert _compile(tmp_path, str(add_rs), "--entry", "add", "--entry", "nope") == 1
    err = capsys.readouterr().err
    assert "error[CT0101]: no entry function named `nope`" in err
    assert "Traceback" not in err
    assert [k["function"] for k in _manifest(tmp_path)["kernels"]] == []  # add needs B


def test_malformed_rust_fails_with_a_location(tileiras, tmp_path, capsys) -> None:
    source = tmp_path / "broken.rs"
    source.write_text(MALFORMED_RS)
    assert _compile(tmp_path, str(source), "--entry", "add") == 1
    err = capsys.readouterr().err
    assert "error[CT0001]" in err
    assert f"--> {source}:3:" in err
    assert "Traceback" not in err


def test_bad_generics_fail_and_other_kernels_still_build(tileiras, add_rs, tmp_path, capsys):
    argv = [str(add_rs), "--entry", "add", "--generics", "B=128", "--generics", "B=abc"]
    assert _compile(tmp_path, *argv, "--generics", "C=1") == 1
    err = capsys.readouterr().err
    assert "invalid value `abc` for generic parameter `B`" in err
    assert "no generic parameter `C`" in err
    assert f"--> {add_rs}:10:" in err
    assert "error: 2 compile(s) failed" in err
    assert [k["generics"] for k in _manifest(tmp_path)["kernels"]] == [{"B": "128"}]


def test_same_diagnostic_is_printed_once(tileiras, tmp_path, capsys) -> None:
    source = tmp_path / "broken.rs"
    source.write_text(MALFORMED_RS)
    assert (
        _compile(tmp_path, str(source), "--entry", "add", "--arch", "sm_90", "--arch", "sm_100")
        == 1
    )
    assert capsys.readouterr().err.count("error[CT0001]") == 1


def test_json_diagnostics(tileiras, tmp_path, capsys) -> None:
    source = tmp_path / "broken.rs"
    source.write_text(MALFORMED_RS)
    assert _compile(tmp_path, str(source), "--entry", "add", "--message-format", "json") == 1
    lines = capsys.readouterr().err.strip().splitlines()
    diagnostics = [json.loads(line) for line in lines]  # nothing but JSON on stderr
    assert diagnostics[0]["code"] == "CT0001"
    assert diagnostics[0]["spans"][0]["line_start"] == 3
    assert diagnostics[0]["rendered"].startswith("error[CT0001]")


def test_cache_is_used_and_can_be_turned_off(tileiras, add_rs, tmp_path) -> None:
    argv = [str(add_rs), "--entry", "add", "--generics", "B=128", "--specialize", "none"]
    assert _compile(tmp_path, *argv) == 0
    # the result under its request key, the cubin under its content key
    assert len(list((tmp_path / "cache").rglob("*.artifact"))) == 2
    out = tmp_path / "uncached"
    assert main([*argv, "-o", str(out), "--no-cache"]) == 0
    assert json.loads((out / MANIFEST_NAME).read_text())["kernels"]


# --------------------------------------------------------------------------- as a process


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "service.cli.batch", *args],
        cwd=REPO_ROOT,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_process_success_and_failure(tileiras, add_rs, tmp_path) -> None:
    ok = _run_cli(
        str(add_rs), "--entry", "add", "--generics", "128", "-o", str(tmp_path / "a"), "--no-cache"
    )
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "a" / MANIFEST_NAME).is_file()

    source = tmp_path / "broken.rs"
    source.write_text(MALFORMED_RS)
    bad = _run_cli(str(source), "--entry", "add", "-o", str(tmp_path / "b"), "--no-cache")
    assert bad.returncode == 1
    assert f"--> {source}:3:" in bad.stderr
    assert "Traceback" not in bad.stderr

    usage = _run_cli(str(add_rs), "-o", str(tmp_path / "c"))
    assert usage.returncode == 2


def test_early_launch_kernels_say_so_in_their_contracts(tileiras, add_rs, tmp_path) -> None:
    """By default (`--early-launch`) every kernel waits for prior grids, says so in its
    contract, is bytecode 13.4, and is filed under another key than the `--no-early-launch`
    build's."""
    if (13, 4) not in tileiras.bytecode_versions:
        pytest.skip("this tileiras does not read bytecode 13.4")
    argv = [str(add_rs), "--entry", "add", "--generics", "B=128", "--specialize", "none"]
    keys = {}
    for flags in (("--no-early-launch",), ()):
        out = tmp_path / ("plain" if flags else "early")
        assert main([*argv, *flags, "-o", str(out), "--cache-dir", str(tmp_path / "cache")]) == 0
        (kernel,) = json.loads((out / MANIFEST_NAME).read_text())["kernels"]
        contract = contract_pb2.LaunchContract.FromString((out / kernel["contract"]).read_bytes())
        assert contract.launch.waits_for_prior_grids == (not flags)
        assert contract.target.bytecode_version == ("13.3" if flags else "13.4")
        keys[flags] = kernel["request_key"]
    assert len(set(keys.values())) == 2


def test_the_python_client_opens_the_output(tileiras, add_rs, tmp_path) -> None:
    from client_stubs.artifacts import Bundle

    assert _compile(tmp_path, str(add_rs), "--entry", "add", "--generics", "B=128") == 0
    entry = Bundle.open(tmp_path / "out").find("add", {"B": "128"}, sm="sm_90")
    assert entry.cubin.read_bytes().startswith(ELF_MAGIC)


def test_fact_variants_sit_next_to_the_general_kernel_and_the_client_picks(
    tileiras, add_rs, tmp_path
) -> None:
    from client_stubs import DeviceTensor
    from client_stubs.artifacts import Bundle

    general = (str(add_rs), "--entry", "add", "--generics", "B=128")
    facts = ("--facts", "add:x:dims=16", "--facts", "add:y:dims=16")
    assert _compile(tmp_path, *general, *facts) == 0
    assert _compile(tmp_path, *general) == 0
    kernels = _manifest(tmp_path)["kernels"]
    assert sorted(len(k["facts"]) for k in kernels) == [0, 2]
    special = next(k for k in kernels if k["facts"])
    assert special["facts"][0] == {"param": "x", "dim_divisors": [16], "stride_divisors": []}

    bundle = Bundle.open(tmp_path / "out")

    def chosen(n: int) -> str:
        z = DeviceTensor(0x7F00_0000_0000, (n,)).partition((128,))
        x, y = DeviceTensor(0x7F10_0000_0000, (n,)), DeviceTensor(0x7F20_0000_0000, (n,))
        entry = bundle.find("add", {"B": "128"}, sm="sm_90", for_args=(z, x, y))
        return entry.cubin.name

    assert chosen(4096) == special["cubin"]  # 4096 % 16 == 0: the specialized variant
    assert chosen(4097) != special["cubin"]  # the general one


def test_by_default_a_one_token_launch_gets_the_16_byte_rows_variant(tileiras, tmp_path) -> None:
    """A decoder's one-token activations `[1, K]` meet no divisible-by-16 variant, but their
    16-byte rows give the GEMV TMA loads: `--specialize auto` builds both kinds of variant."""
    from client_stubs import DeviceTensor
    from client_stubs.artifacts import Bundle

    summary = tmp_path / "summary.json"
    generics = "E=bf16,O=f32,BN=8,BK=512,LAT=3,OCC=4"
    argv = [str(ADD_RS.parent / "decoder.rs"), "--entry", "gemv", "--generics", generics]
    assert _compile(tmp_path, *argv, "--summary-json", str(summary)) == 0
    built = json.loads(summary.read_text())["kernels"]
    assert [(k["variant"], k["divisor"], k["kept"]) for k in built] == [
        (None, None, True),
        ("divisible by 16", 16, False),  # the same cubin as the next, which serves more
        ("divisible by 16 past the leading extent", 16, True),
        ("16-byte rows", None, True),
    ]
    kernels = {k["cubin"]: k for k in _manifest(tmp_path)["kernels"]}
    rows = next(k for k in kernels.values() if k["facts"] and not k["facts"][0]["dim_divisors"])
    assert rows["facts"] == [
        {"param": "part", "dim_divisors": [], "stride_divisors": [4, 4, 1]},
        {"param": "w", "dim_divisors": [], "stride_divisors": [8, 1]},
        {"param": "x", "dim_divisors": [], "stride_divisors": [8, 1]},
    ]
    bundle = Bundle.open(tmp_path / "out")

    def chosen(tokens: int, k: int, splits: int = 2) -> dict:
        part = DeviceTensor(0x7F00_0000_0000, (splits, tokens, 64)).partition((1, 1, 8))
        x = DeviceTensor(0x7F10_0000_0000, (tokens, k), dtype="bf16")
        w = DeviceTensor(0x7F20_0000_0000, (64, k), dtype="bf16")
        entry = bundle.find(
            "gemv",
            dict(p.split("=") for p in generics.split(",")),
            sm="sm_90",
            for_args=(part, x, w),
        )
        return kernels[entry.cubin.name]

    assert chosen(16, 4096, 16)["facts"][0]["dim_divisors"] == [1, 16, 16]  # past the first
    assert chosen(1, 4096) is rows  # one token: the rows variant
    assert chosen(1, 4100)["facts"] == []  # 4100 bf16 a row is not 16-byte rows: general


# --------------------------------------------------------------------------- --server


def _bundle(out: Path) -> list[tuple]:
    """Each kernel of a bundle: what identifies it, its source and its cubin's bytes."""
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    return [
        (k["function"], k["sm"], k["generics"], k["source"], (out / k["cubin"]).read_bytes())
        for k in manifest["kernels"]
    ]


def test_server_builds_the_same_bundle(
    tileiras, start_server, add_rs, tmp_path: Path, capsys
) -> None:
    sub_rs = tmp_path / "sub.rs"
    sub_rs.write_text(SUB_RS)
    kernels = [str(add_rs), str(sub_rs), "--entry", "add", "--entry", "sub"]
    kernels += ["--generics", "B=128", "--generics", "B=256", "--arch", "sm_90", "--arch", "sm_80"]
    kernels += ["--specialize", "none"]
    local_out, remote_out = tmp_path / "local", tmp_path / "remote"
    assert main([*kernels, "-o", str(local_out), "--no-cache"]) == 0
    server = start_server(CompileEngine(tileiras, cache=DiskCache(tmp_path / "server-cache")))
    summary = tmp_path / "summary.json"
    argv = [*kernels, "-o", str(remote_out), "--server", server.target]
    assert main([*argv, "--summary-json", str(summary)]) == 0
    assert "wrote 8 kernel(s)" in capsys.readouterr().err
    assert _bundle(remote_out) == _bundle(local_out)
    report = json.loads(summary.read_text())
    assert (report["ok"], report["failed"]) == (8, 0)
    assert [(k["entry"], k["arch"]) for k in report["kernels"]][:2] == [
        ("add", "sm_90"),
        ("add", "sm_80"),
    ]


def test_server_reports_compile_errors_like_local(
    tileiras, start_server, bad_kernel_source: str, tmp_path: Path, capsys
) -> None:
    bad = tmp_path / "bad.rs"
    bad.write_text(bad_kernel_source)
    argv = [str(bad), "--entry", "bad", "--generics", "B=128", "--message-format", "json"]
    assert main([*argv, "-o", str(tmp_path / "local"), "--no-cache"]) == 1
    local = capsys.readouterr().err
    server = start_server(CompileEngine(tileiras))
    assert main([*argv, "-o", str(tmp_path / "remote"), "--server", server.target]) == 1
    remote = capsys.readouterr().err
    local_json = [json.loads(line) for line in local.splitlines() if line.startswith("{")]
    remote_json = [json.loads(line) for line in remote.splitlines() if line.startswith("{")]
    assert remote_json == local_json
    assert local_json[0]["code"] == "E0596"


def test_unreachable_server_fails_every_kernel(add_rs, tmp_path: Path, capsys) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    argv = [str(add_rs), "--entry", "add", "--generics", "B=128", "--arch", "sm_90"]
    argv += ["--arch", "sm_80", "-o", str(tmp_path / "out"), "--server", f"127.0.0.1:{port}"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "CTS-UNAVAILABLE" in err
    assert "2 compile(s) failed" in err


def test_server_flags_that_do_not_mix(add_rs, tmp_path: Path) -> None:
    base = [str(add_rs), "--entry", "add", "-o", str(tmp_path / "o")]
    assert main([*base, "--server", "h:1", "--no-cache"]) == 2
    assert main([*base, "--auth-token-file", str(tmp_path / "t")]) == 2


def test_a_relaxed_variant_serves_misaligned_and_strided_views_only(
    tileiras, add_rs, tmp_path
) -> None:
    from client_stubs import DeviceTensor
    from client_stubs.artifacts import Bundle

    general = (str(add_rs), "--entry", "add", "--generics", "B=128")
    relaxed = ("--facts", "add:x:align=4:last_stride=any")
    assert _compile(tmp_path, *general, *relaxed) == 0
    assert _compile(tmp_path, *general) == 0
    kernels = _manifest(tmp_path)["kernels"]
    special = next(k for k in kernels if k["facts"])
    assert special["facts"] == [
        {
            "param": "x",
            "dim_divisors": [],
            "stride_divisors": [],
            "base_align": 4,
            "unit_last_stride": False,
        }
    ]
    contract = json_format.Parse(
        (tmp_path / "out" / special["contract_json"]).read_text(), contract_pb2.LaunchContract()
    )
    x_assumptions = {
        (contract_pb2.AssumptionKind.Name(a.kind), a.value)
        for a in contract.assumptions
        if a.param == 1
    }
    assert ("ASSUMPTION_KIND_BASE_ALIGN", 4) in x_assumptions
    assert not any(kind == "ASSUMPTION_KIND_STRIDE_ONE" for kind, _ in x_assumptions)

    bundle = Bundle.open(tmp_path / "out")
    n = 4096

    def chosen(x: DeviceTensor) -> str:
        z = DeviceTensor(0x7F00_0000_0000, (n,)).partition((128,))
        y = DeviceTensor(0x7F20_0000_0000, (n,))
        return bundle.find("add", {"B": "128"}, sm="sm_90", for_args=(z, x, y)).cubin.name

    base = 0x7F10_0000_0000
    assert chosen(DeviceTensor(base, (n,))) != special["cubin"]  # the default is preferred
    assert chosen(DeviceTensor(base + 4, (n,))) == special["cubin"]  # x[1:]
    assert chosen(DeviceTensor(base, (n,), strides=(2,))) == special["cubin"]  # x[::2]


# --------------------------------------------------------------------------- --specialize


def _contract(out: Path, kernel: dict) -> contract_pb2.LaunchContract:
    return contract_pb2.LaunchContract.FromString((out / kernel["contract"]).read_bytes())


def test_a_divisible_by_16_variant_is_built_by_default_and_kept_where_it_differs(
    tileiras, add_rs, tmp_path
) -> None:
    from client_stubs import AssumptionError, DeviceTensor, Variants
    from client_stubs.artifacts import Bundle

    summary_path = tmp_path / "summary.json"
    argv = [str(add_rs), "--entry", "add", "--generics", "B=128", "--generics", "B=256"]
    argv += ["--summary-json", str(summary_path)]
    assert _compile(tmp_path, *argv) == 0
    summary = json.loads(summary_path.read_text())
    rows = [(k["generics"]["B"], k["divisor"], k["ok"], k["kept"]) for k in summary["kernels"]]
    # with 128-element tiles the variant assembles to the general cubin: left out; with 256 it
    # differs and sits next to the general kernel. The occupancy variant (rows facts: none
    # for vectors) compiles to the general kernel's machine code at both: left out
    assert rows == [
        ("128", None, True, True),
        ("256", None, True, True),
        ("128", None, True, False),
        ("128", 16, True, False),
        ("256", None, True, False),
        ("256", 16, True, True),
    ]
    assert (summary["ok"], summary["failed"]) == (2, 0)
    kernels = _manifest(tmp_path)["kernels"]
    (variant,) = [k for k in kernels if k["facts"]]
    assert variant["generics"] == {"B": "256"}
    assert variant["facts"] == [
        {"param": name, "dim_divisors": [16], "stride_divisors": [1]} for name in "xyz"
    ]
    general = next(k for k in kernels if k["generics"] == {"B": "256"} and not k["facts"])
    assert variant["cubin_sha256"] != general["cubin_sha256"]
    assumed = {
        (a.param, contract_pb2.AssumptionKind.Name(a.kind), a.value)
        for a in _contract(tmp_path / "out", variant).assumptions
    }
    assert {(p, "ASSUMPTION_KIND_DIM_DIV", 16) for p in (0, 1, 2)} <= assumed

    bundle = Bundle.open(tmp_path / "out")
    assert not isinstance(bundle.kernel("add", {"B": "128"}), Variants)
    kernel = bundle.kernel("add", {"B": "256"})
    assert isinstance(kernel, Variants) and len(kernel.variants) == 2

    def launched(n: int, x_offset: int = 0) -> str:
        z = DeviceTensor(0x7F00_0000_0000, (n,)).partition((256,))
        x = DeviceTensor(0x7F10_0000_0000 + x_offset, (n,))
        y = DeviceTensor(0x7F20_0000_0000, (n,))
        return kernel.choose(z, x, y).sha256

    assert launched(4096) == variant["cubin_sha256"]
    assert launched(4097) == general["cubin_sha256"]
    with pytest.raises(AssumptionError, match="% 16 == 0"):  # the general kernel's alignment
        launched(4096, x_offset=4)


def test_specialize_none_builds_the_general_kernel_only(tileiras, add_rs, tmp_path) -> None:
    argv = [str(add_rs), "--entry", "add", "--generics", "B=256"]
    assert _compile(tmp_path, *argv, "--specialize", "none") == 0
    assert [k["facts"] for k in _manifest(tmp_path)["kernels"]] == [[]]


def test_each_listed_divisor_is_a_variant_and_equal_cubins_are_kept_once(
    tileiras, tmp_path
) -> None:
    summary_path = tmp_path / "summary.json"
    gemm = REPO_ROOT / "rust_examples" / "gemm.rs"
    argv = [str(gemm), "--entry", "gemm", "--generics", "E=f16,BM=64,BN=64,BK=32"]
    argv += ["--specialize", "16,8,2", "--summary-json", str(summary_path)]
    assert _compile(tmp_path, *argv) == 0
    rows = json.loads(summary_path.read_text())["kernels"]
    assert [k["divisor"] for k in rows] == [None, 16, 8, 2]
    assert all(k["ok"] for k in rows)
    kernels = _manifest(tmp_path)["kernels"]
    assert len(kernels) == sum(k["kept"] for k in rows) >= 2  # the 16-variant pays on a GEMM
    assert len({k["cubin_sha256"] for k in kernels}) == len(kernels)
    dims = {k["facts"][0]["dim_divisors"][0] for k in kernels if k["facts"]}
    # of variants with one cubin the weakest is kept (it serves more launches with the same
    # code): the 16-variant's cubin is the 8-variant's, so the 8-variant stays
    assert 8 in dims and 16 not in dims


def test_an_entry_given_facts_gets_its_general_kernel_and_no_automatic_variant(
    tileiras, add_rs, tmp_path
) -> None:
    argv = [str(add_rs), "--entry", "add", "--generics", "B=256", "--summary-json"]
    assert _compile(tmp_path, *argv, str(tmp_path / "s.json"), "--facts", "add:x:dims=8") == 0
    assert [k["facts"] for k in _manifest(tmp_path)["kernels"]] == [
        [],
        [{"param": "x", "dim_divisors": [8], "stride_divisors": []}],
    ]
    summary = json.loads((tmp_path / "s.json").read_text())
    assert (summary["ok"], summary["failed"]) == (2, 0)
    assert [k["divisor"] for k in summary["kernels"]] == [None, None]


def test_server_builds_the_same_variants(tileiras, start_server, add_rs, tmp_path: Path) -> None:
    argv = [str(add_rs), "--entry", "add", "--generics", "B=256"]
    local_out, remote_out = tmp_path / "local", tmp_path / "remote"
    assert main([*argv, "-o", str(local_out), "--no-cache"]) == 0
    server = start_server(CompileEngine(tileiras))
    assert main([*argv, "-o", str(remote_out), "--server", server.target]) == 0
    assert _bundle(remote_out) == _bundle(local_out)
    facts = [k["facts"] for k in json.loads((remote_out / MANIFEST_NAME).read_text())["kernels"]]
    assert len(facts) == 2 and facts[0] == [] and facts[1]


def test_keys_and_file_names_depend_on_content_not_the_path(
    tileiras, start_server, add_rs, tmp_path: Path, monkeypatch
) -> None:
    """The same source compiled by a relative path, an absolute path and through --server
    (which sends base names) gets one key, one set of file names and one contract."""
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "add.rs").write_text(add_rs.read_text())
    monkeypatch.chdir(folder)
    argv = ["--entry", "add", "--generics", "B=128", "--specialize", "none"]
    server = start_server(CompileEngine(tileiras))
    runs = {
        "relative": ["add.rs", *argv, "--no-cache"],
        "absolute": [str(folder / "add.rs"), *argv, "--no-cache"],
        "served": ["add.rs", *argv, "--server", server.target],
    }
    seen = {}
    for name, args in runs.items():
        out = tmp_path / name
        assert main([*args, "-o", str(out)]) == 0
        (kernel,) = json.loads((out / MANIFEST_NAME).read_text())["kernels"]
        contract = (out / kernel["contract"]).read_bytes()
        seen[name] = (kernel["request_key"], kernel["cubin"], kernel["contract"], contract)
        assert kernel["source"] == args[0]  # the manifest keeps the path as given
    assert seen["relative"] == seen["absolute"] == seen["served"]
    assert seen["relative"][1].startswith(f"add-{seen['relative'][0][:8]}-")


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def test_parallel_jobs_write_the_same_bundle_byte_for_byte(tileiras, add_rs, tmp_path) -> None:
    sub_rs = tmp_path / "sub.rs"
    sub_rs.write_text(SUB_RS)
    argv = [str(add_rs), str(sub_rs), "--entry", "add", "--entry", "sub", "--no-cache"]
    argv += ["--generics", "B=128", "--generics", "B=256", "--generics", "B=abc"]
    one, two = tmp_path / "j1", tmp_path / "j3"
    assert main([*argv, "-j", "1", "-o", str(one), "--summary-json", str(tmp_path / "1.json")]) == 1
    assert main([*argv, "-j", "3", "-o", str(two), "--summary-json", str(tmp_path / "3.json")]) == 1
    assert _files(one) == _files(two) and len(_files(one)) > 8

    def summary(path: Path) -> list[tuple]:
        kernels = json.loads(path.read_text())["kernels"]
        return [(k["entry"], k["generics"], k["ok"], k["cubin"], k["kept"]) for k in kernels]

    assert summary(tmp_path / "1.json") == summary(tmp_path / "3.json")


def test_jobs_must_be_positive(add_rs, tmp_path, capsys) -> None:
    assert main([str(add_rs), "--entry", "add", "-j", "0", "-o", str(tmp_path)]) == 2
    assert "-j/--jobs must be at least 1" in capsys.readouterr().err


def test_a_source_that_overflowed_tree_sitter_is_a_diagnostic(tileiras, tmp_path) -> None:
    """350 KB of `{[(<` used to kill the process with SIGSEGV inside tree-sitter."""
    source = tmp_path / "deep.rs"
    source.write_text("{[(<" * 90_000)
    done = _run_cli(str(source), "--entry", "add", "-o", str(tmp_path / "out"), "--no-cache")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "error[CT0005]: this code nests deeper than 512 levels of brackets" in done.stderr
    assert f"--> {source}:1:513" in done.stderr
    assert len(done.stderr) < 2000  # the 360 KB line is shown as a window around column 513


# --------------------------------------------------------------------------- hostile output


def test_an_unreadable_manifest_stops_the_run_and_is_kept(tileiras, add_rs, tmp_path, capsys):
    """A manifest that did not validate was replaced (its kernels lost) or crashed the run."""
    out = tmp_path / "out"
    out.mkdir()
    unreadable = '{"schema": 1, "kernels": [{"function": "add", "cubin": null}]}'
    (out / MANIFEST_NAME).write_text(unreadable)
    assert _compile(tmp_path, str(add_rs), "--entry", "add", "--generics", "B=64") == 2
    err = capsys.readouterr().err
    assert f"error: {out / MANIFEST_NAME} is unreadable: kernels[0] lacks `module`" in err
    assert "compiled" not in err  # stopped before compiling
    assert (out / MANIFEST_NAME).read_text() == unreadable
    assert [p.name for p in out.iterdir()] == [MANIFEST_NAME]


def test_an_output_file_that_cannot_be_written_exits_2(tileiras, add_rs, tmp_path, capsys):
    """A read-only or full OUT, or a folder in the way, ended in a traceback."""
    argv = [str(add_rs), "--entry", "add", "--generics", "B=64", "--specialize", "none"]
    assert _compile(tmp_path, *argv) == 0
    (kernel,) = _manifest(tmp_path)["kernels"]
    cubin = tmp_path / "out" / kernel["cubin"]
    cubin.unlink()
    cubin.mkdir()  # in the way
    capsys.readouterr()
    assert _compile(tmp_path, *argv) == 2
    err = capsys.readouterr().err
    assert f"error: cannot write {cubin}: Is a directory" in err
    assert "Traceback" not in err
    assert _manifest(tmp_path)["kernels"] == [kernel]  # the manifest is left as it was


def test_emit_file_names_of_long_generics_are_cut_and_hashed(tmp_path: Path) -> None:
    """A 300-digit generic made a file name longer than a file system takes."""
    out = tmp_path / "out"
    for value in ("1" * 300, "1" * 299 + "2"):
        argv = ["--entry", "add", "--generics", f"B={value}", "--emit", "ast", "-o", str(out)]
        assert main([str(ADD_RS), *argv]) == 0
    names = [p.name for p in out.iterdir()]
    assert len(names) == 2 and all(len(n) <= 140 and n.endswith(".ast.txt") for n in names)


def test_an_emit_file_that_cannot_be_written_exits_2(tmp_path: Path, capsys) -> None:
    (tmp_path / "add_B=64_sm_90.ast.txt").mkdir()
    argv = ["--entry", "add", "--generics", "B=64", "--emit", "ast", "-o", str(tmp_path)]
    assert main([str(ADD_RS), *argv]) == 2
    assert f"error: cannot write {tmp_path / 'add_B=64_sm_90.ast.txt'}: Is a directory" in (
        capsys.readouterr().err
    )


def test_emit_into_a_closed_pipe_exits_1_quietly() -> None:
    """`cutile-compile --emit ast ... | head -c 100` ended in BrokenPipeError's traceback."""
    generics = [arg for b in range(1, 41) for arg in ("--generics", f"B={b}")]
    argv = [str(ADD_RS), "--entry", "add", "--emit", "ast", *generics]
    process = subprocess.Popen(
        [sys.executable, "-m", "service.cli.batch", *argv],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert len(process.stdout.read(100)) == 100
    process.stdout.close()  # 40 kernels of AST are more than the pipe holds
    err = process.stderr.read().decode()
    assert process.wait(60) == 1
    assert err == ""
