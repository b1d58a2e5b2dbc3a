"""Load the artifact bundles written by `cutile-compile` (manifest.json + cubins + contracts).

Layout of a bundle folder::

    OUT/manifest.json   {"schema": 2, "kernels": [{"module", "function", "generics": {..},
                          "sm", "cubin", "contract", "contract_json", "cubin_sha256",
                          "contract_sha256", "facts": [..], "min_tile_blocks"}, ...]}
    OUT/<file>.cubin, OUT/<file>.contract.pb, OUT/<file>.contract.json

`Bundle.open(path).kernel("add", {"B": "1024"})` picks one entry (the current GPU's target
when a GPU is present), verifies the cubin's and the contract's sha256 (both required: the
contract decides what a launch checks) and returns a launchable `Kernel`.
A kernel compiled in several variants that differ only in their tensor facts (the ones
`cutile-compile` builds by default, or `--facts`) loads as one `Variants` kernel: each launch
runs the most specialized variant whose contract those arguments meet, chosen once per
argument layout (see `client_stubs.variants`); `for_args=` loads the one variant given
arguments pick. Variants whose facts relax the default view assumptions (a base aligned to
less than 16 bytes, a strided last axis) rank below every variant that keeps them, so they
are chosen only for the views that need them. An occupancy variant (`min_tile_blocks`) ranks
first but serves only launches of that many tile blocks. Schema 2 is schema 1 with
`min_tile_blocks`: hosts that read only schema 1 would take an occupancy variant for a
duplicate of the rows variant, so they refuse the bundle instead.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format
from google.protobuf.message import DecodeError

from client_stubs import driver
from client_stubs.errors import (
    AmbiguousKernelError,
    BundleError,
    IntegrityError,
    KernelNotFoundError,
    LaunchError,
)
from client_stubs.files import read_regular_file
from client_stubs.integrity import MAX_CUBIN_BYTES, contract_bytes
from client_stubs.launcher import Kernel
from client_stubs.occupancy import tile_blocks
from client_stubs.plan import plan_launch
from client_stubs.variants import Variants
from protos.generated.cutile.compile.v1 import contract_pb2

MANIFEST = "manifest.json"
DEFAULT_BASE_ALIGN = 16  # what a kernel assumes of a base address without facts (bytes)
SUPPORTED_SCHEMAS = frozenset({1, 2})
MAX_FILE_BYTES = MAX_CUBIN_BYTES  # no file of a bundle is larger than a host takes a cubin


def normalize_generic(value: object) -> str:
    """Generic values compare as strings without spaces: 128 == "128", [64,32] == "[64, 32]"."""
    if isinstance(value, (list, tuple)):
        value = "[" + ",".join(str(v) for v in value) + "]"
    return str(value).replace(" ", "")


@dataclass(frozen=True)
class BundleEntry:
    """One compiled kernel in a bundle's manifest (paths already resolved)."""

    module: str
    function: str
    generics: tuple[tuple[str, str], ...]
    sm: str
    cubin: Path
    contract: Path | None
    contract_json: Path | None
    cubin_sha256: str
    contract_sha256: str = ""  # of the contract's deterministic serialization; required
    # how much this variant was specialized: the sum of log2(divisor) over its tensor facts
    specificity: int = 0
    # how much its facts relax the default views: log2(16 / base_align) per tensor, plus one
    # per tensor whose last stride may be anything
    relaxation: int = 0
    # an occupancy variant, for launches of at least this many tile blocks (0: any launch)
    min_tile_blocks: int = 0

    @property
    def generics_dict(self) -> dict[str, str]:
        return dict(self.generics)

    def matches(self, generics: Mapping[str, object]) -> bool:
        mine = {k: normalize_generic(v) for k, v in self.generics}
        return all(mine.get(k) == normalize_generic(v) for k, v in generics.items())

    def label(self) -> str:
        generics = ", ".join(f"{k}={v}" for k, v in self.generics)
        facts = f" specialized ({self.specificity})" if self.specificity else ""
        facts += f" relaxed ({self.relaxation})" if self.relaxation else ""
        facts += f" for {self.min_tile_blocks}+ tile blocks" if self.min_tile_blocks else ""
        return f"{self.module}::{self.function}<{generics}> for {self.sm}{facts}"


