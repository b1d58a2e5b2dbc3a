"""Diagnostic texts, one named entry each beside its code (`parser.codes`).

A `Message` holds the code and the message, label, notes and help as `str.format` templates
(`{name}` fields, literal braces doubled), and its severity (an error unless it says
otherwise); `at` fills them in and places the diagnostic. Rules refer to an entry by name, so
the wording of every diagnostic lives here, not in the logic that decides to report it: no
module of parser/, lowering/ or service/ builds one with `parser.diagnostics.error` or
`warning`, nor (in parser/ and lowering/) a `Diagnostic` by hand (tests/parser/test_messages.py
checks it). What a rule computes (a joined list, a plural, a name) it passes as a field;
secondary labels, which point at other places, it passes with their text. Sections follow the
modules that report them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from parser import codes
from parser.codes import DiagnosticCode
from parser.diagnostics import Diagnostic, Label, Severity
from parser.spans import Span


@dataclass(frozen=True)
class Message:
    code: DiagnosticCode
    text: str
    label: str = ""
    notes: tuple[str, ...] = ()
    help: tuple[str, ...] = ()
    severity: Severity = Severity.ERROR

    def at(
        self,
        span: Span | None,
        secondary: tuple[tuple[Span, str], ...] = (),
        suggestions: tuple[str, ...] = (),
        **fields: object,
    ) -> Diagnostic:
        """The diagnostic this entry reports at `span` (an error unless its severity says
        otherwise), its templates filled from `fields`; `secondary` labels follow the primary
        one, and `suggestions` (computed help, such as a similar name) the entry's help."""
        labels = () if span is None else (Label(span, self.label.format(**fields), primary=True),)
        labels += tuple(Label(s, text) for s, text in secondary)
        return Diagnostic(
            self.severity,
            self.code,
            self.text.format(**fields),
            labels,
            tuple(note.format(**fields) for note in self.notes),
            (*(text.format(**fields) for text in self.help), *suggestions),
        )


# --- the prelude's `&mut self` methods (parser.prelude.common.mutable_binding) ---
NOT_DECLARED_MUT: Final = Message(
    codes.MUTATE_SHARED,
    "cannot borrow `{name}` as mutable, as it is not declared as mutable",
    "cannot borrow as mutable",
    help=("declare {declaration}",),
)

# --- element-type conversions (parser.prelude.convert) ---
CANNOT_CONVERT: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`{fn}` cannot convert `{elem}` to `{target}`: {why}",
    "`{source}` -> `{converted}`",
)

# --- comparisons and selection (parser.prelude.compare) ---
SELECT_CONDITION_NOT_BOOL: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: the condition of `select` must be `Tile<bool, ..>`, found `{found}`",
    "expected a `bool` tile",
    help=("compare first: `lt_tile(a, b)`, `eq_tile(a, b)`, ...",),
)
SELECT_SHAPES_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `select` needs the condition and the values to have one shape, "
    "found {condition} and {values}",
    "expected shape {condition}",
    notes=("cuTile has no implicit broadcasting",),
)

# --- byte packing (parser.prelude.packing) ---
PACKING_NEEDS_RANK_ONE: Final = Message(
    codes.MISMATCHED_TYPES,
    "`{fn}` needs a rank-1 tile, found `{source}`",
    "rank {rank}",
    help=("flatten it first: `.reshape(const_shape![N])`",),
)
PACKING_SIZE_MISMATCH: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`{fn}` cannot hold {bits} bits in whole `{elem}` elements",
    "size mismatch",
)
PACK_IS_BITCAST: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`pack` of `{elem}` elements is a bitcast",
    "8-bit elements",
    help=("use `bitcast` between 8-bit element types",),
)
PACK_NOT_TO_BYTES: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`pack` produces bytes, not `{target}`",
    "not a byte element",
    help=("annotate a byte element: {byte_elements}",),
)
UNPACK_NOT_FROM_BYTES: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`unpack` reads bytes ({byte_elements}), found `{source}`",
    "not bytes",
    help=("`pack` it into `u8` bytes first",),
)
UNPACK_IS_BITCAST: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`unpack` into `{elem}` elements is a bitcast",
    "8-bit elements",
    help=("use `bitcast` between 8-bit element types",),
)
NOT_PACKED_STORAGE: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`.{fn}(shape)` is a method of {owners}, found `{source}`",
    "`{elem}` is not packed storage",
    help=("the free function `{fn}(t)` reinterprets rank-1 tiles",),
)
NOT_PACKABLE: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`.{fn}(shape)` is a method of {owners}, found `{source}`",
    "not packable",
    help=("the free function `{fn}(t)` reinterprets rank-1 tiles",),
)
PACKED_VALUE_COUNTS_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "`{source}` holds {values_in} values, but `Tile<{result}, {shape}>` holds {values_out}",
    "{values_out} values",
    notes=("one `{storage}` byte holds {per_byte} values",),
)

# --- reductions and scans (parser.prelude.reduce) ---
IDENTITY_TYPE_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: the identity of `{fn}` must be `{expected}`, found `{found}`",
    "expected `{expected}`",
)
IDENTITY_NOT_CONSTANT: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the identity of `{fn}` must be a compile-time constant",
    "not known at compile time",
    help=("write a literal or a constant such as `0.0f32` or `f32::NEG_INFINITY`",),
)
COMBINER_NOT_TWO_PARAMETERS: Final = Message(
    codes.MISMATCHED_TYPES,
    "`{fn}` combines elements with a closure of two parameters: `|acc, x| ..`",
    "expected a closure `|acc, x| ..`",
)
COMBINER_RESULT_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: the closure of `{fn}` must return `{expected}`, found `{found}`",
    "expected `{expected}`",
)

# --- atomics and globals (parser.prelude.atomics) ---
NOT_A_POINTER_TILE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a `PointerTile<*mut E, S>`, found `{found}`",
    "expected a pointer tile",
)
REDUCE_INTO_READ_ONLY: Final = Message(
    codes.MUTATE_SHARED,
    "`{fn}` writes through a `PartitionMut`, found a read-only `{found}`",
    "expected `&mut PartitionMut<..>`",
)
REDUCED_TILE_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` needs a `{expected}`, found `{found}`",
    "expected `{expected}`",
)
GLOBAL_VALUE_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` of `{glob}` takes a `{expected}`, found `{found}`",
    "expected `{expected}`",
    help=("make a rank-0 tile with `constant(v, const_shape![])`",),
)
ATOMIC_ADD_ON_BOOL: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`atomic_add` needs a numeric `Global`, found `{found}`",
    "a `bool` global",
)

# --- assumptions (parser.prelude.assume) ---
ASSUMED_VALUE_NOT_CONSTANT: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the generic arguments of `{fn}` after `_` are compile-time integers",
    "not a compile-time integer",
    help=("write a literal such as `16` or a const generic",),
)
ASSUME_GENERIC_COUNT: Final = Message(
    codes.GENERIC_ARGUMENT,
    "`{fn}` takes {count} generic arguments: `{fn}::<{spelled}>(x)`",
    "found {found}",
)
ASSUMED_ON_WRONG_TYPE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` applies to {what}, found `{found}`",
    "expected {what}",
)
DIVISOR_NOT_POSITIVE: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the divisor of `{fn}` must be positive, found {found}",
    "not positive",
)
EMPTY_ASSUMED_RANGE: Final = Message(
    codes.GENERIC_ARGUMENT,
    "`{fn}`: the lower bound {lower} exceeds the upper bound {upper}",
    "empty range",
)
SAME_ELEMENTS_RANK_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` applies to a rank-{rank} tile, found `{found}`",
    "expected a rank-{rank} tile",
)
GROUP_NOT_DIVISOR: Final = Message(
    codes.GENERIC_ARGUMENT,
    "`{fn}`: the group size {group} on axis {axis} does not divide the tile's extent {extent}",
    "not a positive divisor",
)

# --- dimensions and bounded partitions (parser.prelude.dims) ---
DIM_SIZE_NOT_I32: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects `i32`, found `{found}`",
    "expected `i32`",
)
NO_INTO_DIM: Final = Message(
    codes.UNKNOWN_METHOD,
    "the method `into_dim` exists for `i32` and `Dim`, not for `{found}`",
    "`IntoDim` is not implemented for this type",
)
COORD_NOT_I32_TUPLE: Final = Message(
    codes.MISMATCHED_TYPES,
    "`coord` takes a tuple of two or three `i32`, found `{found}`",
    "expected `(i32, i32)` or `(i32, i32, i32)`",
)
NO_WITH_BOUNDS: Final = Message(
    codes.UNKNOWN_METHOD,
    "no method named `with_bounds` found for `{found}`",
    "`with_bounds` is defined for rank-2 and rank-3 partitions",
)
BOUNDS_NOT_TILE_COUNTS: Final = Message(
    codes.MISMATCHED_TYPES,
    "`with_bounds` on a rank-{rank} partition takes a tuple of {rank} tile counts "
    "(`Dim` or `i32`), found `{found}`",
    "expected {rank} bounds",
)
BOUNDED_INDEX_NOT_COORD: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: expected `{expected}`, found `{found}`",
    "index a bounded partition with `coord(({placeholders}))`",
)
PARTITION_TILE_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: expected `{expected}`, found `{found}`",
    "the partition's tile is `{expected}`",
)

