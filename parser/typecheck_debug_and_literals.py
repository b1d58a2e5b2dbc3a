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
from parser import messages
from parser.check_messages import mismatch, unsupported
from parser.checker_surface import CheckerSurface
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
            self.report(messages.UNSUPPORTED_FORMAT_STRING.at(fmt.span, problem=pieces))
            return None
        values = [self.expr(a, None) for a in macro.args[1:]]
        if any(v is None for v in values):
            return None
        wanted = pieces.count(None)
        if wanted != len(values):
            placeholders = ((fmt.span, f"{wanted} placeholder(s)"),)
            self.report(
                messages.PLACEHOLDER_COUNT.at(
                    macro.span, placeholders, wanted=wanted, supplied=len(values)
                )
            )
            return None
        for arg, ty in zip(macro.args[1:], values, strict=True):
            if not isinstance(ty, (ScalarTy, TileTy)):
                self.report(messages.NOT_PRINTABLE.at(arg.span, found=ty))
                return None
        return UNIT

    def _assert(self, macro: A.MacroCall) -> SemType | None:
        if len(macro.args) != 2:
            supplied = len(macro.args)
            verb = "was" if supplied == 1 else "were"
            self.report(messages.ASSERT_ARG_COUNT.at(macro.span, supplied=supplied, verb=verb))
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
            self.report(messages.ASSERT_CONDITION_NOT_BOOL.at(macro.args[0].span, found=cond))
            return None
        return UNIT

    def _not_a_string(self, macro: A.MacroCall, index: int, what: str) -> None:
        span = macro.args[index].span if index < len(macro.args) else macro.span
        self.report(messages.NOT_A_STRING_LITERAL.at(span, what=what))

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
                    messages.DIMS_IS_THE_ONLY_FIELD.at(
                        value.span, struct=lit.path.segments[-1], name=field_name
                    )
                )
                return None
        found = [value for field_name, value in lit.fields if field_name == "dims"]
        if len(found) != 1:
            entry = messages.DIMS_FIELD_TWICE if found else messages.DIMS_FIELD_MISSING
            self.report(entry.at(lit.span))
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
            self.report(messages.DIMS_NOT_I32_SLICE.at(dims.span, found=ty))
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
                        messages.DIMS_ENTRY_CONTRADICTS_TYPE.at(
                            dims.span,
                            axis=axis,
                            extent=p,
                            name=name,
                            pattern=list(pattern),
                            value=v,
                        )
                    )
                    return None
            return tuple(v if p == DYNAMIC else p for p, v in zip(pattern, values, strict=True))
        self.report(
            messages.DIMS_COUNT_MISMATCH.at(
                dims.span,
                name=name,
                pattern=list(pattern),
                dynamic=dynamic,
                entries="entry" if dynamic == 1 else "entries",
                count=len(values),
                count_plural="" if len(values) == 1 else "s",
                dynamic_plural="" if dynamic == 1 else "s",
            )
        )
        return None
