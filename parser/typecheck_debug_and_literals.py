"""Type rules for the values a kernel builds without a call: the debugging macros
`cuda_tile_print!("fmt {}\\n", a, ..)` and `cuda_tile_assert!(cond, "msg")`, `Some(x)` /
`None`, and the `Shape::<{[..]}> { dims: &[..] }` / `Array::<{[..]}> { dims: &[..] }`
struct literals.

A `Shape`/`Array` literal's `dims` lists the runtime (`-1`) entries of its const generic,
in order; real kernels also list every entry of a fully static `Array`
(`Array::<{[1, 0]}> { dims: &[1i32, 0i32] }`), which is accepted when the values agree.
"""

from __future__ import annotations

from parser import ast_nodes as A
from parser import codes
from parser.check_messages import mismatch, unsupported
from parser.checker_surface import CheckerSurface
from parser.diagnostics import error
from parser.printf_format import format_pieces, unescape
from parser.types import (
    DYNAMIC,
    STR,
    UNIT,
    ArrayTy,
    Elem,
    RefTy,
    ScalarTy,
    SemType,
    ShapeTy,
    TileTy,
)

I32 = ScalarTy(Elem.I32)
DEBUG_MACROS = ("cuda_tile_print", "cuda_tile_assert")


class DebugAndLiteralRules(CheckerSurface):
    # --- cuda_tile_print! / cuda_tile_assert!

    def debug_macro(self, macro: A.MacroCall) -> SemType | None:
        if macro.name == "cuda_tile_print":
            return self._print(macro)
        return self._assert(macro)

    def _print(self, macro: A.MacroCall) -> SemType | None:
        if not macro.args or not isinstance(macro.args[0], A.StrLit):
            self._not_a_string(macro, 0, "the format string of `cuda_tile_print!`")
            return None
        fmt = macro.args[0]
        pieces = format_pieces(fmt.value)
        if isinstance(pieces, str):
            self.report(
                error(
                    codes.UNSUPPORTED_SYNTAX,
                    f"unsupported format string: {pieces}",
                    fmt.span,
                    "in this format string",
                    help=("write each value as `{}`; `{{` and `}}` print braces",),
                )
            )
            return None
        values = [self.expr(a, None) for a in macro.args[1:]]
        if any(v is None for v in values):
            return None
        wanted = pieces.count(None)
        if wanted != len(values):
            self.report(
                error(
                    codes.WRONG_ARG_COUNT,
                    f"the format string has {wanted} `{{}}` placeholder(s) but "
                    f"{len(values)} argument(s) were supplied",
                    macro.span,
                    "placeholders and arguments differ",
                    secondary=((fmt.span, f"{wanted} placeholder(s)"),),
                )
            )
            return None
        for arg, ty in zip(macro.args[1:], values, strict=True):
            if not isinstance(ty, (ScalarTy, TileTy)):
                self.report(
                    error(
                        codes.MISMATCHED_TYPES,
                        f"`cuda_tile_print!` prints scalars and tiles, found `{ty}`",
                        arg.span,
                        "not a scalar or a tile",
                    )
                )
                return None
        return UNIT

    def _assert(self, macro: A.MacroCall) -> SemType | None:
        if len(macro.args) != 2:
            self.report(
                error(
                    codes.WRONG_ARG_COUNT,
                    f"`cuda_tile_assert!` takes 2 arguments (condition, message) but "
                    f"{len(macro.args)} {'was' if len(macro.args) == 1 else 'were'} supplied",
                    macro.span,
                    "wrong number of arguments",
                )
            )
            return None
        if not isinstance(macro.args[1], A.StrLit):
            self._not_a_string(macro, 1, "the message of `cuda_tile_assert!`")
            return None
        if unescape(macro.args[1].value) is None:
            self._bad_escape(macro.args[1])
            return None
        cond = self.expr(macro.args[0], ScalarTy(Elem.BOOL))
        if cond is None:
            return None
        if not isinstance(cond, (ScalarTy, TileTy)) or cond.elem is not Elem.BOOL:
            self.report(
                error(
                    codes.MISMATCHED_TYPES,
                    f"mismatched types: the condition must be a `bool` or a `Tile<bool, ..>`, "
                    f"found `{cond}`",
                    macro.args[0].span,
                    "expected `bool`",
                    help=("compare tiles with `eq_tile`, `lt_tile`, ...",),
                )
            )
            return None
        return UNIT

    def _not_a_string(self, macro: A.MacroCall, index: int, what: str) -> None:
        span = macro.args[index].span if index < len(macro.args) else macro.span
        self.report(
            error(
                codes.MISMATCHED_TYPES,
                f"{what} must be a string literal",
                span,
                "expected a string literal",
            )
        )

    def _bad_escape(self, lit: A.StrLit) -> None:
        self.report(unsupported(lit.span, "this escape sequence in a kernel string"))

    def string_literal(self, lit: A.StrLit, expected: SemType | None) -> SemType | None:
        """`"text"` as a value: a `&str` (it has no run-time value; nothing but the debug
        macros reads one)."""
        if unescape(lit.value) is None:
            self._bad_escape(lit)
            return None
        return RefTy(STR, mutable=False)

    # --- Shape / Array struct literals

    def struct_literal(self, lit: A.StructLit, expected: SemType | None) -> SemType | None:
        name = lit.path.segments[-1]
        if name not in ("Shape", "Array") or len(lit.path.generic_args) != 1:
            what = f"a struct literal of `{lit.path.span.text}`"
            if name in ("Shape", "Array"):
                what = f"`{name}` without its const generic (write `{name}::<{{[..]}}> {{..}}`)"
            self.report(unsupported(lit.span, what))
            return None
        pattern = self.resolver.shape(lit.path.generic_args[0])
        if pattern is None:
            return None
        dims = self._dims_field(lit)
        if dims is None:
            return None
        values = self._dims_values(dims)
        if values is None:
            return None
        full = self._fill_pattern(lit, name, pattern, dims, values)
        if full is None:
            return None
        if name == "Shape":
            if DYNAMIC not in pattern:
                self.facts.consts[lit] = pattern
            return ShapeTy(pattern)
        known = tuple(v for v in full if v is not None)
        if len(known) == len(full):
            self.facts.consts[lit] = known
        return ArrayTy(I32, len(pattern), pattern)

    def _dims_field(self, lit: A.StructLit) -> A.Expr | None:
        for field_name, value in lit.fields:
            if field_name != "dims":
                self.report(
                    error(
                        codes.UNKNOWN_FIELD,
                        f"struct `{lit.path.segments[-1]}` has no field named `{field_name}`",
                        value.span,
                        "unknown field",
                        help=("its only field is `dims`",),
                    )
                )
                return None
        found = [value for field_name, value in lit.fields if field_name == "dims"]
        if len(found) != 1:
            self.report(
                error(
                    codes.MISSING_FIELD,
                    "missing field `dims` in this struct literal"
                    if not found
                    else "field `dims` specified more than once",
                    lit.span,
                    "`dims` lists the `-1` entries",
                )
            )
            return None
        return found[0]

    def _dims_values(self, dims: A.Expr) -> list[int | None] | None:
        """Each entry of `dims` (`&[a, b]`, `&[]` or an `[i32; N]` value): its constant
        value, or None when it is known only at run time."""
        inner = dims.value if isinstance(dims, A.Reference) else dims
        if isinstance(inner, A.ArrayExpr):
            values: list[int | None] = []
            for element in inner.elements:
                ty = self.expr(element, I32)
                if ty is None:
                    return None
                if ty != I32:
                    self.report(mismatch(I32, ty, element.span))
                    return None
                folded = self.fold(element)
                values.append(folded if isinstance(folded, int) else None)
            return values
        ty = self.expr(dims, None)
        if ty is None:
            return None
        if not (isinstance(ty, ArrayTy) and ty.element == I32):
            self.report(
                error(
                    codes.MISMATCHED_TYPES,
                    f"mismatched types: `dims` must be an `&[i32]`, found `{ty}`",
                    dims.span,
                    "expected `&[i32]`",
                )
            )
            return None
        folded = self.fold(inner)
        if isinstance(folded, tuple):
            return list(folded)
        return [None] * ty.length

    def _fill_pattern(
        self,
        lit: A.StructLit,
        name: str,
        pattern: tuple[int, ...],
        dims: A.Expr,
        values: list[int | None],
    ) -> tuple[int | None, ...] | None:
        """The full entries: the pattern's static ones and `dims` for each `-1`."""
        dynamic = pattern.count(DYNAMIC)
        if len(values) == dynamic:
            given = iter(values)
            return tuple(next(given) if p == DYNAMIC else p for p in pattern)
        if len(values) == len(pattern):
            # a run-time value at a static entry is allowed, as in cuTile Rust: the type's
            # extent is the one used; a constant that contradicts it is an error
            for axis, (p, v) in enumerate(zip(pattern, values, strict=True)):
                if p != DYNAMIC and v is not None and v != p:
                    self.report(
                        error(
                            codes.MISMATCHED_TYPES,
                            f"mismatched types: entry {axis} of `dims` must be {p}, as in "
                            f"`{name}<{{{list(pattern)}}}>`",
                            dims.span,
                            f"entry {axis} is {v}",
                            notes=(
                                "`dims` lists the `-1` entries of the const generic, or "
                                "every entry (the static ones are the type's)",
                            ),
                        )
                    )
                    return None
            return tuple(v if p == DYNAMIC else p for p, v in zip(pattern, values, strict=True))
        self.report(
            error(
                codes.MISMATCHED_TYPES,
                f"mismatched types: `{name}<{{{list(pattern)}}}>` has {dynamic} runtime (`-1`) "
                f"entr{'y' if dynamic == 1 else 'ies'}, but `dims` lists {len(values)} "
                f"value{'' if len(values) == 1 else 's'}",
                dims.span,
                f"expected {dynamic} value{'' if dynamic == 1 else 's'}",
                notes=("`dims` holds only the `-1` entries of the const generic, in order",),
            )
        )
        return None