# --- options, tokens and printing (parser.prelude.tokens) ---
NOT_AN_OPTION: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: the {what} of `{fn}` is an `{expected}`, found `{found}`",
    "expected `None` or `Some({what})`",
)
OPTION_OF_WRONG_TYPE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: the {what} of `{fn}` must be `{expected}`, found `{found}`",
    "expected `Option<{expected}>`",
)
NOT_A_TOKEN: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a `Token`, found `{found}`",
    "expected `Token`",
)
JOIN_NOT_TOKEN_SLICE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `join_tokens` expects `&[Token]`, found `{found}`",
    "expected a slice of tokens: `&[a, b]`",
)
TENSOR_TOKEN_NOT_OF_TENSOR: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `get_tensor_token` expects a `&Tensor<..>`, found `{found}`",
    "expected a tensor",
)
PRINT_FORMAT_NOT_ONE_CONVERSION: Final = Message(
    codes.MISMATCHED_TYPES,
    "the format of `{fn}` must be a string literal with one `%` conversion",
    'expected a format such as "value: %f\\n"',
    notes=("`print_tko` prints one tile, printf-style",),
)
PRINTED_NOT_A_TILE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` prints a `Tile<..>`, found `{found}`",
    "expected a tile",
)

# --- raw tensor and partition views (parser.prelude.raw_views) ---
NOT_A_TENSOR_REFERENCE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a `&Tensor<..>`, found `{found}`",
    "expected a tensor",
)
VIEW_BASE_NOT_ONE_POINTER: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` takes a `PointerTile<*mut E, {{[]}}>` base, found `{found}`",
    "expected one pointer",
    help=("make one with `pointer_to_tile(p)`",),
)
STRIDES_RANK_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "`{fn}`: the shape has rank {shape_rank}, the strides {strides}",
    "one stride per dimension",
)
VIEW_ARGUMENT_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects {what}, found `{found}`",
    "expected {what}",
)
VIEW_OF_OUTPUT_UNORDERED: Final = Message(
    codes.UNSAFE_REQUIRED,
    "`{fn}` of an output reads tiles other blocks may be writing",
    "unordered read of an output",
    help=("read an output through `unsafe {{ make_partition_view_mut(..) }}`",),
)
NOT_A_PARTITION_MUT: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a `&PartitionMut<..>`, found `{found}`",
    "expected a `PartitionMut`",
    help=("read a `Partition` with `load_view_tko`",),
)
VIEW_TYPE_NOT_ANNOTATED: Final = Message(
    codes.TYPE_ANNOTATION_NEEDED,
    "type annotations needed for `{fn}`: the view's layout is in its type",
    "cannot infer the view type",
    help=("annotate the binding: `let v: {view}<..> = {fn}(..);`",),
)

# --- partition views and latency hints (parser.prelude.views) ---
NOT_A_PARTITION: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a `&Partition<..>`, found `{found}`",
    "expected a partition",
    help=("make one with `x.partition(const_shape![..])`",),
)
VIEW_LOAD_OF_OUTPUT_RACES: Final = Message(
    codes.UNSAFE_REQUIRED,
    "`{fn}` on a `PartitionMut` may race with other tile blocks",
    "unordered read of an output",
    help=("keep the value you stored in a local instead",),
)
LATENCY_NOT_CONSTANT: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the latency of `{fn}` must be a compile-time integer",
    "not a compile-time integer",
    help=("write a literal such as `3` or a const generic",),
)
LATENCY_NOT_AN_INTEGER: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the latency of `{fn}` must be a compile-time integer",
    "found `{found}`",
    help=("write a literal such as `3` or a const generic",),
)
LATENCY_OUT_OF_RANGE: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the latency of `{fn}` must be in 1..=10, found {found}",
    "out of range",
    notes=("tileiras rejects latency hints outside 1..=10",),
    help=("{no_hint}",),
)
LATENCY_NOT_AN_OPTION: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: the latency of `{fn}` is an `Option<i32>`",
    "expected `None` or `Some(latency)`",
)
LATENCY_GENERIC_COUNT: Final = Message(
    codes.GENERIC_ARGUMENT,
    "`{fn}` takes one generic argument, the latency: `{fn}::<3>(..)`",
    "found {found}",
)
NOT_A_SHAPE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `get_shape_dim` expects a shape, found `{found}`",
    "expected `Shape<{{[..]}}>`",
    help=("use `x.shape()`",),
)
SHAPE_DIM_OUT_OF_RANGE: Final = Message(
    codes.MISMATCHED_TYPES,
    "dimension {axis} is out of range for `{shape}` (rank {rank})",
    "out of range",
)

# --- shapes: constant, reshape, permute, extract, cat, iota (parser.prelude.shape) ---
CONSTANT_NOT_SCALAR: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `constant` fills a tile with one scalar value, found `{found}`",
    "expected a scalar",
    help=("to reshape or broadcast a tile use `.reshape(..)` / `.broadcast(..)`",),
)
CONSTANT_NOT_KNOWN: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the value of `constant` must be a compile-time constant",
    "not known at compile time",
    notes=("`constant` becomes a dense constant in the kernel's code",),
    help=("fill a tile with a run-time value: `{value}.broadcast({shape})`",),
)
RESHAPE_COUNT_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "cannot reshape `{source}` ({have} elements) to shape {shape} ({want} elements)",
    "{want} elements",
    notes=("`reshape` keeps the number of elements",),
)
PERMUTATION_NOT_AN_ARRAY: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the permutation of `{fn}` must be a compile-time array",
    "found `{found}`",
    help=("write it inline: `const_array![1, 0]`",),
)
PERMUTATION_NOT_CONSTANT: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the permutation of `{fn}` must be a compile-time array",
    "not known at compile time",
    help=("write it inline: `const_array![1, 0]`",),
)
NOT_A_PERMUTATION: Final = Message(
    codes.MISMATCHED_TYPES,
    "`{value}` is not a permutation of the {rank} dimensions of the tile",
    "expected each of 0..{last} exactly once",
)
TRANSPOSE_NEEDS_RANK_TWO: Final = Message(
    codes.MISMATCHED_TYPES,
    "`transpose` needs a rank-2 tile, found `{found}`",
    "rank {rank}",
    help=("reorder other ranks with `permute(t, const_array![..])`",),
)
EXTRACT_INDICES_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: expected `[Tile<i32, {{[]}}>; {rank}]` (one slice index per dimension), "
    "found `{found}`",
    "expected {rank} rank-0 `i32` tiles",
    help=("make a rank-0 tile with `scalar_to_tile(0i32)`",),
)
EXTRACT_SHAPE_NOT_ANNOTATED: Final = Message(
    codes.TYPE_ANNOTATION_NEEDED,
    "type annotations needed: cannot infer the shape `extract` returns",
    "cannot infer the result shape",
    help=("annotate the binding: `let part: Tile<E, {{[..]}}> = extract(..);`",),
)
EXTRACT_NOT_DIVIDING: Final = Message(
    codes.MISMATCHED_TYPES,
    "cannot extract `{wanted}` from `{source}`: each dimension must divide the source's",
    "expected `{expected}`",
)
CAT_DIM_OUT_OF_RANGE: Final = Message(
    codes.MISMATCHED_TYPES,
    "cannot concatenate: dimension {dim} is out of range for rank {rank}",
    "here",
    notes=("`cat` joins two tiles of one element type along `dim`",),
)
CAT_SHAPES_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "cannot concatenate: `{lhs}` and `{rhs}` differ outside dimension {dim}",
    "here",
    notes=("`cat` joins two tiles of one element type along `dim`",),
)
IOTA_UNSUPPORTED_RESULT: Final = Message(
    codes.MISMATCHED_TYPES,
    "`iota` makes a rank-1 integer tile; cannot make `{result}`",
    "unsupported result",
    help=("e.g. `let i: Tile<i32, {{[128]}}> = iota(const_shape![128]);`",),
)
NOT_RANK_ZERO: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: expected `Tile<{elem}, {{[]}}>`, found `{found}`",
    "expected a rank-0 tile",
    help=("reshape it first: `{text}.reshape(const_shape![])`",),
)
NOT_AN_INDEX_ARRAY: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `permute_array` expects an `[i32; N]`, found `{found}`",
    "expected an index array",
)

# --- the prelude's shared argument rules (parser.prelude.common) ---
NOT_A_TILE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a `Tile<..>`, found `{found}`",
    "expected a tile",
)
SCALAR_NOT_A_TILE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a `Tile<..>`, found `{found}`",
    "expected a tile",
    help=("make it a rank-0 tile: `scalar_to_tile({text})`",),
)
NOT_A_SCALAR: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a scalar, found `{found}`",
    "expected a scalar",
)
RANK_ZERO_TILE_NOT_A_SCALAR: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a scalar, found `{found}`",
    "expected a scalar",
    help=("use `tile_to_scalar(t)` on a rank-0 tile",),
)
TILE_NOT_A_SCALAR: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a scalar, found `{found}`",
    "expected a scalar",
    help=("for tiles use `{fn}_tile`",),
)
OPERAND_TYPES_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` needs operands of the same type, found `{expected}` and `{found}`",
    "expected `{expected}`, found `{found}`",
    notes=("cuTile has no implicit broadcasting or conversion",),
    help=("broadcast with `.broadcast(shape)` or convert with `convert_tile`",),
)
OPERAND_SHAPES_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` needs operands of the same type, "
    "shapes differ: {expected_shape} and {found_shape}",
    "expected `{expected}`, found `{found}`",
    notes=("cuTile has no implicit broadcasting or conversion",),
    help=("broadcast with `.broadcast(shape)` or convert with `convert_tile`",),
)
WRONG_ELEMENT_KIND: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`{fn}` needs {noun} elements, found `{found}`",
    "`{elem}` is not {article} {noun} type",
)
NOT_A_MARKER: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a `{kind}::Mode` marker, found `{found}`",
    "expected a `{kind}` marker",
    help=("one of {markers}",),
)
UNSUPPORTED_MARKER: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`{fn}` does not support `{found}`{why}",
    "unsupported mode",
    help=("use one of {markers}",),
)
FTZ_NEEDS_F32: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`ftz::Enabled` is only supported for `f32`, found `{elem}` elements",
    "flush-to-zero needs f32",
    help=("use `ftz::Disabled`",),
)
ARGUMENT_NOT_CONSTANT: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the {what} of `{fn}` must be a compile-time integer",
    "not a compile-time integer",
    help=("write an integer literal such as `1i32`",),
)
ARGUMENT_NOT_AN_INTEGER: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the {what} of `{fn}` must be a compile-time integer",
    "found `{found}`",
    help=("write an integer literal such as `1i32`",),
)
DIM_OUT_OF_RANGE: Final = Message(
    codes.MISMATCHED_TYPES,
    "dimension {dim} is out of range for `{source}` (rank {rank})",
    "out of range",
    notes=("valid dimensions are 0..{last}",),
)
DIM_OF_RANK_ZERO: Final = Message(
    codes.MISMATCHED_TYPES,
    "dimension {dim} is out of range for `{source}` (rank {rank})",
    "out of range",
    notes=("a rank-0 tile has no dimension to reduce",),
)
SHAPE_ARGUMENT_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a shape, found `{found}`",
    "expected `Shape<{{[..]}}>`",
    help=("use `const_shape![..]` or `t.shape()`",),
)
TILE_DIM_NOT_POWER_OF_TWO: Final = Message(
    codes.TILE_NOT_POWER_OF_TWO,
    "tile dimension {dim} of {what} is not a positive power of two",
    "tile shape {shape}",
    notes=("Tile IR tiles have power-of-two extents",),
)
RESULT_ELEMENT_NOT_ANNOTATED: Final = Message(
    codes.TYPE_ANNOTATION_NEEDED,
    "type annotations needed for `{fn}`: cannot infer {what}",
    "cannot infer the result type",
    help=("annotate the binding: `let y: Tile<f16, {{[..]}}> = {fn}(..);`",),
)

