"""Lowering of tokens and optional operands (`parser.prelude.tokens`).

An `Option` lowers to its value (`Some(x)`) or to None; a `Token` to a `token` value.
`merge_tokens` is how a token the kernel passes joins the chain the compiler threads: an
op consumes both, so it is ordered after each.
"""

from __future__ import annotations

from lowering.intrinsics.spec import IntrinsicLowering
from lowering.ir.core import Value
from lowering.ir.ops_core import JoinTokens, MakeToken
from lowering.ir.ops_debug import PrintTko
from lowering.ir.types import TOKEN
from lowering.lowered_expr import Lowered, PartitionValue, TensorHandle, TokenChain
from lowering.lowering_context import LoweringContext
from parser import ast_nodes as A
from parser.printf_format import unescape


def merge_tokens(ctx: LoweringContext, tokens: list[Value | None], span: A.Span) -> Value | None:
    """One token ordered after every given one: None for none, the token itself for one,
    a `join_tokens` for several (duplicates dropped)."""
    unique: list[Value] = []
    for token in tokens:
        if token is not None and all(token.id != t.id for t in unique):
            unique.append(token)
    if len(unique) <= 1:
        return unique[0] if unique else None
    return ctx.builder.emit(JoinTokens, result=TOKEN, tokens=tuple(unique), span=span).result


def optional_value(ctx: LoweringContext, expr: A.Expr) -> Value | None:
    """An `Option` operand: its value, or None for `None`."""
    lowered = ctx.expr(expr)
    assert lowered is None or isinstance(lowered, Value), lowered
    return lowered


def chained(ctx: LoweringContext, chain: TokenChain, user: Value | None, span: A.Span) -> Value:
    """The input token of an access on `chain`, also ordered after the kernel's `user` one."""
    token = merge_tokens(ctx, [chain.token, user], span)
    assert token is not None
    return token


def view_token(ctx: LoweringContext, part: PartitionValue, span: A.Span) -> Value | None:
    """The input token of an access through `part`: its tensor's chain (a written tensor)
    and the token `make_partition_view` was given."""
    return merge_tokens(ctx, [part.handle.token, part.token], span)


def advance(part: PartitionValue, result_token: Value) -> None:
    """An access through a written tensor moves its chain on (later ones come after it)."""
    if part.handle.token is not None:
        part.handle.token = result_token


def _some(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return ctx.expr(args[0])


def _new_token(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    return ctx.builder.emit(MakeToken, result=TOKEN, span=call.span).result


def _join_tokens(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    tokens = ctx.expr(args[0])
    assert isinstance(tokens, tuple)
    joined = merge_tokens(ctx, list(tokens), call.span)
    assert joined is not None
    return joined


def _get_tensor_token(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """The tensor's current token; an input has none (nothing in this kernel writes it), so
    a fresh one, which orders nothing."""
    handle = ctx.expr(args[0])
    assert isinstance(handle, TensorHandle)
    if handle.token is not None:
        return handle.token
    return ctx.builder.emit(MakeToken, result=TOKEN, span=call.span).result


def _print_tko(ctx: LoweringContext, call: A.Call | A.MethodCall, args: tuple) -> Lowered:
    """On the kernel's print chain (prints appear in program order), after `token`."""
    fmt = args[0]
    assert isinstance(fmt, A.StrLit)
    text = unescape(fmt.value)
    assert text is not None
    tile = ctx.expr(args[1])
    chain = ctx.print_chain
    assert chain is not None and isinstance(tile, Value)
    op = ctx.builder.emit(
        PrintTko,
        result_token=TOKEN,
        format=text,
        args=(tile,),
        token=chained(ctx, chain, optional_value(ctx, args[2]), call.span),
        span=call.span,
    )
    chain.token = op.result_token
    return op.result_token


TOKEN_LOWERINGS: dict[str, IntrinsicLowering] = {
    "some": _some,
    "new_token_unordered": _new_token,
    "join_tokens": _join_tokens,
    "get_tensor_token": _get_tensor_token,
    "print_tko": _print_tko,
}