class Bundle:
    """A folder of compiled kernels described by `manifest.json`."""

    def __init__(self, root: Path, entries: tuple[BundleEntry, ...]) -> None:
        self.root = root
        self.entries = entries

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Bundle:
        root = Path(path)
        manifest_path = root / MANIFEST
        try:
            manifest = json.loads(_read_file(manifest_path).decode("utf-8"))
        except FileNotFoundError:
            raise BundleError(f"{manifest_path} does not exist") from None
        except (OSError, ValueError, RecursionError) as exc:  # Recursion: nested too deep
            raise BundleError(f"{manifest_path} is unreadable: {exc}") from None
        schema = manifest.get("schema") if isinstance(manifest, dict) else None
        if type(schema) is not int or schema not in SUPPORTED_SCHEMAS:  # [1] is unhashable
            raise BundleError(
                f"{manifest_path}: unsupported manifest schema {schema!r} "
                f"(known: {sorted(SUPPORTED_SCHEMAS)})"
            )
        kernels = manifest.get("kernels")
        if not isinstance(kernels, list):
            raise BundleError(f"{manifest_path}: `kernels` must be a list")
        entries = tuple(_entry(root, i, k) for i, k in enumerate(kernels))
        return cls(root, entries)

    def find(
        self,
        function: str,
        generics: Mapping[str, object] | None = None,
        sm: str | None = None,
        module: str | None = None,
        for_args: Sequence[object] | None = None,
    ) -> BundleEntry:
        """The one entry for `function` whose generics include `generics` on target `sm`
        (None: the current GPU's target when there is a GPU, else the only one). Among
        variants with different tensor facts, `for_args` picks the most specialized one
        whose assumptions the arguments meet."""
        candidates, request = self._candidates(function, generics, sm, module)
        if len(candidates) > 1 and for_args is not None:
            candidates = self._best_for(candidates, for_args)
        if len(candidates) > 1:
            hint = "give more generics or sm"
            if _one_family(candidates) and for_args is None:
                hint += (
                    ", or for_args= to choose among variants by their tensor facts "
                    "(Bundle.kernel chooses per launch)"
                )
            raise self._ambiguous(candidates, request, hint)
        return candidates[0]

    def variants(
        self,
        function: str,
        generics: Mapping[str, object] | None = None,
        sm: str | None = None,
        module: str | None = None,
    ) -> list[BundleEntry]:
        """The entries of one kernel that differ only in their tensor facts (and occupancy),
        best first (least relaxed, then occupancy variants, then most specialized; manifest
        order among equals). Entries of several kernels (other generics or targets) are
        ambiguous."""
        candidates, request = self._candidates(function, generics, sm, module)
        if not _one_family(candidates):
            raise self._ambiguous(candidates, request, "give more generics or sm")
        return sorted(candidates, key=_rank, reverse=True)

    def _candidates(
        self,
        function: str,
        generics: Mapping[str, object] | None,
        sm: str | None,
        module: str | None,
    ) -> tuple[list[BundleEntry], str]:
        """The entries that match, on `sm` or the current GPU's target; `KernelNotFoundError`
        when none does."""
        wanted = dict(generics or {})
        candidates = [
            e
            for e in self.entries
            if e.function == function
            and (module is None or e.module == module)
            and e.matches(wanted)
        ]
        if sm is None and driver.device_count() > 0:
            sm = driver.device_sm(driver.current_device())
        if sm is not None:
            candidates = [e for e in candidates if e.sm == sm]
        request = f"`{function}` with generics {wanted}" + (f" for {sm}" if sm else "")
        if not candidates:
            available = "; ".join(e.label() for e in self.entries) or "none"
            raise KernelNotFoundError(
                f"{self.root}: no kernel matches {request}; available: {available}"
            )
        return candidates, request

    def _ambiguous(
        self, candidates: list[BundleEntry], request: str, hint: str
    ) -> AmbiguousKernelError:
        listed = "; ".join(e.label() for e in candidates)
        return AmbiguousKernelError(
            f"{self.root}: {len(candidates)} kernels match {request}: {listed}; {hint}"
        )

    def _best_for(self, candidates: list[BundleEntry], args: Sequence[object]) -> list[BundleEntry]:
        """The candidates whose assumptions `args` meet (an occupancy variant's only with
        enough tile blocks), least relaxed first, then occupancy variants, then most
        specialized; ties stay."""
        fitting = []
        for entry in candidates:
            contract = _read_contract(entry)
            try:
                grid = plan_launch(contract, args).grid
            except LaunchError:  # unmet facts, or a variant these arguments do not fit at all
                continue
            if tile_blocks(grid, contract.launch.cluster_blocks) >= entry.min_tile_blocks:
                fitting.append(entry)
        if not fitting:
            return candidates  # nothing fits: the caller reports them all
        best = max(_rank(e) for e in fitting)
        return [e for e in fitting if _rank(e) == best]

    def kernel(
        self,
        function: str,
        generics: Mapping[str, object] | None = None,
        sm: str | None = None,
        *,
        module: str | None = None,
        for_args: Sequence[object] | None = None,
        allow_unchecked: bool = False,
    ) -> Kernel:
        """Find, verify and load one kernel. An entry built in several variants (different
        tensor facts) loads as one `Variants` kernel that launches, per argument layout, the
        best variant the arguments meet; `for_args` instead loads the one variant those
        arguments pick."""
        if for_args is not None:
            entry = self.find(function, generics, sm, module, for_args)
            return self.load(entry, allow_unchecked=allow_unchecked)
        family = self.variants(function, generics, sm, module)
        kernels = [self.load(e, allow_unchecked=allow_unchecked) for e in family]
        if len(kernels) == 1:
            return kernels[0]
        general = next((i for i, e in enumerate(family) if _rank(e) == GENERAL_RANK), None)
        return Variants(kernels, general)

    def load(self, entry: BundleEntry, *, allow_unchecked: bool = False) -> Kernel:
        """Read an entry's cubin and contract, verify both digests and their consistency,
        build a Kernel."""
        try:
            cubin = _read_file(entry.cubin)
        except (OSError, ValueError) as exc:
            raise BundleError(f"{entry.label()}: cannot read {entry.cubin}: {exc}") from None
        digest = hashlib.sha256(cubin).hexdigest()
        if digest != entry.cubin_sha256.lower():
            raise IntegrityError(
                f"{entry.cubin}: sha256 {digest} differs from the manifest's {entry.cubin_sha256}"
            )
        contract = _read_contract(entry)
        if not entry.contract_sha256:
            raise IntegrityError(f"{entry.label()}: the manifest gives no contract_sha256")
        actual = hashlib.sha256(contract_bytes(contract)).hexdigest()
        if actual != entry.contract_sha256.lower():
            raise IntegrityError(
                f"{entry.label()}: contract sha256 {actual} differs from the manifest's "
                f"{entry.contract_sha256}"
            )
        _check_consistent(entry, contract)
        return Kernel(cubin, contract, cubin_sha256=digest, allow_unchecked=allow_unchecked)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