# --- matrix multiply-accumulate (parser.prelude.mma) ---
_MMA_SHAPES = "`mma` computes `lhs x rhs + acc` with lhs `[M, K]`, rhs `[K, N]`, acc `[M, N]`"
_MMA_ELEMENTS = (
    "Tile IR mma: f16, f8e4m3fn, f8e5m2 -> f16/f32; bf16/tf32/f32 -> f32; f64 -> f64; "
    "i8/u8 -> i32 (block-scaled fp8/fp4: `mmaf_scaled`)"
)
_SCALED_ELEMENTS = (
    "Tile IR mmaf_scaled: f8e4m3fn/f8e5m2 with f8e8m0fnu scales per 32 K elements; f4e2m1fn "
    "with f8e8m0fnu scales per 16 or 32, or f8e4m3fn scales per 16; an f32 accumulator"
)
MMA_RANK_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "`{fn}` needs operands of rank 2 (`[M, K] x [K, N] + [M, N]`) or 3 (batched), "
    "found ranks {lhs}, {rhs} and {acc}",
    "rank mismatch",
    notes=(_MMA_SHAPES,),
)
MMA_BATCH_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "`{fn}` needs one batch size, found {lhs}, {rhs} and {acc}",
    "batch sizes differ",
    notes=(_MMA_SHAPES,),
)
MMA_INNER_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched inner dimensions in `{fn}`: lhs {lhs} has K = {k} but rhs {rhs} has K = {k2}",
    "K = {k2}",
    notes=(_MMA_SHAPES,),
)
MMA_ACCUMULATOR_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched accumulator in `{fn}`: {lhs} x {rhs} needs an accumulator of shape {want}, "
    "found {found}",
    "expected shape {want}",
    notes=(_MMA_SHAPES,),
)
MMA_OPERAND_ELEMENTS_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` needs lhs and rhs of one element type, found `{lhs}` and `{rhs}`",
    "expected `{lhs}` elements",
    help=("convert one side with `convert_tile`",),
)
MMA_ACCUMULATOR_ELEMENT: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`{fn}` with `{elem}` operands needs a {want} accumulator, found `{found}`",
    "unsupported element types",
    notes=(_MMA_ELEMENTS,),
)
MMA_OPERAND_ELEMENT: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`{fn}` does not support `{elem}` operands",
    "unsupported element types",
    notes=(_MMA_ELEMENTS,),
)
SCALED_OPERANDS_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `mmaf_scaled` needs one element type for both operands, "
    "found `{expected}` and `{found}`",
    "expected `{expected}`",
    notes=(_SCALED_ELEMENTS,),
)
SCALES_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `mmaf_scaled` needs one element type for both scales, "
    "found `{expected}` and `{found}`",
    "expected `{expected}`",
    notes=(_SCALED_ELEMENTS,),
)
SCALED_ACCUMULATOR_NOT_F32: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`mmaf_scaled` accumulates in `f32`, found `{found}`",
    "expected `f32`",
    notes=(_SCALED_ELEMENTS,),
)
SCALED_ELEMENTS_UNSUPPORTED: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "`mmaf_scaled` does not scale `{elem}` operands by `{scale}`",
    "unsupported element types",
    notes=(_SCALED_ELEMENTS,),
)
SCALE_SHAPES_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched scales in `mmaf_scaled`: operands {lhs} x {rhs} with {groups} scale groups "
    "along K need scales {want_lhs} and {want_rhs}, found {found}",
    "expected shape {want}",
    notes=(_SCALED_ELEMENTS,),
)
SCALE_GROUPS_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "`mmaf_scaled` scales `{elem}` in blocks of {sizes} K elements, but K = {k} "
    "with {groups} scale groups",
    "K / {sizes} scale groups expected",
    notes=(_SCALED_ELEMENTS,),
)

# --- pointer tiles: casts, offsets, loads and stores (parser.prelude.pointers) ---
RAW_POINTER_NOT_A_POINTER_TILE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` expects a `PointerTile<*mut E, S>`, found `{found}`",
    "expected a pointer tile",
    help=("make one with `pointer_to_tile(p)`",),
)
NOT_A_RAW_POINTER: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `pointer_to_tile` expects a raw pointer, found `{found}`",
    "expected `*mut E`",
)
POINTER_TILE_NOT_RANK_ZERO: Final = Message(
    codes.MISMATCHED_TYPES,
    "`tile_to_pointer` needs a rank-0 pointer tile, found `{found}`",
    "not rank 0",
)
POINTER_OFFSET_SHAPES_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "`{fn}`: the pointer tile has shape {pointers}, the offsets {offsets}",
    "shapes differ",
    notes=("a rank-0 pointer tile is broadcast to the offsets' shape",),
)
OFFSETS_NOT_I32_TILE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `offset_tile` expects a `Tile<i32, S>`, found `{found}`",
    "expected i32 element offsets",
)
OFFSET_NOT_I32: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `offset` expects an `i32` element offset, found `{found}`",
    "expected `i32`",
    help=("offset by a tile with `offset_tile`",),
)
POINTER_BROADCAST_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "cannot broadcast `{pointers}` to shape {shape}",
    "incompatible shapes",
    notes=("broadcast keeps the rank and expands dimensions of size 1",),
)
POINTER_RESHAPE_COUNT_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "cannot reshape `{pointers}` ({have} elements) to shape {shape} ({want} elements)",
    "{want} elements",
    notes=("`reshape` keeps the number of elements",),
)
POINTEE_NOT_ANNOTATED: Final = Message(
    codes.TYPE_ANNOTATION_NEEDED,
    "type annotations needed for `{fn}`: cannot infer the pointee type",
    "cannot infer the pointer type",
    help=("annotate the binding: `let p: PointerTile<*mut f32, S> = {fn}(..);`",),
)
ADDRESSES_NOT_I64: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` converts `i64` addresses, found `{found}`",
    "expected a `Tile<i64, S>`",
    help=("widen the addresses with `exti` first",),
)
SCOPE_NOT_AN_OPTION: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: the scope of `{fn}` is an `Option<scope::Mode>`, found `{found}`",
    "expected `Some(scope::Device)` or `None`",
)
ORDERING_NEEDS_SCOPE: Final = Message(
    codes.MISMATCHED_TYPES,
    "`{fn}` with `ordering::{ordering}` needs a memory scope",
    "no scope",
    notes=("only a weak access leaves the scope out",),
    help=("pass `Some(scope::Device)` (or `TileBlock`, `System`)",),
)
NOT_A_LATENCY: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: the latency of `{fn}` is a `Latency::<N>`, found `{found}`",
    "expected `Latency::<N>`",
    help=("`Latency::<0>` gives no hint",),
)
WRITE_THROUGH_CONST: Final = Message(
    codes.MUTATE_SHARED,
    "cannot write through `{pointers}` with `{fn}`: it points to `const` data",
    "pointers to `const` data are read-only",
    help=("declare the entry parameter `*mut`",),
)
STORED_VALUES_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{fn}` needs a `{expected}` for `{pointers}`, found `{found}`",
    "expected `{expected}`",
)
PADDING_WITHOUT_MASK: Final = Message(
    codes.MISMATCHED_TYPES,
    "`{fn}`: a padding value needs a mask",
    "padding without a mask",
    notes=("the padding is what masked-off lanes read",),
    help=("pass `None` as the padding, or a mask with `Some(mask)`",),
)

