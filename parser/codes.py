"""Stable diagnostic codes, one constant each.

Codes that mirror a rustc error keep rustc's number (E0308, E0596, ...) so users can look
them up; cuTile-specific rules use `CT` numbers. Never renumber or reuse a code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class DiagnosticCode:
    id: str  # "E0308", "CT0201"
    name: str  # kebab-case, for filtering: "mismatched-types"
    summary: str


def _code(id: str, name: str, summary: str) -> DiagnosticCode:
    code = DiagnosticCode(id, name, summary)
    ALL_CODES[id] = code
    return code


ALL_CODES: dict[str, DiagnosticCode] = {}

# --- syntax and structure (CT00xx) ---
SYNTAX_ERROR: Final = _code("CT0001", "syntax-error", "the file is not valid Rust")
UNSUPPORTED_SYNTAX: Final = _code(
    "CT0002", "unsupported-syntax", "valid Rust that cuTile kernels do not support"
)
NO_KERNEL_MODULE: Final = _code(
    "CT0003", "no-kernel-module", "the file has no #[cutile::module] module"
)
INVALID_ENTRY_OPTION: Final = _code(
    "CT0004", "invalid-entry-option", "an unknown or malformed #[cutile::entry(...)] option"
)
LIMIT_EXCEEDED: Final = _code("CT0005", "limit-exceeded", "the input exceeds a compiler limit")
INLINE_LIMIT: Final = _code(
    "CT0006",
    "inline-limit",
    "device-function calls inline more code, or nest deeper, than one kernel may",
)
PARSE_TIME_LIMIT: Final = _code(
    "CT0007", "parse-time-limit", "the sources did not parse within the caller's time limit"
)

# --- names and generics ---
UNKNOWN_ENTRY: Final = _code("CT0101", "unknown-entry", "no entry function of that name")
AMBIGUOUS_ENTRY: Final = _code(
    "CT0103", "ambiguous-entry", "several entries match the requested name"
)
INVALID_SPECIALIZATION: Final = _code(
    "CT0104",
    "invalid-specialization",
    "request facts that do not match the entry's tensor parameters",
)
GENERIC_ARGUMENT: Final = _code(
    "CT0102", "generic-argument", "a missing, extra or ill-typed generic argument"
)
UNRESOLVED_NAME: Final = _code("E0425", "unresolved-name", "a name that is not in scope")
UNKNOWN_METHOD: Final = _code("E0599", "unknown-method", "no method of that name for the type")
WRONG_ARG_COUNT: Final = _code("E0061", "wrong-argument-count", "wrong number of arguments")
TYPE_ANNOTATION_NEEDED: Final = _code(
    "E0282", "type-annotation-needed", "a type cannot be inferred"
)
BREAK_OUTSIDE_LOOP: Final = _code(
    "E0268", "break-outside-loop", "`break` or `continue` outside a loop"
)
DUPLICATE_DEFINITION: Final = _code("E0428", "duplicate-definition", "a name is defined twice")
GENERIC_NAME_REUSED: Final = _code(
    "E0403", "generic-name-reused", "one function's generic parameters repeat a name"
)
PARAM_BOUND_TWICE: Final = _code(
    "E0415", "param-bound-twice", "one function's parameter list binds a name twice"
)
MISSING_FIELD: Final = _code("E0063", "missing-field", "a struct literal leaves out a field")
UNKNOWN_FIELD: Final = _code("E0560", "unknown-field", "a struct literal names no such field")
WRONG_GENERIC_COUNT: Final = _code(
    "E0107", "wrong-generic-count", "a turbofish with the wrong number of generic arguments"
)
NO_SUCH_FIELD: Final = _code("E0609", "no-such-field", "a field access names no such field")
PATTERN_MISSING_FIELD: Final = _code(
    "E0027", "pattern-missing-field", "a struct pattern leaves out a field without `..`"
)
PATTERN_UNKNOWN_FIELD: Final = _code(
    "E0026", "pattern-unknown-field", "a struct pattern names no such field"
)

# --- types and shapes ---
MISMATCHED_TYPES: Final = _code("E0308", "mismatched-types", "types or shapes differ")
UNSUPPORTED_TYPE: Final = _code("CT0204", "unsupported-type", "a type cuTile cannot use here")
INVALID_PARAMETER: Final = _code(
    "CT0205", "invalid-entry-parameter", "an entry parameter of an unsupported kind"
)
LITERAL_OUT_OF_RANGE: Final = _code(
    "CT0206", "literal-out-of-range", "a literal or shape dimension that does not fit its type"
)
INVALID_OPERAND: Final = _code(
    "E0369", "invalid-operand", "an operator that is not defined for these operands"
)
INVALID_UNARY_OPERAND: Final = _code(
    "E0600", "invalid-unary-operand", "a unary operator the operand's type does not implement"
)

# --- partitions, mutability and shapes of outputs ---
ASSIGN_IMMUTABLE: Final = _code(
    "E0384", "assign-immutable", "assigning twice to a variable not declared `mut`"
)
MUTATE_SHARED: Final = _code(
    "E0596", "mutate-through-shared-ref", "writing or mutably partitioning through `&`"
)
OUTPUT_RANK: Final = _code("CT0201", "output-rank", "a partitioned output must have rank 1 to 3")
TILE_NOT_POWER_OF_TWO: Final = _code(
    "CT0202", "tile-shape-not-power-of-two", "tile dimensions must be positive powers of two"
)
OUTPUT_SHAPE_DYNAMIC: Final = _code(
    "CT0203", "output-tile-shape-dynamic", "an output's tile shape must be static"
)

PARTITION_OUT_OF_BOUNDS: Final = _code(
    "CT0207", "partition-out-of-bounds", "a partition index outside the block's own tiles"
)
PARTITION_INDEX_PROVENANCE: Final = _code(
    "CT0208", "partition-index-provenance", "a mapped store needs an index its schedule minted"
)
UNSAFE_REQUIRED: Final = _code(
    "E0133", "unsafe-required", "an operation that may race or read out of bounds needs `unsafe`"
)
UNUSED_UNSAFE: Final = _code(
    "CT0301", "unused-unsafe", "an `unsafe` block around only safe code (rustc's `unused_unsafe`)"
)
RAW_MEMORY_ACCESS: Final = _code(
    "CT0302",
    "raw-memory-access",
    "a memory access no bounds check covers, outside `unsafe` (the kernel is marked unchecked)",
)

# --- ownership and borrows (rustc's borrow checker) ---
USE_AFTER_MOVE: Final = _code("E0382", "use-after-move", "a value used after it was moved")
MUTABLE_BORROW_TWICE: Final = _code(
    "E0499", "mutable-borrow-twice", "two mutable borrows of the same tensor alive at once"
)
CONFLICTING_BORROW: Final = _code(
    "E0502", "conflicting-borrow", "a shared and a mutable borrow of the same tensor alive at once"
)
MOVE_WHILE_BORROWED: Final = _code(
    "E0505", "move-while-borrowed", "moving a value out while it is borrowed"
)
RETURN_LOCAL_REFERENCE: Final = _code(
    "E0515", "return-reference-to-local", "returning a reference to a local variable"
)

IN_KERNEL_CHECK_DENIED: Final = _code(
    "CT0209", "in-kernel-check-denied", "a bounds check left in a `deny_in_kernel_checks` kernel"
)
DIM_PROVENANCE: Final = _code(
    "CT0210",
    "dimension-provenance",
    "a bounded-partition index that the axis's own `Dim` did not produce",
)
BOUND_MISMATCH: Final = _code(
    "CT0211", "with-bounds-mismatch", "a `with_bounds` bound that is not the axis's tile count"
)

# --- arch ---
ARCH_UNSUPPORTED: Final = _code(
    "CT0801", "unsupported-on-target", "the target GPU lacks a type the kernel uses"
)

# --- backend ---
TILEIRAS_FAILED: Final = _code("CT0901", "tileiras-failed", "the Tile IR assembler failed")
COMPILE_TOO_COSTLY: Final = _code(
    "CT0902", "compile-too-costly", "the compile needed more CPU time or memory than allowed"
)
INTERNAL_ERROR: Final = _code("CT0999", "internal-error", "a bug in cutile-serve")
