"""The whole compile path, top to bottom, in one function.

    .rs sources ──parse──▶ AST ──resolve──▶ entry + linked modules
        ──specialize──▶ generic bindings ──typecheck──▶ typed kernel (shapes concrete)
        ──check──▶ borrows, moves, `unsafe` ──lower──▶ tile IR ──verify──▶
        ──write──▶ Tile IR bytecode ──tileiras──▶ cubin, plus the launch contract

Every stage appends to one `DiagnosticSink`; the first stage that leaves errors ends the
compile. `stop_after` lets tests stop at any stage and inspect its product.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import time
from dataclasses import dataclass, field

from client_stubs.integrity import sources_sha256
from client_stubs.occupancy import MIN_TILE_BLOCKS
from lowering.abi import SlotLayout, entry_abi
from lowering.block_order import group_block_order
from lowering.bounds import InKernelCheckDenied
from lowering.branch_loads import keep_branch_loads_off_tma
from lowering.build_id import compiler_version
from lowering.bytecode.writer import DEFAULT_VERSION, write_bytecode
from lowering.contract import LaunchContract
from lowering.contract_builder import build_contract, format_generic
from lowering.cubin_info import check_cubin
from lowering.default_occupancy import takes_default_occupancy, with_default_occupancy
from lowering.grid_dependency import wait_for_prior_grids
from lowering.ir.core import Module
from lowering.ir.verify import verify_module
from lowering.lower_kernel import KernelLowering, LoweredKernel
from lowering.rejection import Rejected
from lowering.split_f32_products import split_f32_products
from lowering.symbols import entry_symbol
from lowering.tileiras import HOST_ARCHES, Tileiras, TileirasError, TileirasFault
from lowering.widen_accumulators import widen_accumulators
from parser import ast_nodes as A
from parser import messages
from parser.arch import ARCHS, DEFAULT_ARCH, arch_number
from parser.front_end import (
    Diagnostic,
    DiagnosticSink,
    ParseDeadline,
    check_entry,
    entry_names,
    kernel_view_layouts,
    parse_program,
)
from parser.spans import SourceFile, Span
from parser.specialization import TensorFacts
from parser.typed_kernel import TypedKernel

_log = logging.getLogger(__name__)

COMPILER_VERSION = compiler_version()  # "0.1.0+<digest of the compiler's source>"
DEFAULT_BYTECODE_VERSION = DEFAULT_VERSION
EARLY_LAUNCH_BYTECODE_VERSION = (13, 4)  # the first with grid-dependency ops (gdc_*)
EARLY_LAUNCH_MIN_SM = 90  # dependent launches exist from sm_90 (tileiras drops gdc ops below)
__all__ = [
    "ARCHS",
    "DEFAULT_ARCH",
    "HOST_ARCHES",
    "CompileRequest",
    "CompileResult",
    "Stage",
    "compile_kernel",
]


class Stage(enum.IntEnum):
    PARSE = 1
    CHECK = 2
    IR = 3
    BYTECODE = 4
    CUBIN = 5


@dataclass(frozen=True)
class CompileRequest:
    sources: tuple[SourceFile, ...]  # the first file holds the entry
    entry: str  # "add" or "kernel::add"
    generics: tuple[tuple[str, str], ...] = ()  # by name: (("B", "128"),)
    generic_args: tuple[str, ...] = ()  # by position, declaration order
    arch: str = DEFAULT_ARCH
    opt_level: int = 3
    host_arch: str = "x86_64"
    lineinfo: bool = False
    specialization: tuple[TensorFacts, ...] = ()  # what the host knows about its tensors
    # keep f16 mma accumulators carried by loops in f16 (`lowering.widen_accumulators`)
    exact_accumulators: bool = False
    # multiply f32 mma operands by f32 FMA, not as three TF32 products on the tensor cores
    # (`lowering.split_f32_products`)
    exact_f32_products: bool = False
    # wait for prior grids before any memory access, so that hosts may launch the kernel
    # early (programmatic dependent launch; `lowering.grid_dependency`; bytecode 13.4; from
    # sm_90, below which there are no dependent launches and the request is a plain kernel);
    # False: a plain kernel
    early_launch: bool = True
    # an occupancy variant: the hint `occupancy = N` wherever the entry names no occupancy for
    # its target (`lowering.default_occupancy`), and a contract that asks hosts to take it
    # only for launches of MIN_TILE_BLOCKS or more; 0: the entry's own hints only
    occupancy: int = 0


@dataclass(frozen=True)
class Timings:
    frontend_ms: float = 0.0  # parse through bytecode
    tileiras_ms: float = 0.0
    total_ms: float = 0.0


@dataclass(frozen=True)
class CompileResult:
    diagnostics: tuple[Diagnostic, ...]
    stage_reached: Stage | None = None
    kernel: TypedKernel | None = None
    ir: Module | None = None
    bytecode: bytes | None = None
    cubin: bytes | None = None
    contract: LaunchContract | None = None
    timings: Timings = field(default_factory=Timings)

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diagnostics)


def _now_ms() -> float:
    return time.perf_counter() * 1000.0


def compile_kernel(
    request: CompileRequest,
    *,
    stop_after: Stage = Stage.CUBIN,
    assembler: Tileiras | None = None,
    parse_limit_ms: int | None = None,
) -> CompileResult:
    """Compile one entry of `request` for one arch; errors come back as diagnostics.
    `parse_limit_ms` bounds tree-sitter's wall time over all sources (CT0007 past it)."""
    sink = DiagnosticSink()
    started = _now_ms()
    deadline = None if parse_limit_ms is None else ParseDeadline.after_ms(parse_limit_ms)
    try:
        return _compile(request, stop_after, assembler, sink, started, deadline)
    except (TileirasFault, MemoryError):  # not the kernel's error: the caller decides
        raise
    except Exception as exc:  # a compiler bug: report it, never leak a traceback
        _log.exception("internal compiler error while compiling %s", request.entry)
        sink.add(messages.INTERNAL_ERROR.at(None, kind=type(exc).__name__, error=exc))
        return CompileResult(tuple(sink))