# --- tensors, partitions and tile stores (parser.prelude.tensors) ---
NOT_A_TENSOR_FOR: Final = Message(
    codes.MISMATCHED_TYPES,
    "expected a tensor for {what}, found `{found}`",
    "expected `&Tensor<..>`",
)
WRITE_THROUGH_SHARED_TENSOR: Final = Message(
    codes.MUTATE_SHARED,
    "cannot {action} `{name}`, as it is behind a `&` reference",
    "`{name}` is a `&` reference, so it cannot be written",
    notes=(
        "shared `&Tensor` inputs are read-only; only partitioned `&mut Tensor` outputs are "
        "written, one disjoint tile per block",
    ),
    help=("declare `{name}` as `&mut Tensor<{elem}, {{[..]}}>` to make it a partitioned output",),
)
OUTPUT_TILE_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: expected `{expected}`, found `{found}`",
    "the output's tile is `{expected}`",
)
TILE_ID_NOT_I32: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: expected `{expected}`, found `{found}`",
    "a tile id or a tile count",
)
LOAD_LIKE_RANKS_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "`load_tile_like` needs tensors of the same rank, found rank {source} and rank {like}",
    "rank mismatch",
)
LOAD_LIKE_NOT_OUTPUT: Final = Message(
    codes.MISMATCHED_TYPES,
    "the second argument of `load_tile_like` must be a partitioned `&mut Tensor` output",
    "found `{found}`",
    notes=("its tile shape is the shape loaded",),
)
OUTPUT_TILE_DYNAMIC: Final = Message(
    codes.OUTPUT_SHAPE_DYNAMIC,
    "the tile shape of output `{name}` is only known at launch",
    "tile shape [{shape}]",
    notes=("a tile has a static shape: write this output through `partition_mut`",),
)
TILE_BROADCAST_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "cannot broadcast `{source}` to shape {shape}",
    "incompatible shapes",
    notes=("broadcast keeps the rank and expands dimensions of size 1",),
)
CANNOT_BROADCAST_VALUE: Final = Message(
    codes.MISMATCHED_TYPES,
    "cannot broadcast a value of type `{found}`",
    "expected a scalar or a tile",
)
PARTITION_OF_OUTPUT: Final = Message(
    codes.UNSUPPORTED_SYNTAX,
    "`partition` of a `&mut Tensor` output is not supported yet",
    "an output",
    help=("write the output through `partition_mut`",),
)
DIM_MAP_NOT_PERMUTATION: Final = Message(
    codes.MISMATCHED_TYPES,
    "the dim map must be a compile-time permutation of 0..{rank}, found `{found}`",
    "expected `const_array![..]` of {rank} distinct axes",
)
TILE_SHAPE_RANK_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "a rank-{rank} tensor needs a rank-{rank} tile shape, found rank {got}",
    "rank {got}",
)
EXPECTED_PARTITION: Final = Message(
    codes.MISMATCHED_TYPES, "expected a partition, found `{found}`", "expected a `Partition`"
)
TILE_INDEX_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: expected a tile index `{expected}`, found `{found}`",
    "expected {rank} i32 coordinates",
)
STORE_THROUGH_READ_ONLY: Final = Message(
    codes.MUTATE_SHARED,
    "cannot store through a read-only `Partition`",
    "created by `partition`",
    help=("outputs are written through `partition_mut`",),
)
SLAB_INDEX_NEGATIVE: Final = Message(
    codes.PARTITION_OUT_OF_BOUNDS,
    "index {index} on axis {axis} is outside this block's tiles",
    "a negative index",
    notes=("a block may only write the tiles of its own output slab",),
)
SLAB_INDEX_OUTSIDE: Final = Message(
    codes.PARTITION_OUT_OF_BOUNDS,
    "index {index} on axis {axis} is outside this block's {limit} tiles",
    "valid indices are 0..{limit}",
    notes=("a block may only write the tiles of its own output slab",),
)
MAPPED_STORE_INDEX_FOREIGN: Final = Message(
    codes.PARTITION_INDEX_PROVENANCE,
    "`MappedPartitionMut::store` index was produced by a different mapped partition",
    "not minted by this partition",
    notes=("minted indices are disjoint across tile blocks, which makes the store race-free",),
    help=("mint indices valid for both with `z.iter_indices_with(&w)`",),
)
MAPPED_STORE_INDEX_NOT_MINTED: Final = Message(
    codes.PARTITION_INDEX_PROVENANCE,
    "`MappedPartitionMut::store` requires an index produced by this partition's "
    "`iter_indices()` iterator or built with `coord(..)`",
    "not minted by this partition",
    notes=("minted indices are disjoint across tile blocks, which makes the store race-free",),
)
NO_INDEX_METHOD: Final = Message(
    codes.UNKNOWN_METHOD,
    "no method named `index` found for `{found}`",
    "defined for rank-2 mapped partitions",
)
SWIZZLE_GENERICS: Final = Message(
    codes.GENERIC_ARGUMENT,
    "`swizzle_partition_index_2d` takes the tile shape and a rank-2 map of group sizes: "
    "`::<{{ [BM, BN] }}, MAP>`",
    "expected two generic arguments",
)
ITER_INDICES_OUTSIDE_FOR: Final = Message(
    codes.UNSUPPORTED_SYNTAX,
    "`{name}()` is only supported as the iterator of a `for` loop",
    "use `for idx in z.{name}(..) {{ .. }}`",
)
AXIS_NOT_CONSTANT: Final = Message(
    codes.GENERIC_ARGUMENT, "the axis must be a constant in 0..{rank}", "not a valid axis"
)

# --- shared by the type checker's rule families (parser.check_messages) ---
UNSUPPORTED: Final = Message(
    codes.UNSUPPORTED_SYNTAX, "{what} is not supported yet", "not supported here"
)
STORAGE_ONLY: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "{what} does not apply to `{elem}` values: `{elem}` is a storage type",
    "`{elem}` has no arithmetic",
    notes=(
        "tf32, fp8, fp4 and i4 elements are loaded, stored, reshaped, converted and fed "
        "to `mma`; Tile IR computes on them only there",
    ),
    help=("convert to `f32` (or `f16`) first with `convert_tile`",),
)
UNRESOLVED: Final = Message(
    codes.UNRESOLVED_NAME, "cannot find {kind} `{name}` in this scope", "not found in this scope"
)
MISMATCHED_TYPES: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: expected `{expected}`, found `{found}`",
    "expected `{expected}`",
)

# --- parsing: syntax errors, parse budgets, unsupported syntax, literals (parser.cst_to_ast) ---
TOO_COSTLY_TO_PARSE: Final = Message(
    codes.LIMIT_EXCEEDED,
    "this text is too costly to parse",
    "the parser gave up here",
    notes=(
        "the parser may take {base_steps} steps plus one per {bytes_per_step} bytes; "
        "recovering from the syntax errors before this point takes more",
    ),
    help=("fix the syntax errors before this point",),
)
PARSE_TOO_SLOW: Final = Message(
    codes.PARSE_TIME_LIMIT,
    "parsing took longer than the limit of {limit_ms} ms",
    "this file did not parse in time",
)
SYNTAX_NESTS_TOO_DEEP: Final = Message(
    codes.LIMIT_EXCEEDED,
    "this code nests deeper than {limit} levels",
    "nested too deeply",
    notes=("each syntax-tree level counts: a block, a statement, a call and its arguments",),
    help=("split the expression with `let`s",),
)
EXPECTED_TOKEN: Final = Message(codes.SYNTAX_ERROR, "expected `{token}`", "expected here")
EXPECTED_SEMICOLON: Final = Message(
    codes.SYNTAX_ERROR, "expected `;`, found `{token}`", "expected `;` here"
)
UNEXPECTED_TOKEN: Final = Message(codes.SYNTAX_ERROR, "unexpected `{token}`", "not valid here")
NOT_SUPPORTED_IN_KERNELS: Final = Message(
    codes.UNSUPPORTED_SYNTAX, "{what} is not supported in cuTile kernels", "not supported here"
)
ENTRY_OPTION_NOT_KEY_VALUE: Final = Message(
    codes.INVALID_ENTRY_OPTION, "expected `key = value` in the entry options", "not an option"
)
MACRO_ARGUMENTS_UNPARSABLE: Final = Message(
    codes.SYNTAX_ERROR,
    "cannot parse the arguments of this macro or attribute",
    "expected comma-separated expressions",
)
INTEGER_LITERAL_TOO_LARGE: Final = Message(
    codes.LITERAL_OUT_OF_RANGE,
    "integer literal is too large",
    "too large for any integer type",
    notes=("value exceeds limit of `{limit}`",),
)
INVALID_FLOAT_SUFFIX: Final = Message(
    codes.SYNTAX_ERROR,
    "invalid suffix `{suffix}` for float literal",
    "invalid suffix `{suffix}`",
    help=("valid suffixes are `f16`, `f32` and `f64`",),
)

# --- sources and entries (parser.bracket_scan, parser.program, parser.inline_budget) ---
NESTED_TOO_DEEP: Final = Message(
    codes.LIMIT_EXCEEDED,
    "this code nests deeper than {limit} levels of brackets",
    "one level too deep",
    notes=("`{{`, `[`, `(` and one pending `<` per bracket each count as a level",),
    help=("split the expression with `let`s",),
)
UNTERMINATED_STRING: Final = Message(
    codes.SYNTAX_ERROR, "unterminated double quote string", "unterminated string"
)
UNTERMINATED_RAW_STRING: Final = Message(
    codes.SYNTAX_ERROR, "unterminated raw string", "unterminated raw string"
)
UNTERMINATED_BLOCK_COMMENT: Final = Message(
    codes.SYNTAX_ERROR, "unterminated block comment", "unterminated block comment"
)
NO_KERNEL_MODULE: Final = Message(
    codes.NO_KERNEL_MODULE,
    "`{file}` contains no `#[cutile::module]` module",
    help=("put kernels in `#[cutile::module] mod name {{ ... }}`",),
)
AMBIGUOUS_ENTRY: Final = Message(
    codes.AMBIGUOUS_ENTRY,
    "entry name `{requested}` is ambiguous: {names}",
    "also defined here",
    help=("qualify the entry with its module: `module::name`",),
)
UNKNOWN_ENTRY: Final = Message(
    codes.UNKNOWN_ENTRY,
    "no entry function named `{requested}`",
    notes=("entries in this request: {available}",),
)
DEVICE_FUNCTION_NOT_ENTRY: Final = Message(
    codes.UNKNOWN_ENTRY,
    "no entry function named `{requested}`",
    "not an entry",
    notes=("`{device}` is a device function, not an entry", "entries in this request: {available}"),
    help=("mark the function with `#[cutile::entry()]`",),
)
CALLS_NEST_TOO_DEEP: Final = Message(
    codes.INLINE_LIMIT,
    "device-function calls nest deeper than {limit} levels",
    "`{callee}` would be level {level}",
    notes=("{chain}", "every device-function call is inlined"),
    help=("merge some of these functions, or call them one after another",),
)
INLINING_OVER_BUDGET: Final = Message(
    codes.INLINE_LIMIT,
    "inlining `{callee}` here passes the inlining budget of this kernel",
    "more than {limit} syntax nodes inlined by this call",
    notes=(
        "{chain}",
        "every device-function call is inlined: a function that calls another twice "
        "doubles the code at each level",
    ),
    help=("call the function once and reuse its result, or restructure into a loop",),
)

