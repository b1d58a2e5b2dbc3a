"""Memory-ordering tokens and optional operands: `Some(x)`, `new_token_unordered()`,
`join_tokens(&[a, b])`, `get_tensor_token(&t)` and `print_tko(fmt, tile, token)`.

A `Token` orders memory operations: an op that consumes a token happens after the op
that produced it (Tile IR orders memory only through tokens). The compiler still orders
every access it threads itself (an output's stores, the raw-pointer chain, prints); a
token the kernel passes adds its ordering on top, so user tokens can only order more.
All of these are safe in cuTile Rust and here: they touch no memory.

`Option` operands (a mask, a padding value, a token, a scope) must be known to be `Some`
or `None` at compile time: `OptionTy.some` carries that through `let` bindings.
"""

from __future__ import annotations

from parser import ast_nodes as A
from parser import messages
from parser.prelude.spec import CallTyper, Intrinsic
from parser.types import TOKEN, ArrayTy, OptionTy, RefTy, SemType, TensorTy, TileTy

_CONVERSIONS = "diuoxXeEfFgGaAcsSpn%"


def option_arg(
    call: CallTyper, index: int, fn: str, what: str, hint: SemType | None = None
) -> OptionTy | None:
    """Argument `index`, an `Option<..>` whose `Some`-ness is known; None after an error."""
    ty = call.arg(index, OptionTy(hint) if hint is not None else None)
    if ty is None:
        return None
    if isinstance(ty, OptionTy) and ty.some is not None:
        return ty
    expected = f"Option<{hint}>" if hint is not None else "Option"
    call.report(
        messages.NOT_AN_OPTION.at(
            call.args[index].span, what=what, fn=fn, expected=expected, found=ty
        )
    )
    return None


def option_of(
    call: CallTyper, index: int, fn: str, what: str, expected: SemType
) -> OptionTy | None:
    """An `Option<expected>` argument (a `None` of unknown type fits)."""
    ty = option_arg(call, index, fn, what, expected)
    if ty is None or ty.inner in (None, expected):
        return ty
    call.report(
        messages.OPTION_OF_WRONG_TYPE.at(
            call.args[index].span, what=what, fn=fn, expected=expected, found=ty.inner
        )
    )
    return None


def token_arg(call: CallTyper, index: int, fn: str) -> bool:
    ty = call.arg(index, TOKEN)
    if ty is None or ty == TOKEN:
        return ty is not None
    call.report(messages.NOT_A_TOKEN.at(call.args[index].span, fn=fn, found=ty))
    return False


def _some(call: CallTyper) -> SemType | None:
    expected = getattr(call, "expected", None)
    hint = expected.inner if isinstance(expected, OptionTy) else None
    inner = call.arg(0, hint)
    return None if inner is None else OptionTy(inner, some=True)


def _new_token(call: CallTyper) -> SemType | None:
    return TOKEN


def _join_tokens(call: CallTyper) -> SemType | None:
    ty = call.arg(0)
    if ty is None:
        return None
    if isinstance(ty, ArrayTy) and ty.element == TOKEN:
        return TOKEN
    call.report(messages.JOIN_NOT_TOKEN_SLICE.at(call.args[0].span, found=ty))
    return None


def _get_tensor_token(call: CallTyper) -> SemType | None:
    ty = call.arg(0)
    if ty is None:
        return None
    if isinstance(ty, TensorTy) or (isinstance(ty, RefTy) and isinstance(ty.inner, TensorTy)):
        return TOKEN
    call.report(messages.TENSOR_TOKEN_NOT_OF_TENSOR.at(call.args[0].span, found=ty))
    return None


def conversion_count(text: str) -> int | None:
    """How many arguments a printf format consumes; None when a `%` is unterminated."""
    count, pos = 0, 0
    while pos < len(text):
        if text[pos] != "%":
            pos += 1
            continue
        end = next((i for i in range(pos + 1, len(text)) if text[i] in _CONVERSIONS), None)
        if end is None:
            return None
        count += text[pos : end + 1] != "%%"
        pos = end + 1
    return count


def _print_tko(call: CallTyper) -> SemType | None:
    fn = "print_tko"
    fmt = call.args[0]
    if not isinstance(fmt, A.StrLit) or conversion_count(fmt.value) != 1:
        call.report(messages.PRINT_FORMAT_NOT_ONE_CONVERSION.at(fmt.span, fn=fn))
        return None
    tile = call.arg(1)
    if tile is not None and not isinstance(tile, TileTy):
        call.report(messages.PRINTED_NOT_A_TILE.at(call.args[1].span, fn=fn, found=tile))
        return None
    token = option_of(call, 2, fn, "token", TOKEN)
    return None if tile is None or token is None else TOKEN


TOKEN_INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic("some", "Some(value: T) -> Option<T>", (1,), _some, functions=("Some",)),
    Intrinsic(
        "new_token_unordered",
        "fn new_token_unordered() -> Token",
        (0,),
        _new_token,
        functions=("new_token_unordered",),
    ),
    Intrinsic(
        "join_tokens",
        "fn join_tokens(tokens: &[Token]) -> Token",
        (1,),
        _join_tokens,
        functions=("join_tokens",),
    ),
    Intrinsic(
        "get_tensor_token",
        "fn get_tensor_token<E, S>(tensor: &Tensor<E, S>) -> Token",
        (1,),
        _get_tensor_token,
        functions=("get_tensor_token",),
    ),
    Intrinsic(
        "print_tko",
        "fn print_tko<E, S>(format: &str, arg: Tile<E, S>, token: Option<Token>) -> Token",
        (3,),
        _print_tko,
        functions=("print_tko",),
    ),
)
