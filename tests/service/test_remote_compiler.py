"""service.cli.remote_compiler against real servers with a fake compile function."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lowering.pipeline import CompileRequest
from parser.spans import SourceFile
from service.cache.artifact import Artifact
from service.cache.disk import DiskCache
from service.cli.remote_compiler import RemoteCompiler, wire_names
from service.compile.engine import CompileEngine
from service.server.servicer import ServiceLimits

SOURCE = SourceFile("/some/dir/add.rs", "mod k {}")


def _requests(count: int) -> list[CompileRequest]:
    return [
        CompileRequest(sources=(SOURCE,), entry="add", generics=(("B", str(128 * (i + 1))),))
        for i in range(count)
    ]


def test_wire_names_are_plain_and_distinct() -> None:
    assert wire_names(["a/k.rs", "b/k.rs", "k.rs", "c/k"]) == ["k.rs", "k-2.rs", "k-3.rs", "k"]


def test_every_request_gets_its_outcome(start_server, fake_compiler, fake_assembler) -> None:
    server = start_server(CompileEngine(fake_assembler, compile_fn=fake_compiler))
    compiler = RemoteCompiler(server.target, chunk=2)  # three batches
    try:
        outcomes = dict(compiler.compile_all(_requests(5)))
    finally:
        compiler.close()
    assert sorted(outcomes) == [0, 1, 2, 3, 4]
    assert all(o.ok for o in outcomes.values())
    assert {g for r in fake_compiler.calls for g in r.generics} == {
        ("B", str(128 * (i + 1))) for i in range(5)
    }
    assert fake_compiler.calls[0].sources[0].name == "add.rs"


def test_large_cubins_are_fetched_by_key(
    start_server, fake_compiler, fake_assembler, tmp_path: Path
) -> None:
    engine = CompileEngine(fake_assembler, cache=DiskCache(tmp_path), compile_fn=fake_compiler)
    server = start_server(engine, service_limits=ServiceLimits(max_inline_cubin_bytes=4))
    compiler = RemoteCompiler(server.target)
    try:
        ((_, outcome),) = compiler.compile_all(_requests(1))
    finally:
        compiler.close()
    assert outcome.ok
    assert outcome.artifact.cubin.startswith(b"\x7fELF") and b"fake cubin" in outcome.artifact.cubin


def test_a_full_server_is_retried(start_server, fake_compiler, fake_assembler, caplog) -> None:
    gate, holding = threading.Event(), threading.Event()

    def compile_fn(request, **kwargs):
        if request.entry == "hold":
            holding.set()
            gate.wait(10)
        return fake_compiler(request, **kwargs)

    server = start_server(
        CompileEngine(fake_assembler, compile_fn=compile_fn),
        workers=1,
        max_queued=0,
        retry_delay_s=0.2,
    )
    holder = RemoteCompiler(server.target)
    compiler = RemoteCompiler(server.target)
    hold = CompileRequest(sources=(SOURCE,), entry="hold")
    try:
        with ThreadPoolExecutor(1) as pool:
            held = pool.submit(lambda: dict(holder.compile_all([hold])))
            assert holding.wait(10)
            threading.Timer(0.3, gate.set).start()  # the only worker frees up after a while
            with caplog.at_level(logging.INFO, logger="service.cli.remote_compiler"):
                outcomes = dict(compiler.compile_all(_requests(1)))
            assert held.result(10)[0].ok
    finally:
        gate.set()
        holder.close()
        compiler.close()
    assert outcomes[0].ok
    assert "server busy: retrying 1 kernel(s)" in caplog.text


def test_an_unreachable_server_fails_each_request() -> None:
    compiler = RemoteCompiler("127.0.0.1:1", timeout_s=5)
    try:
        outcomes = dict(compiler.compile_all(_requests(2)))
    finally:
        compiler.close()
    assert sorted(outcomes) == [0, 1]
    for outcome in outcomes.values():
        assert not outcome.ok
        assert outcome.diagnostics[0].code.id == "CTS-UNAVAILABLE"


def test_an_artifact_that_fails_its_check_goes_into_no_bundle(
    start_server, fake_compiler, fake_assembler, monkeypatch
) -> None:
    from service.server import servicer

    honest = servicer.sealed

    def tampered(*args, **kwargs):  # type: ignore[no-untyped-def]
        artifact = honest(*args, **kwargs)
        artifact.contract.params[0].tile_shape[:] = [1]  # changed after it was sealed
        return artifact

    monkeypatch.setattr(servicer, "sealed", tampered)
    server = start_server(CompileEngine(fake_assembler, compile_fn=fake_compiler))
    diagnostic = _the_one_diagnostic(server.target)
    assert diagnostic.code.id == "CTS-INTEGRITY" and "contract sha256" in diagnostic.message


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("function", "../../escaped", "function '../../escaped' is not a Rust identifier"),
        ("sm", "sm_90/../../x", "target 'sm_90/../../x' is not an sm_NN name"),
        ("key", "../../" + "a" * 58, "request key '../../aaa"),
    ],
)
def test_an_artifact_naming_a_path_goes_into_no_bundle(
    start_server, fake_compiler, fake_assembler, monkeypatch, field, value, problem
) -> None:
    """The bundle's file names are built of these: `../../escaped` wrote outside OUT."""
    from service.server import servicer

    honest = servicer.sealed

    def hostile(artifact, key, *args, **kwargs):  # type: ignore[no-untyped-def]
        contract = type(artifact.contract)()
        contract.CopyFrom(artifact.contract)
        if field == "function":
            contract.kernel.function = value
        elif field == "sm":
            contract.target.sm = value
        else:
            key = value
        return honest(Artifact(artifact.cubin, contract), key, *args, **kwargs)  # sealed anew

    monkeypatch.setattr(servicer, "sealed", hostile)
    server = start_server(CompileEngine(fake_assembler, compile_fn=fake_compiler))
    diagnostic = _the_one_diagnostic(server.target)
    assert diagnostic.code.id == "CTS-INTEGRITY" and problem in diagnostic.message


def _the_one_diagnostic(target: str) -> object:
    """Compile one request through the server at `target`: the failure's one diagnostic."""
    compiler = RemoteCompiler(target)
    try:
        ((_, outcome),) = compiler.compile_all(_requests(1))
    finally:
        compiler.close()
    assert not outcome.ok
    (diagnostic,) = outcome.diagnostics
    return diagnostic