# --- module statics (parser.statics) ---
MUTABLE_STATIC: Final = Message(
    codes.UNSUPPORTED_SYNTAX,
    "`static mut {name}` is not supported",
    "a mutable static",
    notes=("a `Global` is written through its ordered `store`/`atomic_add`",),
    help=("drop the `mut`",),
)
STATIC_NOT_SCALAR_GLOBAL: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "only `static NAME: Global<E, {{ [] }}>` items are supported; "
    "`static {name}: {written}` is not one",
    "{why}",
    notes=(
        "a `static` in a kernel module is a scalar in device global memory, read and "
        "written through `load`, `store` and `atomic_add`",
    ),
    help=("use `const` for a compile-time constant",),
)
STATIC_INITIALIZER_NOT_CONSTANT: Final = Message(
    codes.MISMATCHED_TYPES,
    "the initializer of `{name}` must be `Global::new(v)` with `v` a `{elem}` "
    "literal or module `const`",
    "not a constant initializer",
)

# --- entry parameters, their roles and the entry's options (parser.entry_signature) ---
ENTRY_RETURNS_A_VALUE: Final = Message(
    codes.INVALID_PARAMETER,
    "kernel entry functions cannot return a value",
    "remove the return type",
    help=("write results into a `&mut Tensor` output",),
)
POINTER_PARAMETER_NOT_UNSAFE: Final = Message(
    codes.UNSAFE_REQUIRED,
    "raw pointer parameter `{name}` requires an `unsafe fn` entry",
    "raw pointer parameter",
    notes=(
        "accesses through a raw pointer are not bounds-checked, so the caller "
        "must promise they stay inside the memory it passes",
    ),
    help=("declare the entry `unsafe fn {function}`",),
)
PARTITIONED_OUTPUT_OF_PERSISTENT_KERNEL: Final = Message(
    codes.INVALID_PARAMETER,
    "`{name}` cannot be a partitioned output of a persistent kernel",
    "partitioned `&mut Tensor` output",
    notes=(
        "a persistent kernel's grid is chosen by the host, so it cannot cover a "
        "partitioned output's tiles one block each",
    ),
    help=("make it a `MappedPartitionMut` too and store with the same indices",),
)
UNSUPPORTED_PARAMETER_TYPE: Final = Message(
    codes.INVALID_PARAMETER,
    "`{written}` is not a supported entry parameter type",
    "unsupported parameter",
    notes=(
        "entry parameters are `&mut Tensor<E, S>` outputs, `&Tensor<E, S>` inputs, "
        "scalars or (in an `unsafe fn`) raw pointers `*mut E`",
    ),
)
SUB_BYTE_FLOAT_PARAMETER: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "entry parameter `{name}` has `{elem}` elements (narrower than a byte)",
    "`{elem}` is {bits} bits wide",
    notes=("`{elem}` values exist only inside kernels, made by `unpack`",),
    help=("pass packed bytes (`f4e2m1fnx2` or `u8`) and `unpack` them in the kernel",),
)
SUB_BYTE_INTEGER_PARAMETER: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "entry parameter `{name}` has `{elem}` elements (narrower than a byte)",
    "`{elem}` is {bits} bits wide",
    notes=("`{elem}` values exist only inside kernels, made by `unpack`",),
    help=("pass bytes (`u8`) and `unpack` them in the kernel",),
)
MAPPED_TILE_SHAPE_DYNAMIC: Final = Message(
    codes.OUTPUT_SHAPE_DYNAMIC,
    "the tile shape of mapped output `{name}` must be static",
    "tile shape [{shape}]",
    notes=("its stores write whole tiles, which have static shapes",),
)
MAP_RANK_MISMATCH: Final = Message(
    codes.OUTPUT_RANK,
    "mapped output `{name}`: needs a rank-{rank} map shape",
    "map shape {map_shape}",
    notes=("the map has one entry per axis of the tile",),
)
MAP_AXIS_NEGATIVE: Final = Message(
    codes.GENERIC_ARGUMENT,
    "mapped output `{name}`: map axis {axis} is {group}, not OWNED (0) or positive",
    "map shape {map_shape}",
    notes=("0 marks an OWNED axis (each work item spans all of it), n > 0 a group size",),
)
MAP_WITHOUT_STREAMED_AXIS: Final = Message(
    codes.GENERIC_ARGUMENT,
    "mapped output `{name}`: the map needs at least one streamed (non-OWNED) axis",
    "map shape {map_shape}",
    notes=("0 marks an OWNED axis (each work item spans all of it), n > 0 a group size",),
)
MAP_LEADING_AXIS_NOT_ONE: Final = Message(
    codes.GENERIC_ARGUMENT,
    "mapped output `{name}`: leading map axis {axis} must be 1, got {group}",
    "map shape {map_shape}",
    notes=("the schedule groups only the trailing two streamed axes",),
)
MAP_SINGLE_STREAM_NOT_ONE: Final = Message(
    codes.GENERIC_ARGUMENT,
    "mapped output `{name}`: a rank-1 stream's map must be [1], got [{group}]",
    "map shape {map_shape}",
    notes=("the schedule groups only the trailing two streamed axes",),
)
OUTPUT_RANK_OUT_OF_RANGE: Final = Message(
    codes.OUTPUT_RANK,
    "partitioned output `{name}` has rank {rank}",
    "rank {rank} output",
    notes=("an output is partitioned over the 3-D launch grid, so its rank must be 1, 2 or 3",),
    help=("reshape the output on the host, or write it through an `unsafe` view",),
)
OUTPUT_TILE_DIM_NOT_POSITIVE: Final = Message(
    codes.TILE_NOT_POWER_OF_TWO,
    "tile dimension {dim} of output `{name}` is not positive",
    "tile shape [{shape}]",
    notes=("for `&mut Tensor<E, S>`, `S` is the tile each block writes",),
)
DECLARED_TILE_NOT_POWER_OF_TWO: Final = Message(
    codes.TILE_NOT_POWER_OF_TWO,
    "tile dimension {dim} of {what} is not a positive power of two",
    "tile shape [{shape}]",
    notes=(
        "Tile IR tiles have power-of-two extents; the tensor itself may have any "
        "size (the last tile is masked)",
    ),
)
INPUT_EXTENT_NOT_POSITIVE: Final = Message(
    codes.GENERIC_ARGUMENT,
    "input `{name}` declares extent {extent}",
    "invalid extent",
    notes=("extents are positive, or -1 for a dynamic extent",),
)
ENTRY_OPTION_TWICE: Final = Message(
    codes.INVALID_ENTRY_OPTION, "entry option `{key}` is given twice", "repeated option"
)
UNKNOWN_ENTRY_OPTION: Final = Message(
    codes.INVALID_ENTRY_OPTION,
    "unknown entry option `{key}`",
    "unknown option",
    notes=("known options: {known}",),
)
ENTRY_OPTION_WITHOUT_VALUE: Final = Message(
    codes.INVALID_ENTRY_OPTION,
    "entry option `{key}` needs a value",
    "bare flag",
    help=("write `{key} = true`",),
)
UNCHECKED_ACCESSES_NOT_UNSAFE: Final = Message(
    codes.INVALID_ENTRY_OPTION,
    "`unchecked_accesses = true` requires an `unsafe fn` entry",
    "declare this function `unsafe fn`",
)
ENTRY_OPTION_NOT_BOOL: Final = Message(
    codes.INVALID_ENTRY_OPTION,
    "entry option `{key}` takes `true` or `false`",
    "expected a bool",
)

# --- entry options: preconditions (parser.preconditions) ---
PRECONDITION_NEVER_HOLDS: Final = Message(
    codes.INVALID_ENTRY_OPTION, "precondition can never be assumed", "{problem}"
)
UNSUPPORTED_PRECONDITION: Final = Message(
    codes.INVALID_ENTRY_OPTION,
    "unsupported precondition",
    "expected `dim(a, i) == dim(b, j)`, `dim(t, k) % d == 0` or `stride(t, k) % d == 0`",
    notes=(
        "a, b, t are tensor parameters, i, j, k axes within their rank and d a "
        "positive integer literal",
    ),
)