def _occupancy_variant(
    lowered: LoweredKernel, request: CompileRequest
) -> tuple[LoweredKernel, bool, int]:
    """Whether the entry takes an occupancy variant's hint (`lowering.default_occupancy`),
    and for a request of that variant the kernel with the hint and the launches it serves
    (unchanged and 0 otherwise)."""
    takes = any(takes_default_occupancy(f, request.arch) for f in lowered.module.functions)
    if not (request.occupancy and takes):
        return lowered, takes, 0
    module = with_default_occupancy(lowered.module, request.arch, request.occupancy)
    return dataclasses.replace(lowered, module=module), takes, MIN_TILE_BLOCKS


def _lower(
    kernel: TypedKernel,
    request: CompileRequest,
    abi: tuple[SlotLayout, ...],
    symbol: str,
    sink: DiagnosticSink,
) -> LoweredKernel | None:
    """Our tile IR for the kernel; the rules only lowering can decide (a check it may not
    place in the kernel, a provable violation) become diagnostics instead."""
    try:
        layouts = kernel_view_layouts(kernel, request.specialization, request.arch)
        return KernelLowering(kernel, abi, layouts).lower(symbol)
    except InKernelCheckDenied as denied:
        sink.add(_denied_check(denied, kernel.function))
    except Rejected as rejected:
        sink.add(rejected.diagnostic)
    return None


def _faster_arithmetic(module: Module, request: CompileRequest) -> Module:
    """Loop accumulators carried wide (`lowering.widen_accumulators`) and f32 tiles multiplied
    on the tensor cores (`lowering.split_f32_products`), each unless the request says not to."""
    if not request.exact_accumulators:
        module = widen_accumulators(module)
    if not request.exact_f32_products:
        module = split_f32_products(module)
    return module