def _entry(root: Path, index: int, raw: object) -> BundleEntry:
    where = f"{root / MANIFEST}: kernels[{index}]"
    if not isinstance(raw, dict):
        raise BundleError(f"{where} must be an object")
    for key in ("function", "sm", "cubin", "cubin_sha256"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise BundleError(f"{where}: missing string field `{key}`")
    if not raw.get("contract") and not raw.get("contract_json"):
        raise BundleError(f"{where}: needs `contract` or `contract_json`")
    generics = raw.get("generics") or {}
    if not isinstance(generics, dict):
        raise BundleError(f"{where}: `generics` must be an object")
    facts = raw.get("facts") or []
    if not isinstance(facts, list):
        raise BundleError(f"{where}: `facts` must be a list")
    module = raw.get("module", "")
    if not isinstance(module, str):
        raise BundleError(f"{where}: `module` must be a string")
    return BundleEntry(
        module=module,
        function=raw["function"],
        generics=tuple((str(k), normalize_generic(v)) for k, v in generics.items()),
        sm=raw["sm"],
        cubin=_inside(root, raw["cubin"], where),
        contract=_inside(root, raw["contract"], where) if raw.get("contract") else None,
        contract_json=(
            _inside(root, raw["contract_json"], where) if raw.get("contract_json") else None
        ),
        cubin_sha256=raw["cubin_sha256"],
        contract_sha256=str(raw.get("contract_sha256") or ""),
        specificity=_specificity(facts, where),
        relaxation=_relaxation(facts, where),
        min_tile_blocks=_min_tile_blocks(raw.get("min_tile_blocks"), where),
    )


def _rank(entry: BundleEntry) -> tuple[int, bool, int]:
    return (-entry.relaxation, entry.min_tile_blocks > 0, entry.specificity)


GENERAL_RANK = (0, False, 0)  # no facts, any launch


def _one_family(entries: list[BundleEntry]) -> bool:
    """Whether `entries` are one kernel (module, function, target, generics) in variants."""
    return len({(e.module, e.function, e.sm, e.generics) for e in entries}) == 1


def _min_tile_blocks(value: object, where: str) -> int:
    """Absent (or null, as other optional fields): 0, any launch."""
    if value is None:
        return 0
    if type(value) is not int or not 0 <= value < 2**32:
        raise BundleError(f"{where}: `min_tile_blocks` must be an integer from 0 to 2^32 - 1")
    return value


def _specificity(facts: list[object], where: str) -> int:
    total = 0
    for fact in facts:
        if not isinstance(fact, dict):
            raise BundleError(f"{where}: each of `facts` must be an object")
        for key in ("dim_divisors", "stride_divisors"):
            divisors = fact.get(key) or []
            if not isinstance(divisors, list) or not all(
                isinstance(d, int) and d > 0 for d in divisors
            ):
                raise BundleError(f"{where}: `facts[].{key}` must be positive integers")
            total += sum(d.bit_length() - 1 for d in divisors)
    return total


def _relaxation(facts: list[object], where: str) -> int:
    """Absent view facts are the defaults (16-byte aligned base, unit last stride)."""
    total = 0
    for fact in facts:
        assert isinstance(fact, dict)  # _specificity checked
        align = fact.get("base_align", DEFAULT_BASE_ALIGN)
        if (
            not isinstance(align, int)
            or not 1 <= align <= DEFAULT_BASE_ALIGN
            or align & (align - 1)
        ):
            raise BundleError(f"{where}: `facts[].base_align` must be a power of two up to 16")
        unit = fact.get("unit_last_stride", True)
        if not isinstance(unit, bool):
            raise BundleError(f"{where}: `facts[].unit_last_stride` must be a boolean")
        total += (DEFAULT_BASE_ALIGN // align).bit_length() - 1 + (0 if unit else 1)
    return total


def _inside(root: Path, name: object, where: str) -> Path:
    if not isinstance(name, str) or "\x00" in name:
        raise BundleError(f"{where}: a file name must be text without NUL, got {name!a}")
    try:
        path = (root / name).resolve()
        inside = path.is_relative_to(root.resolve())
    except (OSError, RuntimeError) as exc:  # a symlink loop: RuntimeError before Python 3.13
        raise BundleError(f"{where}: {name!a} cannot be resolved: {exc}") from None
    if not inside:
        raise BundleError(f"{where}: {name!a} points outside the bundle")
    return path


def _read_contract(entry: BundleEntry) -> contract_pb2.LaunchContract:
    contract = contract_pb2.LaunchContract()
    blob = _read_if_present(entry, entry.contract)
    if blob is not None:
        try:
            contract.ParseFromString(blob)
        except DecodeError as exc:
            raise BundleError(f"{entry.contract}: not a LaunchContract: {exc}") from None
        return contract
    text = _read_if_present(entry, entry.contract_json)
    if text is not None:
        try:
            json_format.Parse(text.decode("utf-8"), contract)
        except (json_format.ParseError, UnicodeDecodeError) as exc:
            raise BundleError(f"{entry.contract_json}: not a LaunchContract: {exc}") from None
        return contract
    raise BundleError(
        f"{entry.label()}: contract file missing ({entry.contract or entry.contract_json})"
    )


def _read_if_present(entry: BundleEntry, path: Path | None) -> bytes | None:
    """The bytes of `path`, None when the manifest names none or it does not exist; a path
    that cannot be read (a folder, a name too long for the file system...) is a `BundleError`
    naming it."""
    if path is None:
        return None
    try:
        return _read_file(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError) as exc:
        raise BundleError(f"{entry.label()}: cannot read {path}: {exc}") from None


def _read_file(path: Path) -> bytes:
    """The bytes of `path`, a regular file of at most MAX_FILE_BYTES (`NotAFile`, a
    ValueError, says what else it is)."""
    return read_regular_file(path, MAX_FILE_BYTES)


def _check_consistent(entry: BundleEntry, contract: contract_pb2.LaunchContract) -> None:
    problems = []
    if contract.kernel.function and contract.kernel.function != entry.function:
        problems.append(f"function {contract.kernel.function!r} != {entry.function!r}")
    if contract.target.sm and contract.target.sm != entry.sm:
        problems.append(f"sm {contract.target.sm!r} != {entry.sm!r}")
    bound = {g.name: normalize_generic(g.value) for g in contract.specialization.generics}
    if bound and bound != dict(entry.generics):
        problems.append(f"generics {bound} != {dict(entry.generics)}")
    if contract.launch.min_tile_blocks != entry.min_tile_blocks:
        problems.append(
            f"min_tile_blocks {contract.launch.min_tile_blocks} != {entry.min_tile_blocks}"
        )
    if problems:
        raise BundleError(
            f"{entry.label()}: contract disagrees with the manifest: " + "; ".join(problems)
        )