# --- entry options: optimization hints (parser.optimization_hints) ---
ARCH_HINTS_TWICE: Final = Message(
    codes.INVALID_ENTRY_OPTION,
    "optimization hints for `{arch}` are given twice",
    "repeated architecture",
)
MALFORMED_ARCH_HINTS: Final = Message(
    codes.INVALID_ENTRY_OPTION,
    "malformed optimization hints",
    "expected `sm_NN = (key = value, ...)`",
    help=("write e.g. `optimization_hints = (sm_90 = (occupancy = 2))`",),
)
UNKNOWN_HINT_ARCH: Final = Message(
    codes.INVALID_ENTRY_OPTION,
    "unknown architecture `{arch}` in the optimization hints",
    "unknown architecture",
    notes=("known architectures: {known}",),
)
MALFORMED_HINT: Final = Message(
    codes.INVALID_ENTRY_OPTION, "malformed optimization hint", "expected `key = value`"
)
PER_LOAD_HINT: Final = Message(
    codes.INVALID_ENTRY_OPTION,
    "`{key}` is a per-load hint, not an entry hint",
    "use `load_pipelined::<L>` or `load_view_tko` for it",
)
UNKNOWN_HINT: Final = Message(
    codes.INVALID_ENTRY_OPTION, "unknown optimization hint `{key}`", "known: {known}"
)
HINT_TWICE: Final = Message(
    codes.INVALID_ENTRY_OPTION, "optimization hint `{key}` is given twice", "repeated hint"
)
HINT_NOT_CONSTANT: Final = Message(
    codes.INVALID_ENTRY_OPTION,
    "`{arch}.{key}` must be a compile-time integer",
    "expected an integer literal or const generic",
)
HINT_OUT_OF_RANGE: Final = Message(
    codes.INVALID_ENTRY_OPTION,
    "`{arch}.{key}` {problem}, found {value}",
    "out of range",
    notes=("tileiras rejects this hint",),
)

# --- element types the arch lacks (parser.checks.arch_elements) ---
ARCH_LACKS_ELEMENT: Final = Message(
    codes.ARCH_UNSUPPORTED,
    "`{elem}` needs sm_{needed} or newer, but the target is {arch}",
    "`{elem}` values on {arch}",
    notes=(
        "tileiras has fp8 (`f8e4m3fn`, `f8e5m2`) from sm_89 on, and the block "
        "scale type `f8e8m0fnu` and fp4 `f4e2m1fn` (so `mmaf_scaled`) from "
        "sm_100 on",
    ),
    help=("compile for sm_{needed} or newer",),
)

# --- ownership, borrows and `unsafe` (parser.checks.ownership) ---
MUTABLE_BORROW_BEHIND_SHARED_REFERENCE: Final = Message(
    codes.MUTATE_SHARED,
    "cannot borrow `*{name}` as mutable, as it is behind a `&` reference",
    "`{name}` is a `&` reference, so the data it refers to cannot be borrowed as mutable",
    help=("consider changing this to be a mutable reference: `&mut Tensor<..>`",),
)
UNSAFE_CALL_OUTSIDE_UNSAFE: Final = Message(
    codes.UNSAFE_REQUIRED,
    "call to unsafe function `{function}` is unsafe and requires unsafe block",
    "call to unsafe function",
    notes=(
        "consult the function's documentation for information on how to avoid undefined behavior",
    ),
    help=("wrap the call in `unsafe {{ .. }}`, or declare this function `unsafe fn`",),
)
RAW_ACCESS_OUTSIDE_UNSAFE: Final = Message(
    codes.RAW_MEMORY_ACCESS,
    "`{function}` accesses memory that no bounds check covers",
    "raw memory access outside `unsafe`",
    notes=(
        "cuTile Rust allows it in safe code; the kernel's launch contract is "
        "marked unchecked, so the host launches it only with "
        "`allow_unchecked=True`",
    ),
    help=("wrap the access in `unsafe {{ .. }}` to mark it",),
    severity=Severity.WARNING,
)
UNNECESSARY_UNSAFE: Final = Message(
    codes.UNUSED_UNSAFE,
    "unnecessary `unsafe` block",
    "unnecessary `unsafe` block",
    notes=("`#[warn(unused_unsafe)]` on by default",),
    severity=Severity.WARNING,
)
RETURN_REFERENCE_TO_LOCAL: Final = Message(
    codes.RETURN_LOCAL_REFERENCE,
    "cannot return reference to local variable `{name}`",
    "returns a reference to data owned by the current function",
    help=("return `{name}` itself (by value)",),
)
MOVE_OUT_WHILE_BORROWED: Final = Message(
    codes.MOVE_WHILE_BORROWED,
    "cannot move out of `{name}` because it is borrowed",
    "move out of `{name}` occurs here",
)
MUTABLE_BORROW_TWICE: Final = Message(
    codes.MUTABLE_BORROW_TWICE,
    "cannot borrow `{name}` as mutable more than once at a time",
    "second mutable borrow occurs here",
)
SHARED_AND_MUTABLE_BORROW: Final = Message(
    codes.CONFLICTING_BORROW,
    "cannot borrow `{name}` as {now} because it is also borrowed as {then}",
    "{now} borrow occurs here",
)
USE_AFTER_MOVE: Final = Message(
    codes.USE_AFTER_MOVE,
    "{use} of moved value: `{name}`",
    "value {used} here after move",
    notes=(
        "move occurs because `{name}` has type `{ty}`, which does not implement the `Copy` trait",
    ),
)
MOVED_IN_PREVIOUS_ITERATION: Final = Message(
    codes.USE_AFTER_MOVE,
    "use of moved value: `{name}`",
    "value moved here, in previous iteration of loop",
    notes=(
        "move occurs because `{name}` has type `{ty}`, which does not implement the `Copy` trait",
    ),
)

# --- written types: elements, aliases, structs, shapes (parser.type_eval) ---
NOT_AN_ELEMENT_TYPE: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "expected an element type, found `{found}`",
    "not an element type",
    help=("element types are {elements}",),
)
ALIAS_REFERS_TO_ITSELF: Final = Message(
    codes.UNSUPPORTED_TYPE, "the type alias `{name}` refers to itself", "cycle in this alias"
)
GENERIC_STRUCT: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "generic struct `{name}` is not supported in kernels yet",
    "generic struct",
)
RECURSIVE_STRUCT: Final = Message(
    codes.UNSUPPORTED_TYPE,
    "struct `{name}` contains itself (a recursive type has no size)",
    "recursive without indirection",
)
TAKES_TWO_GENERIC_ARGUMENTS: Final = Message(
    codes.GENERIC_ARGUMENT, "`{name}` takes 2 generic arguments", "found {count}"
)
OPTION_TYPE_ARG_COUNT: Final = Message(
    codes.GENERIC_ARGUMENT, "`Option` takes one type argument", "found {count} argument(s)"
)
UNSUPPORTED_KERNEL_TYPE: Final = Message(
    codes.UNSUPPORTED_TYPE, "unsupported type `{ty}` in a kernel", "not supported here"
)
INVALID_SHAPE: Final = Message(codes.GENERIC_ARGUMENT, "invalid shape: {what}", "here")
DIMENSION_OUT_OF_RANGE: Final = Message(
    codes.LITERAL_OUT_OF_RANGE,
    "shape dimension out of range for `i32`",
    "`{value}` does not fit in `i32`",
    notes=("shapes are arrays of `i32`",),
)
MAPPED_PARTITION_ARG_COUNT: Final = Message(
    codes.GENERIC_ARGUMENT, "`MappedPartitionMut` takes 3 generic arguments", "found {count}"
)
POINTER_TILE_NEEDS_POINTER: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the first argument of `PointerTile` is a raw pointer type",
    "expected `*mut E`",
)

# --- the checker itself: constants, fields, indexing, arrays, shape macros (parser.typecheck) ---
TOO_MANY_ERRORS: Final = Message(
    codes.LIMIT_EXCEEDED,
    "checking `{function}` stopped after {limit} errors",
    "in this entry",
    help=("fix the errors above and compile again",),
)
CONST_NOT_CONSTANT: Final = Message(
    codes.UNSUPPORTED_SYNTAX, "constant `{name}`: {why}", "not a compile-time constant"
)
CONST_VALUE_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: constant `{name}` is a `{ty}`, found `{value}`",
    "expected `{ty}`",
)
NO_FIELD_ON_NON_STRUCT: Final = Message(
    codes.UNKNOWN_METHOD, "no field `{name}` on type `{ty}`", "unknown field"
)
INDEX_NOT_CONSTANT: Final = Message(
    codes.UNSUPPORTED_SYNTAX, "the index must be a compile-time constant", "not a constant"
)
INDEX_OUT_OF_BOUNDS: Final = Message(
    codes.MISMATCHED_TYPES, "index {index} is out of bounds for length {length}", "out of bounds"
)
ARRAY_LENGTH_NOT_CONSTANT: Final = Message(
    codes.UNSUPPORTED_SYNTAX,
    "the length of an array must be a compile-time constant",
    "not a constant",
)
SHAPE_MACRO_ARGUMENT_NOT_INTEGER: Final = Message(
    codes.GENERIC_ARGUMENT,
    "all arguments of `{macro}!` must be compile-time integers",
    "not a compile-time integer",
)
NONE_NEEDS_A_TYPE: Final = Message(
    codes.TYPE_ANNOTATION_NEEDED,
    "type annotations needed for `Option<_>`",
    "cannot infer the type of this `None`",
    help=("annotate the binding: `let x: Option<T> = None;`",),
)