def _compile(
    request: CompileRequest,
    stop_after: Stage,
    assembler: Tileiras | None,
    sink: DiagnosticSink,
    started: float,
    deadline: ParseDeadline | None = None,
) -> CompileResult:
    # 1. parse every file (tree-sitter stops here) and link the kernel modules
    program = parse_program(request.sources, sink, deadline)
    if sink.has_errors or stop_after is Stage.PARSE:
        return CompileResult(tuple(sink), Stage.PARSE)

    # 2. find the entry, bind its generics, type check it (shapes become concrete), check
    # borrows, moves and `unsafe`, and specialize it to the host's tensor facts
    kernel = check_entry(
        program,
        request.entry,
        request.generics,
        request.generic_args,
        request.arch,
        request.specialization,
        sink,
    )
    if kernel is None or sink.has_errors or stop_after is Stage.CHECK:
        return CompileResult(tuple(sink), Stage.CHECK, kernel=kernel)

    # 3. lower to our tile IR, carry loop accumulators wide and multiply f32 tiles as three
    #    TF32 products (unless asked not to), keep loads
    #    under an `if` in a loop off TMA (`lowering.branch_loads`), hand a GEMM's tiles to
    #    blocks in row groups (`lowering.block_order`), for an occupancy variant give entries
    #    the hint they do not name (`lowering.default_occupancy`), when asked (from sm_90)
    #    order every memory access after a wait for prior grids (`lowering.grid_dependency`),
    #    verify it
    abi, param_bytes = entry_abi(kernel.signature)
    ordered_generics = tuple((p.name, kernel.generics[p.name]) for p in kernel.function.generics)
    specialization = ",".join(f"{n}={format_generic(v)}" for n, v in ordered_generics)
    symbol = entry_symbol(kernel.function.module_path, kernel.function.name, specialization)
    lowered = _lower(kernel, request, abi, symbol, sink)
    if lowered is None:
        return CompileResult(tuple(sink), Stage.CHECK, kernel=kernel)
    lowered = dataclasses.replace(lowered, module=_faster_arithmetic(lowered.module, request))
    lowered = dataclasses.replace(lowered, module=keep_branch_loads_off_tma(lowered.module))
    lowered = dataclasses.replace(lowered, module=group_block_order(lowered.module))
    lowered, takes_occupancy, min_tile_blocks = _occupancy_variant(lowered, request)
    waits = request.early_launch and (arch_number(request.arch) or 0) >= EARLY_LAUNCH_MIN_SM
    if waits:
        lowered = dataclasses.replace(lowered, module=wait_for_prior_grids(lowered.module))
    problems = verify_module(lowered.module)
    if problems:
        raise AssertionError("invalid tile IR: " + "; ".join(problems))
    if stop_after is Stage.IR:
        return CompileResult(tuple(sink), Stage.IR, kernel=kernel, ir=lowered.module)

    # 4. write Tile IR bytecode (our own writer)
    version = EARLY_LAUNCH_BYTECODE_VERSION if waits else DEFAULT_BYTECODE_VERSION
    bytecode = write_bytecode(lowered.module, version)
    frontend_ms = _now_ms() - started
    if stop_after is Stage.BYTECODE:
        return CompileResult(
            tuple(sink),
            Stage.BYTECODE,
            kernel=kernel,
            ir=lowered.module,
            bytecode=bytecode,
            timings=Timings(frontend_ms, 0.0, frontend_ms),
        )

    # 5. assemble with tileiras; its failures become diagnostics at the entry
    tool = assembler or Tileiras.locate()
    assembled_at = _now_ms()
    try:
        cubin = tool.assemble(
            bytecode,
            arch=request.arch,
            opt_level=request.opt_level,
            host_arch=request.host_arch,
            lineinfo=request.lineinfo,
            symbol=symbol,
        )
    except TileirasFault:
        raise
    except TileirasError as exc:
        sink.add(_tileiras_diagnostic(exc, kernel.function))
        return CompileResult(
            tuple(sink), Stage.BYTECODE, kernel=kernel, ir=lowered.module, bytecode=bytecode
        )
    tileiras_ms = _now_ms() - assembled_at
    try:  # whatever assembled it, nothing unchecked leaves the compiler
        check_cubin(cubin, request.arch, symbol)
    except ValueError as exc:
        raise TileirasFault(f"the assembler returned no valid cubin: {exc}", 0, "", ()) from None

    # 6. the launch contract travels with the cubin
    contract = build_contract(
        module_path=kernel.function.module_path,
        function=kernel.function.name,
        symbol=symbol,
        signature=kernel.signature,
        generics=ordered_generics,
        abi=abi,
        param_buffer_bytes=param_bytes,
        assumptions=lowered.assumptions,
        bounds=lowered.bounds,
        source_sha256=source_digest(request.sources),
        compiler_version=COMPILER_VERSION,
        arch=request.arch,
        tileiras_version=tool.version,
        bytecode_version="{}.{}".format(*version),
        opt_level=request.opt_level,
        host_arch=request.host_arch,
        raw_memory=lowered.raw_memory,
        waits_for_prior_grids=waits,
        min_tile_blocks=min_tile_blocks,
        takes_occupancy_variant=takes_occupancy,
    )
    total_ms = _now_ms() - started
    return CompileResult(
        tuple(sink),
        Stage.CUBIN,
        kernel=kernel,
        ir=lowered.module,
        bytecode=bytecode,
        cubin=cubin,
        contract=contract,
        timings=Timings(frontend_ms, tileiras_ms, total_ms),
    )


def list_entries(sources: tuple[SourceFile, ...]) -> dict[str, tuple[str, ...]]:
    """The qualified entry names each file defines (files that do not parse define none)."""
    return entry_names(sources)


def source_digest(sources: tuple[SourceFile, ...]) -> str:
    """sha256 over every source's text, length-prefixed, in order (the entry's file first;
    `client_stubs.integrity.sources_sha256`, which a client checks replies by). Not the file
    names: the same sources compiled from another folder, by an absolute path or through the
    server (which sees base names) give the same contract and cache key."""
    return sources_sha256(source.data for source in sources)


def _denied_check(denied: InKernelCheckDenied, function: A.Function) -> Diagnostic:
    span = denied.span if isinstance(denied.span, Span) else function.name_span
    return messages.IN_KERNEL_CHECK_DENIED.at(span, cause=denied.cause, function=function.name)


def _tileiras_diagnostic(exc: TileirasError, function: A.Function) -> Diagnostic:
    said = exc.stderr.strip() or "(no output)"
    return messages.TILEIRAS_FAILED.at(
        function.name_span,
        function=function.name,
        reason=exc.message,
        said=said,
        command=" ".join(exc.command),
    )
