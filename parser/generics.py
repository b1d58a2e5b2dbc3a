"""Bind an entry's generic parameters to the values given in the request.

Values arrive as strings, by name (`B=128`, `E=f16`, `S=[64, 32]`) or by position in
declaration order (the reference's `.generics(vec![...])`); a const array may be given
whole (`[64, 32]`) or element by element in the positional form.
"""

from __future__ import annotations

from parser import ast_nodes as A
from parser import messages
from parser.check_messages import did_you_mean
from parser.diagnostics import DiagnosticSink
from parser.types import ELEM_BY_NAME, GenericValue

I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def bind_generics(
    function: A.Function,
    named: tuple[tuple[str, str], ...],
    positional: tuple[str, ...],
    sink: DiagnosticSink,
) -> dict[str, GenericValue] | None:
    """The bound value of every generic parameter, or None after reporting why not."""
    params = function.generics
    raw = _by_name(function, named, sink) if named else _by_position(function, positional, sink)
    if raw is None:
        return None
    bound: dict[str, GenericValue] = {}
    for param in params:
        if param.name not in raw:
            sink.add(
                messages.MISSING_GENERIC_ARGUMENT.at(
                    param.span, name=param.name, expected=_expected(param)
                )
            )
            continue
        value = _parse(param, raw[param.name], sink)
        if value is not None:
            bound[param.name] = value
    return bound if len(bound) == len(params) else None


def _by_name(
    function: A.Function, named: tuple[tuple[str, str], ...], sink: DiagnosticSink
) -> dict[str, str] | None:
    declared = {p.name for p in function.generics}
    raw: dict[str, str] = {}
    ok = True
    for name, value in named:
        if name not in declared:
            names = ", ".join(f"`{p.name}`" for p in function.generics) or "none"
            sink.add(
                messages.NO_SUCH_GENERIC_PARAMETER.at(
                    function.name_span,
                    suggestions=did_you_mean(name, [p.name for p in function.generics]),
                    function=function.name,
                    name=name,
                    names=names,
                )
            )
            ok = False
        elif name in raw:
            sink.add(messages.GENERIC_ARGUMENT_TWICE.at(function.name_span, name=name))
            ok = False
        raw[name] = value
    return raw if ok else None


def _by_position(
    function: A.Function, positional: tuple[str, ...], sink: DiagnosticSink
) -> dict[str, str] | None:
    params = function.generics
    values = list(positional)
    flat_count = sum(_array_len(p) or 1 for p in params)
    if len(values) not in (len(params), flat_count):
        entry = (
            messages.GENERIC_ARGUMENT_COUNT if params else messages.GENERIC_ARGUMENTS_TO_NON_GENERIC
        )
        sink.add(
            entry.at(
                function.name_span,
                function=function.name,
                count=len(params),
                given=len(values),
                expected=", ".join(_expected(p) for p in params),
            )
        )
        return None
    raw: dict[str, str] = {}
    expand = len(values) == flat_count and flat_count != len(params)
    for param in params:
        count = _array_len(param) if expand else None
        if count:
            raw[param.name] = "[" + ", ".join(values[:count]) + "]"
            del values[:count]
        else:
            raw[param.name] = values.pop(0)
    return raw


def _parse(param: A.GenericParam, text: str, sink: DiagnosticSink) -> GenericValue | None:
    text = text.strip()
    if isinstance(param, A.TypeParam):
        if text in ELEM_BY_NAME:
            return ELEM_BY_NAME[text]
        return _bad(param, text, sink)
    kind = _const_kind(param)
    if kind == "unsupported":
        sink.add(
            messages.UNSUPPORTED_CONST_GENERIC_TYPE.at(
                param.span, name=param.name, type=param.type.span.text
            )
        )
        return None
    if kind == "i32":
        number = _int(text)
        if number is None or not I32_MIN <= number <= I32_MAX:
            return _bad(param, text, sink)
        return number
    if kind == "bool":
        if text in ("true", "false"):
            return text == "true"
        return _bad(param, text, sink)
    length = _array_len(param)
    items = [_int(t) for t in text.strip("[]").split(",") if t.strip()]
    values = tuple(i for i in items if i is not None)
    if length is None or len(values) != length or len(items) != length:
        return _bad(param, text, sink)
    if not all(I32_MIN <= v <= I32_MAX for v in values):
        return _bad(param, text, sink)
    return values


def _int(text: str) -> int | None:
    if not text.isascii():  # Python's int() also reads other scripts' digits; Rust does not
        return None
    try:
        return int(text.replace("_", "").removesuffix("i32"), 0)
    except ValueError:
        return None


def canonical_text(text: str) -> str:
    """The one spelling of a generic argument among those the front end reads as the same
    value: an integer literal in decimal ("0x80", "1_28", "128i32": "128"), a bracketed list
    of them as "[a, b]", anything else stripped. Requests that differ only in spelling then
    share a cache key."""
    text = text.strip()
    number = _int(text)
    if number is not None:
        return str(number)
    if text.startswith("[") and text.endswith("]"):
        items = [item for item in text[1:-1].split(",") if item.strip()]
        numbers = [_int(item.strip()) for item in items]
        if items and all(n is not None for n in numbers):
            return "[" + ", ".join(str(n) for n in numbers) + "]"
    return text


def _const_kind(param: A.ConstParam) -> str:
    ty = param.type
    if isinstance(ty, A.PathType) and ty.segments in (("i32",), ("bool",)):
        return ty.segments[0]
    return "array" if isinstance(ty, A.ArrayType) else "unsupported"


def _array_len(param: A.GenericParam) -> int | None:
    if isinstance(param, A.ConstParam) and isinstance(param.type, A.ArrayType):
        length = param.type.length
        if isinstance(length, A.IntLit):
            return length.value
    return None


def _expected(param: A.GenericParam) -> str:
    if isinstance(param, A.TypeParam):
        return f"`{param.name}` (an element type such as f32)"
    kind = _const_kind(param)
    if kind == "array":
        return f"`{param.name}` (an array of {_array_len(param)} i32, such as [64, 64])"
    return f"`{param.name}` (an i32 value)" if kind == "i32" else f"`{param.name}` (true or false)"


def _bad(param: A.GenericParam, text: str, sink: DiagnosticSink) -> None:
    sink.add(
        messages.INVALID_GENERIC_VALUE.at(
            param.span, text=text, name=param.name, expected=_expected(param)
        )
    )
    return None