# --- calls: functions, methods, closures and their generics (parser.typecheck_calls) ---
ENTRY_CALLED: Final = Message(
    codes.UNRESOLVED_NAME,
    "`{name}` is a kernel entry and cannot be called from a kernel",
    "an entry function",
    help=("move the shared code into a device function",),
)
DEFINED_MORE_THAN_ONCE: Final = Message(
    codes.DUPLICATE_DEFINITION,
    "`{name}` is defined more than once: {places}",
    "ambiguous call",
    help=("rename one of them",),
)
GENERIC_NAME_REUSED: Final = Message(
    codes.GENERIC_NAME_REUSED,
    "the name `{name}` is already used for a generic parameter in this item's generic parameters",
    "already used",
    help=("rename one of them",),
)
PARAM_BOUND_TWICE: Final = Message(
    codes.PARAM_BOUND_TWICE,
    "identifier `{name}` is bound more than once in this parameter list",
    "used as parameter more than once",
    help=("rename one of them",),
)
NO_SUCH_METHOD: Final = Message(
    codes.UNKNOWN_METHOD, "no method named `{method}` found for `{receiver}`", "method not found"
)
INTRINSIC_ARG_COUNT: Final = Message(
    codes.WRONG_ARG_COUNT,
    "this function takes {wanted} argument(s) but {supplied} were supplied",
    "wrong number of arguments",
    notes=("signature: `{signature}`",),
)
FUNCTION_ARG_COUNT: Final = Message(
    codes.WRONG_ARG_COUNT,
    "`{function}` takes {wanted} argument(s) but {supplied} were supplied",
    "wrong number of arguments",
)
CLOSURE_ARG_COUNT: Final = Message(
    codes.WRONG_ARG_COUNT,
    "this closure takes {wanted} argument(s) but {supplied} were supplied",
    "wrong number of arguments",
)
GENERIC_CONFLICT_AT_CALL: Final = Message(
    codes.MISMATCHED_TYPES,
    "generic `{generic}` of `{function}` would need two different values at this call",
    "conflicting arguments",
)
CANNOT_INFER_GENERIC: Final = Message(
    codes.TYPE_ANNOTATION_NEEDED,
    "cannot infer generic `{generic}` of `{function}`",
    "cannot infer",
    help=("give it explicitly: `{function}::<...>(..)`",),
)
TURBOFISH_COUNT: Final = Message(
    codes.WRONG_GENERIC_COUNT,
    "function takes {wanted} generic argument{plural} but {given} generic "
    "argument{given_plural} {verb} supplied",
    "expected {wanted} generic argument{plural}",
)
EXPECTED_A_CONSTANT: Final = Message(
    codes.GENERIC_ARGUMENT, "expected a compile-time constant", "not a constant"
)

# --- structs, patterns and impl items (parser.typecheck_items) ---
STRUCT_HAS_NO_FIELD: Final = Message(
    codes.UNKNOWN_FIELD,
    "struct `{struct}` has no field named `{name}`",
    "unknown field",
    help=("its fields are: {fields}",),
)
FIELD_GIVEN_TWICE: Final = Message(
    codes.UNKNOWN_FIELD, "field `{name}` specified more than once", "used more than once"
)
MISSING_STRUCT_FIELDS: Final = Message(
    codes.MISSING_FIELD,
    "missing field{plural} {listed} in initializer of `{struct}`",
    "missing {listed}",
)
STRUCT_FIELD_COUNT: Final = Message(
    codes.WRONG_ARG_COUNT,
    "`{struct}` has {fields} field(s) but {supplied} were supplied",
    "wrong number of fields",
)
NO_FIELD_ON_TYPE: Final = Message(
    codes.NO_SUCH_FIELD,
    "no field `{name}` on type `{struct}`",
    "unknown field",
    help=("available fields are: {fields}",),
)
PATTERN_FIELD_UNKNOWN: Final = Message(
    codes.PATTERN_UNKNOWN_FIELD,
    "struct `{struct}` does not have a field named `{name}`",
    "struct has no such field",
)
PATTERN_FIELDS_MISSING: Final = Message(
    codes.PATTERN_MISSING_FIELD,
    "pattern does not mention field{plural} {listed}",
    "missing {listed}",
    help=("add the missing fields, or ignore them with `..`",),
)
PATTERN_CANNOT_MATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: this pattern cannot match `{ty}`",
    "expected a pattern for `{ty}`",
)
NO_ASSOCIATED_ITEM: Final = Message(
    codes.UNKNOWN_METHOD,
    "no function or associated item named `{name}` found for `{owner}`",
    "function or associated item not found",
)
ASSOCIATED_CONST_VALUE: Final = Message(
    codes.UNSUPPORTED_SYNTAX,
    "associated const values are not supported in kernels: `{path}` of `{owner}`",
    "associated const of a module `impl`",
    help=("use a module-level `const` or a const generic instead",),
)

# --- `if`, loops, `break` and assignment (parser.typecheck_control) ---
IF_ELSE_TYPES_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "`if` and `else` have incompatible types: `{then_ty}` and `{else_ty}`",
    "branches differ",
)
ITER_INDICES_NEEDS_NAME: Final = Message(
    codes.UNSUPPORTED_SYNTAX,
    "`iter_indices` loops must bind a simple index variable",
    "expected a name",
)
OUTSIDE_LOOP: Final = Message(
    codes.BREAK_OUTSIDE_LOOP, "`{word}` outside of a loop", "cannot `{word}` outside of a loop"
)
BREAK_OUT_OF_FOR: Final = Message(
    codes.UNSUPPORTED_SYNTAX,
    "`break` out of a `for` loop is not supported",
    "inside a `for` loop",
    help=("write the loop as `while` (or `loop`) to exit it early",),
)
ASSIGN_TWICE: Final = Message(
    codes.ASSIGN_IMMUTABLE,
    "cannot assign twice to immutable variable `{name}`",
    "cannot assign twice to immutable variable",
    help=("consider making this binding mutable: `mut {name}`",),
)

