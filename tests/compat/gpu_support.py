"""What a GPU case of the compatibility runner is, and the helpers every case shares.

A case builds its inputs with torch (at the host code's generics, on sizes that are not tile
multiples where the kernel allows), launches the cutile-rs kernel through our Python host
(`client_stubs`, zero-copy views of the torch tensors), and returns what it got next to a
torch reference, with the tolerance it states, and two launchers for timing: ours and torch's
equivalent. Imports torch and the client only (the GPU host has no compiler).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import torch

from client_stubs import Bundle, DeviceTensor, Kernel
from client_stubs.variants import Variants


@dataclass(frozen=True)
class Compared:
    """One output: what the kernel wrote, what torch computes, the largest error allowed."""

    name: str
    got: torch.Tensor
    expected: torch.Tensor
    tolerance: float  # absolute, on the element-wise difference in f64

    def max_error(self) -> float:
        if self.got.shape != self.expected.shape:
            raise ValueError(
                f"{self.name}: shape {tuple(self.got.shape)} != {tuple(self.expected.shape)}"
            )
        difference = (self.got.double() - self.expected.double()).abs()
        if difference.numel() == 0:
            return 0.0
        if torch.isnan(difference).any():
            return float("inf")
        return float(difference.max())


@dataclass(frozen=True)
class Launched:
    """A case's outcome: its compared outputs, and launchers to time ours and torch's."""

    outputs: Sequence[Compared]
    ours: Callable[[], object]
    reference: Callable[[], object] | None = None  # torch doing the same work, for timing
    note: str = ""


@dataclass(frozen=True)
class FirstLaunch:
    """What a case's first launch of its kernel ran: the grid (tile blocks per axis) and the
    cubin (the variant the arguments chose), the evidence for why a kernel is slow."""

    grid: tuple[int, int, int]
    cubin_sha256: str


class RecordingKernel:
    """A kernel that notes its first launch (grid and chosen variant) and otherwise is the
    kernel it wraps."""

    def __init__(self, kernel: Kernel, launches: list[FirstLaunch]) -> None:
        self._kernel = kernel
        self._launches = launches
        self._noted = False

    def __call__(self, *args: object, **options: object) -> tuple[object, ...]:
        if not self._noted:
            self._noted = True
            self._note(args, options.get("grid"))  # type: ignore[arg-type]
        return self._kernel(*args, **options)  # type: ignore[arg-type]

    def _note(self, args: tuple[object, ...], grid: tuple[int, int, int] | None) -> None:
        kernel = self._kernel
        chosen = kernel.choose(*args, grid=grid) if isinstance(kernel, Variants) else kernel
        plan = chosen.plan(*args, grid=grid)
        self._launches.append(FirstLaunch(tuple(plan.grid), chosen.sha256))  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> object:
        return getattr(self._kernel, name)


@dataclass(frozen=True)
class CaseContext:
    """What a case gets: the kernel for its generics, loaded from the bundle. `launches`
    collects each kernel's first launch."""

    bundle: Bundle
    module: str
    function: str
    generics: Mapping[str, str] = field(default_factory=dict)
    launches: list[FirstLaunch] = field(default_factory=list, compare=False)

    def kernel(self, *, allow_unchecked: bool = False) -> Kernel:
        kernel = self.bundle.kernel(
            self.function, dict(self.generics), module=self.module, allow_unchecked=allow_unchecked
        )
        return RecordingKernel(kernel, self.launches)  # type: ignore[return-value]

    def int(self, name: str) -> int:
        return int(self.generics[name])

    def shape(self, name: str) -> tuple[int, ...]:
        """An array generic such as `S=[2, 4]`."""
        text = self.generics[name].strip()
        return tuple(int(part) for part in text.strip("[]").split(",") if part.strip())

    def dtype(self, name: str) -> torch.dtype:
        return TORCH_DTYPES[self.generics[name]]


CaseFn = Callable[[CaseContext], Launched]

TORCH_DTYPES: dict[str, torch.dtype] = {
    "f16": torch.float16,
    "bf16": torch.bfloat16,
    "f32": torch.float32,
    "f64": torch.float64,
    "i32": torch.int32,
    "i64": torch.int64,
}


def view(tensor: torch.Tensor) -> DeviceTensor:
    """Our zero-copy view of a torch CUDA tensor."""
    return DeviceTensor.wrap(tensor)


def randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, device="cuda", dtype=torch.float32, generator=generator).to(dtype)


def tolerance_for(dtype: torch.dtype, scale: float = 1.0, terms: int = 1) -> float:
    """An absolute tolerance for a result of magnitude `scale` summed over `terms` products:
    a few output roundings plus the accumulation's rounding growth."""
    eps = {torch.float16: 1e-3, torch.bfloat16: 8e-3, torch.float32: 2e-6, torch.float64: 1e-12}
    unit = eps.get(dtype, 0.0)
    return max(scale, 1.0) * unit * (4 + terms**0.5)
