"""Run tests/benchmarks/decode's host on the CPU: real launch contracts and checks, emulated
kernels.

`Harness` makes our decoder's launches go through the client as on a GPU (each kernel's real
contract, compiled here by our front end with a stand-in assembler; every launch planned and
checked: dtypes, ranks, tiles, grids, aliasing, preconditions) into a recording driver
(tests/client_stubs/fake_driver.py), while the memory is torch CPU tensors and each launch is
carried out by a torch emulation of its kernel, written from rust_examples/decoder.rs
(rounding to bf16 where the kernel converts, f32 elsewhere). CUDA graphs replay the launches
they captured. What this checks is the host: buffers, views, layouts, positions, the state
double-buffering and the chunked prefill, against the torch reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
import torch

from client_stubs import DeviceTensor, Graph, Kernel
from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser.spans import SourceFile
from rust_examples.catalog import EXAMPLES
from service.convert import contract_to_proto
from tests.benchmarks.decode_emulators import EMULATORS
from tests.client_stubs.fake_driver import FakeDriver
from tests.fake_cubin import StandInAssembler, fake_cubin

DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32", torch.int32: "i32"}
Launch = tuple[Kernel, tuple[object, ...]]


class FakeBundle:
    """`Bundle.kernel` over decoder.rs (and, given a cutile-rs checkout, cutile-kernels'
    modules) compiled here: contracts real, cubins stand-ins."""

    def __init__(self, cutile_rs: Path | None = None) -> None:
        path = EXAMPLES / "decoder.rs"
        self.source = SourceFile("rust_examples/decoder.rs", path.read_text())
        self.cutile_rs = cutile_rs
        self.kernels: dict[tuple, Kernel] = {}

    def _source(self, module: str | None) -> SourceFile:
        if module is None:
            return self.source
        assert self.cutile_rs is not None, "cutile-kernels need a cutile-rs checkout"
        for path in sorted((self.cutile_rs / "cutile-kernels" / "src").rglob("*.rs")):
            text = path.read_text()
            if f"mod {module} " in text:
                return SourceFile(str(path), text)
        raise KeyError(module)

    def kernel(
        self,
        entry: str,
        generics: Mapping[str, str],
        *,
        module: str | None = None,
        allow_unchecked: bool = False,
    ) -> Kernel:
        key = (module, entry, tuple(sorted(generics.items())))
        if key not in self.kernels:
            name = entry if module is None else f"{module}::{entry}"
            request = CompileRequest((self._source(module),), name, tuple(generics.items()))
            result = compile_kernel(request, stop_after=Stage.CUBIN, assembler=StandInAssembler())
            assert result.ok, result.diagnostics
            contract = contract_to_proto(result.contract)
            cubin = fake_cubin("sm_90", result.contract.entry_symbol)  # type: ignore[union-attr]
            self.kernels[key] = Kernel(cubin, contract, allow_unchecked=allow_unchecked)
        return self.kernels[key]


def wrap(t: torch.Tensor) -> DeviceTensor:
    """A DeviceTensor over a CPU tensor's memory; the tensor rides along as its owner."""
    return DeviceTensor(t.data_ptr(), tuple(t.shape), tuple(t.stride()), DTYPES[t.dtype], 0, t)


class Harness:
    """Install with `Harness(monkeypatch)`; see the module docstring."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from tests.benchmarks.decode import model

        self.driver = FakeDriver(monkeypatch)
        self.launches: list[str] = []
        capture: list[Launch] = []
        issue, capture_graph, replay = Kernel.issue, Graph.capture.__func__, Graph.replay

        def emulated_issue(kernel: Kernel, args, stream, contexts, capturing=False, *rest, **kw):
            prepared = issue(kernel, args, stream, contexts, capturing, *rest, **kw)
            if capturing:
                capture.append((kernel, args))
            else:
                self.run((kernel, args))
            return prepared

        def emulated_capture(cls, op, *, device=None):
            capture.clear()
            graph = capture_graph(cls, op, device=device)
            graph.emulated = list(capture)
            return graph

        def emulated_replay(graph, stream=None, *, sync=False):
            for launch in graph.emulated:
                self.run(launch)
            return replay(graph, stream, sync=sync)

        monkeypatch.setattr(Kernel, "issue", emulated_issue)
        monkeypatch.setattr(Graph, "capture", classmethod(emulated_capture))
        monkeypatch.setattr(Graph, "replay", emulated_replay)
        monkeypatch.setattr(model, "inp", wrap)
        monkeypatch.setattr(model, "out", lambda t, tile: wrap(t).partition(tuple(tile)))

    def run(self, launch: Launch) -> None:
        kernel, args = launch
        self.launches.append(kernel.name)
        EMULATORS[kernel.name](kernel.generics, *args)