# --- literals, operators and casts (parser.typecheck_ops) ---
INT_LITERAL_OUT_OF_RANGE: Final = Message(
    codes.LITERAL_OUT_OF_RANGE, "literal out of range for `{elem}`", "does not fit in `{elem}`"
)
FLOAT_LITERAL_OUT_OF_RANGE: Final = Message(
    codes.LITERAL_OUT_OF_RANGE,
    "literal out of range for `{elem}`",
    "does not fit in `{elem}`",
    notes=(
        "the literal `{literal}` does not fit into the type `{elem}` and would become infinity",
    ),
)
BINARY_OPERANDS_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{op}` needs operands of the same type, found `{lhs}` and `{rhs}`",
    "operands differ",
    notes=("cuTile has no implicit broadcasting and no tile-scalar operators",),
    help=("broadcast explicitly: `s.broadcast(t.shape())`, or convert with `convert_tile`",),
)
INVALID_OPERANDS: Final = Message(
    codes.INVALID_OPERAND, "cannot apply `{op}` to operands of type `{ty}`", "invalid operands"
)
INVALID_COMPARISON_OPERANDS: Final = Message(
    codes.INVALID_OPERAND,
    "cannot apply `{op}` to operands of type `{ty}`",
    "invalid operands",
    help=("compare tiles with `lt_tile`, `eq_tile`, ...",),
)
INVALID_UNARY_OPERAND: Final = Message(
    codes.INVALID_UNARY_OPERAND,
    "cannot apply unary operator `{op}` to type `{ty}`",
    "cannot apply unary operator `{op}`",
    help=("use `{function}` on a tile",),
)
INVALID_OPERAND: Final = Message(
    codes.INVALID_OPERAND, "cannot {verb} a value of type `{ty}`", "invalid operand"
)
UNSUPPORTED_CAST: Final = Message(
    codes.INVALID_OPERAND,
    "cannot cast `{source}` as `{target}`",
    "unsupported cast",
    notes=("`as` converts between scalar numbers; for tiles use `convert_tile`",),
)

# --- debug macros and `Shape`/`Array` literals (parser.typecheck_debug_and_literals) ---
UNSUPPORTED_FORMAT_STRING: Final = Message(
    codes.UNSUPPORTED_SYNTAX,
    "unsupported format string: {problem}",
    "in this format string",
    help=("write each value as `{{}}`; `{{{{` and `}}}}` print braces",),
)
PLACEHOLDER_COUNT: Final = Message(
    codes.WRONG_ARG_COUNT,
    "the format string has {wanted} `{{}}` placeholder(s) but {supplied} argument(s) were supplied",
    "placeholders and arguments differ",
)
NOT_PRINTABLE: Final = Message(
    codes.MISMATCHED_TYPES,
    "`cuda_tile_print!` prints scalars and tiles, found `{found}`",
    "not a scalar or a tile",
)
ASSERT_ARG_COUNT: Final = Message(
    codes.WRONG_ARG_COUNT,
    "`cuda_tile_assert!` takes 2 arguments (condition, message) but {supplied} {verb} supplied",
    "wrong number of arguments",
)
ASSERT_CONDITION_NOT_BOOL: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: the condition must be a `bool` or a `Tile<bool, ..>`, found `{found}`",
    "expected `bool`",
    help=("compare tiles with `eq_tile`, `lt_tile`, ...",),
)
NOT_A_STRING_LITERAL: Final = Message(
    codes.MISMATCHED_TYPES, "{what} must be a string literal", "expected a string literal"
)
DIMS_IS_THE_ONLY_FIELD: Final = Message(
    codes.UNKNOWN_FIELD,
    "struct `{struct}` has no field named `{name}`",
    "unknown field",
    help=("its only field is `dims`",),
)
DIMS_FIELD_MISSING: Final = Message(
    codes.MISSING_FIELD,
    "missing field `dims` in this struct literal",
    "`dims` lists the `-1` entries",
)
DIMS_FIELD_TWICE: Final = Message(
    codes.MISSING_FIELD, "field `dims` specified more than once", "`dims` lists the `-1` entries"
)
DIMS_NOT_I32_SLICE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `dims` must be an `&[i32]`, found `{found}`",
    "expected `&[i32]`",
)
DIMS_ENTRY_CONTRADICTS_TYPE: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: entry {axis} of `dims` must be {extent}, as in `{name}<{{{pattern}}}>`",
    "entry {axis} is {value}",
    notes=(
        "`dims` lists the `-1` entries of the const generic, or "
        "every entry (the static ones are the type's)",
    ),
)
DIMS_COUNT_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "mismatched types: `{name}<{{{pattern}}}>` has {dynamic} runtime (`-1`) {entries}, "
    "but `dims` lists {count} value{count_plural}",
    "expected {dynamic} value{dynamic_plural}",
    notes=("`dims` holds only the `-1` entries of the const generic, in order",),
)

# --- `None`, `Latency::<N>` and statics (parser.typecheck_memory) ---
NONE_TYPE_ARG_COUNT: Final = Message(
    codes.GENERIC_ARGUMENT, "`None` takes one type argument", "found {count}"
)
EXPECTED_A_TYPE: Final = Message(codes.GENERIC_ARGUMENT, "expected a type", "not a type")
LATENCY_TYPE_NOT_CONSTANT: Final = Message(
    codes.GENERIC_ARGUMENT,
    "`Latency` takes one compile-time integer: `Latency::<4>`",
    "not a compile-time latency",
    help=("write a literal or a const generic",),
)
LATENCY_HINT_OUT_OF_RANGE: Final = Message(
    codes.GENERIC_ARGUMENT,
    "the latency hint must be in 0..={limit}, found {value}",
    "out of range",
    notes=("tileiras accepts latencies 1..=10; `Latency::<0>` gives no hint",),
)

# --- persistent-loop iterables (parser.persistent_iterables) ---
ITERABLE_ARG_COUNT: Final = Message(
    codes.WRONG_ARG_COUNT,
    "`{method}` takes {wanted} argument(s) but {supplied} were supplied",
    "wrong number of arguments",
)
SUB_RANGE_PAIRS_MISMATCH: Final = Message(
    codes.MISMATCHED_TYPES,
    "sub-range iteration expects {rank} (start_tile, num_tiles) pairs `{expected}`, "
    "found `{found}`",
    "expected `{expected}`",
)
PARTNER_SHAPES_DIFFER: Final = Message(
    codes.MISMATCHED_TYPES,
    "`{method}` requires both mapped partitions to share tile and map shapes: "
    "`{mapped}` and `{found}`",
    "`{found}`",
)

# --- an entry's generic arguments (parser.generics) ---
MISSING_GENERIC_ARGUMENT: Final = Message(
    codes.GENERIC_ARGUMENT,
    "missing generic argument `{name}`",
    "needs a value",
    notes=("expected {expected}",),
)
NO_SUCH_GENERIC_PARAMETER: Final = Message(
    codes.GENERIC_ARGUMENT,
    "`{function}` has no generic parameter `{name}`",
    "declared here",
    notes=("its generic parameters are: {names}",),
)
GENERIC_ARGUMENT_TWICE: Final = Message(
    codes.GENERIC_ARGUMENT, "generic argument `{name}` is given twice", "declared here"
)
GENERIC_ARGUMENT_COUNT: Final = Message(
    codes.GENERIC_ARGUMENT,
    "`{function}` takes {count} generic argument(s) but {given} were given",
    "declared here",
    notes=("generic arguments: {expected}",),
)
GENERIC_ARGUMENTS_TO_NON_GENERIC: Final = Message(
    codes.GENERIC_ARGUMENT,
    "`{function}` takes {count} generic argument(s) but {given} were given",
    "declared here",
)
UNSUPPORTED_CONST_GENERIC_TYPE: Final = Message(
    codes.GENERIC_ARGUMENT,
    "const generic `{name}` has type `{type}`, which cuTile does not support",
    "unsupported const generic type",
    notes=("its type must be `i32`, `bool` or `[i32; N]`",),
)
INVALID_GENERIC_VALUE: Final = Message(
    codes.GENERIC_ARGUMENT,
    "invalid value `{text}` for generic parameter `{name}`",
    "declared here",
    notes=("expected {expected}",),
)

# --- request facts (parser.specialization) ---
FACTS_NAME_NO_TENSOR: Final = Message(
    codes.INVALID_SPECIALIZATION, "no tensor parameter `{param}` in `{function}`"
)
FACTS_AXIS_COUNT: Final = Message(
    codes.INVALID_SPECIALIZATION, "facts for `{param}` must give 0 or {rank} axes"
)
FACTS_ALIGN_NOT_POWER_OF_TWO: Final = Message(
    codes.INVALID_SPECIALIZATION,
    "facts for `{param}`: base alignment {align} is not a power of two up to {max_align}",
)
FACTS_ALIGN_BELOW_ELEMENT: Final = Message(
    codes.INVALID_SPECIALIZATION,
    "facts for `{param}`: base alignment {align} is below the element size ({element_bytes} bytes)",
)
FACTS_NEVER_HOLD: Final = Message(
    codes.INVALID_SPECIALIZATION, "facts for `{param}` can never hold: {problem}"
)

# --- the compile pipeline (lowering.pipeline) ---
INTERNAL_ERROR: Final = Message(
    codes.INTERNAL_ERROR,
    "internal compiler error: {kind}: {error}",
    notes=("please report this with the kernel source",),
)
IN_KERNEL_CHECK_DENIED: Final = Message(
    codes.IN_KERNEL_CHECK_DENIED,
    "a bounds check would stay in the kernel: {cause}",
    "cannot be proven in bounds or checked at launch",
    notes=("`{function}` sets `deny_in_kernel_checks = true`",),
    help=(
        "index with a loop over `num_tiles(&p, axis)` of the same partition, or a "
        "block id of the output that defines the grid",
    ),
)
TILEIRAS_FAILED: Final = Message(
    codes.TILEIRAS_FAILED,
    "tileiras failed to assemble `{function}`: {reason}",
    "while assembling this kernel",
    notes=("tileiras said:\n{said}", "repro: {command}"),
)

# --- bounds checks (lowering.bounds, lowering.bounded_checks) ---
PROVABLY_OUT_OF_BOUNDS: Final = Message(
    codes.PARTITION_OUT_OF_BOUNDS,
    "{what} is out of bounds: it takes the value(s) {shown}",
    "provably outside the partition",
    notes=("Bounds check failed: 0 <= index{bound}",),
)
CHECK_ALWAYS_FALSE: Final = Message(codes.PARTITION_OUT_OF_BOUNDS, "{what}", "always false")
BOUND_NOT_TILE_COUNT: Final = Message(
    codes.BOUND_MISMATCH,
    "`with_bounds` bound {bound} on axis {axis} is not the partition's tile count {count}",
    "this axis has {count} tile(s)",
    notes=("an index walked over this bound would leave the partition",),
    help=("bound the axis with `num_tiles(&p, axis)`",),
)
COORDINATE_OF_ANOTHER_DIM: Final = Message(
    codes.DIM_PROVENANCE,
    "bounded partition coordinate axis {axis} was produced by a different dimension",
    "not walked over the `Dim` bound to axis {axis}",
    notes=("`with_bounds` ties each axis to one `Dim`; only its iterations index that axis",),
)
COORDINATE_NOT_FROM_DIM: Final = Message(
    codes.DIM_PROVENANCE,
    "bounded partition coordinate axis {axis} must come from iterating the matching dimension",
    "not provably inside the bounded axis",
    notes=(
        "a bounded partition's coordinates are a `for` variable over the axis's `Dim`, "
        "a component minted for that axis, or a constant inside its tiles",
    ),
    help=("index a plain partition (without `with_bounds`) to have it checked instead",),
)
COORDINATE_OF_MADE_TENSOR: Final = Message(
    codes.DIM_PROVENANCE,
    "coordinate {constant} on axis {axis} cannot be checked: the tensor was made in the "
    "kernel, so the host does not know its tiles",
    "not provably inside the bounded axis",
    notes=("bounded accesses are checked at compile time or at launch, never in the kernel",),
    help=("walk the axis's `Dim` (`for i in d`), or index a plain partition instead",),
)
COORDINATE_OUTSIDE_GRID: Final = Message(
    codes.PARTITION_OUT_OF_BOUNDS,
    "coordinate {constant} on axis {axis} is not within {grid}",
    "out of bounds",
    notes=("Bounds check failed: 0 <= index < tiles",),
)
STORE_INDEX_NOT_MINTED: Final = Message(
    codes.PARTITION_INDEX_PROVENANCE,
    "`MappedPartitionMut::store` requires an index produced by this partition's "
    "`iter_indices()` iterator",
    "not minted by this partition",
    notes=("every axis of this map is streamed, so only a minted index proves the store",),
)
STREAMED_AXIS_NOT_MINTED: Final = Message(
    codes.PARTITION_INDEX_PROVENANCE,
    "streamed axis {axis} of a composite store index must be the component minted "
    "by this partition's `iter_indices()` (owned axes may use `Dim` indices instead)",
    "not minted by this partition",
    notes=("minted indices are disjoint across tile blocks, which makes the store race-free",),
)
OWNED_AXIS_OF_ANOTHER_DIM: Final = Message(
    codes.DIM_PROVENANCE,
    "owned axis {axis} of a composite store index was produced by a different dimension",
    "not walked over `num_tiles(&z, {axis})`",
)

BOUND_WITHOUT_DIM: Final = Message(
    codes.DIM_PROVENANCE,
    "`with_bounds` bound {axis} must come from `num_tiles`, `Dim::new` or `into_dim`",
    "a plain `i32`",
    help=("wrap it: `Dim::new(n)`, or count the axis with `num_tiles(&p, axis)`",),
)

# --- partitions chosen at run time (lowering.partition_choice) ---
CALL_ON_CHOSEN_PARTITION: Final = Message(
    codes.UNSUPPORTED_SYNTAX,
    "`{call}` on a partition chosen at run time is not supported yet",
    "`{var}` was assigned in an `if`",
    help=("load through it, or count its tiles, where it is used",),
)

# --- persistent loops (lowering.lower_persistent) ---
SUB_RANGE_OVER_OWNED_AXES: Final = Message(
    codes.UNSUPPORTED_SYNTAX,
    "sub-range iteration over a map with OWNED axes is not supported yet",
    "map shape {map_shape}",
)
SUB_RANGE_OUTSIDE_GRID: Final = Message(
    codes.PARTITION_OUT_OF_BOUNDS,
    "{what}",
    "outside the mapped partition's tiles",
    notes=("each `(start_tile, num_tiles)` pair must lie inside the axis's tile grid",),
)
