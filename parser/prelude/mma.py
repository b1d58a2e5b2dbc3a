"""Matrix multiply-accumulate: `mma(a, b, acc)` (`[M, K] x [K, N] + [M, N]`, or batched
`[B, M, K] x [B, K, N] + [B, M, N]`), the explicit `mmaf(a, b, acc)` /
`mmai(a, b, acc, signedness::X, signedness::Y)`, and the block-scaled
`mmaf_scaled(a, b, acc, a_scale, b_scale)` (fp8/fp4 operands, one scale per block of K
elements: `a_scale` is `[M, K / block]`, `b_scale` `[K / block, N]`).

The element rules are Tile IR's, read from the element table
(`client_stubs.element_table`: `IRElement.mma_accumulators`, `MMA_SCALE_BLOCKS`), which the
IR verifier (`lowering.ir.ops_matmul`) reads too: float operands with an accumulator they
support (f16/f8e4m3fn/f8e5m2 -> f16/f32, bf16/tf32/f32 -> f32, f64 -> f64); 8-bit integer
operands with an i32 (or u32) accumulator. fp4 operands take only `mmaf_scaled` here, as in
cuTile. The result has the accumulator's type.
"""

from __future__ import annotations

from collections.abc import Callable

from client_stubs.element_table import IR_ELEMENT_BY_NAME, MMA_SCALE_BLOCKS, PACKED
from parser import messages
from parser.prelude.common import marker_arg, shape_text, tile_arg
from parser.prelude.spec import CallTyper, Intrinsic
from parser.types import Elem, SemType, TileTy

# cuTile's plain mma leaves fp4 to `mmaf_scaled`, though Tile IR's `mmaf` takes it.
_SCALED_ONLY = frozenset({Elem.F4E2M1FN})


def mma_accumulators(elem: Elem) -> tuple[Elem, ...]:
    """The accumulator elements of mma operands of `elem` (in table order)."""
    if elem in _SCALED_ONLY or elem.spec.kind == PACKED:
        return ()
    allowed = IR_ELEMENT_BY_NAME[elem.spec.ir].mma_accumulators
    return tuple(e for e in Elem if e.spec.kind != PACKED and e.spec.ir in allowed)


def _shapes_ok(call: CallTyper, lhs: TileTy, rhs: TileTy, acc: TileTy, fn: str) -> bool:
    ranks = {len(lhs.shape), len(rhs.shape), len(acc.shape)}
    if len(ranks) != 1 or ranks.pop() not in (2, 3):
        call.report(
            messages.MMA_RANK_MISMATCH.at(
                call.span, fn=fn, lhs=len(lhs.shape), rhs=len(rhs.shape), acc=len(acc.shape)
            )
        )
        return False
    if len(lhs.shape) == 3 and not lhs.shape[0] == rhs.shape[0] == acc.shape[0]:
        call.report(
            messages.MMA_BATCH_MISMATCH.at(
                call.span, fn=fn, lhs=lhs.shape[0], rhs=rhs.shape[0], acc=acc.shape[0]
            )
        )
        return False
    (m, k), (k2, n) = lhs.shape[-2:], rhs.shape[-2:]
    if k != k2:
        call.report(
            messages.MMA_INNER_MISMATCH.at(
                call.args[1].span,
                ((call.args[0].span, f"K = {k}"),),
                fn=fn,
                lhs=shape_text(lhs.shape),
                k=k,
                rhs=shape_text(rhs.shape),
                k2=k2,
            )
        )
        return False
    if acc.shape[-2:] != (m, n):
        want = (*lhs.shape[:-2], m, n)
        call.report(
            messages.MMA_ACCUMULATOR_MISMATCH.at(
                call.args[2].span,
                fn=fn,
                lhs=shape_text(lhs.shape),
                rhs=shape_text(rhs.shape),
                want=shape_text(want),
                found=shape_text(acc.shape),
            )
        )
        return False
    return True


def _elements_ok(call: CallTyper, lhs: TileTy, rhs: TileTy, acc: TileTy, fn: str) -> bool:
    if rhs.elem != lhs.elem:
        call.report(
            messages.MMA_OPERAND_ELEMENTS_DIFFER.at(
                call.args[1].span,
                ((call.args[0].span, f"this is `{lhs}`"),),
                fn=fn,
                lhs=lhs.elem,
                rhs=rhs.elem,
            )
        )
        return False
    allowed = _allowed(fn, lhs.elem)
    if acc.elem in allowed:
        return True
    if allowed:
        want = " or ".join(f"`{e}`" for e in allowed)
        call.report(
            messages.MMA_ACCUMULATOR_ELEMENT.at(
                call.args[2].span, fn=fn, elem=lhs.elem, want=want, found=acc.elem
            )
        )
    else:
        call.report(messages.MMA_OPERAND_ELEMENT.at(call.args[0].span, fn=fn, elem=lhs.elem))
    return False


def _allowed(fn: str, elem: Elem) -> tuple[Elem, ...]:
    allowed = mma_accumulators(elem)
    if fn == "mmaf":
        return allowed if elem.is_float else ()
    if fn == "mmai":
        return (Elem.I32,) if not elem.is_float and allowed else ()
    return allowed


def _mma(fn: str) -> Callable[[CallTyper], SemType | None]:
    def rule(call: CallTyper) -> SemType | None:
        tiles = [tile_arg(call, i, fn) for i in range(3)]
        if any(t is None for t in tiles):
            return None
        lhs, rhs, acc = tiles
        assert lhs is not None and rhs is not None and acc is not None
        if not _elements_ok(call, lhs, rhs, acc, fn) or not _shapes_ok(call, lhs, rhs, acc, fn):
            return None
        if fn == "mmai" and any(marker_arg(call, i, "signedness", fn) is None for i in (3, 4)):
            return None
        return acc

    return rule


def _scaled_elements(call: CallTyper, tiles: list[TileTy]) -> tuple[int, ...] | None:
    """The block sizes the operand and scale elements allow."""
    lhs, rhs, acc, lhs_scale, rhs_scale = tiles
    if rhs.elem != lhs.elem or rhs_scale.elem != lhs_scale.elem:
        operands = rhs.elem != lhs.elem
        index, first = (1, lhs) if operands else (4, lhs_scale)
        entry = messages.SCALED_OPERANDS_DIFFER if operands else messages.SCALES_DIFFER
        call.report(entry.at(call.args[index].span, expected=first.elem, found=tiles[index].elem))
        return None
    if acc.elem is not Elem.F32:
        call.report(messages.SCALED_ACCUMULATOR_NOT_F32.at(call.args[2].span, found=acc))
        return None
    blocks = MMA_SCALE_BLOCKS.get(lhs_scale.elem.spec.ir, {}).get(lhs.elem.spec.ir)
    if blocks is None:
        call.report(
            messages.SCALED_ELEMENTS_UNSUPPORTED.at(
                call.args[3].span, elem=lhs.elem, scale=lhs_scale.elem
            )
        )
    return blocks


def _scaled_shapes(call: CallTyper, tiles: list[TileTy], blocks: tuple[int, ...]) -> bool:
    lhs, rhs, _, lhs_scale, rhs_scale = tiles
    batch, (m, k), n = lhs.shape[:-2], lhs.shape[-2:], rhs.shape[-1]
    groups = lhs_scale.shape[-1] if lhs_scale.shape else 0
    want_lhs, want_rhs = (*batch, m, groups), (*batch, groups, n)
    if lhs_scale.shape != want_lhs or rhs_scale.shape != want_rhs:
        index = 3 if lhs_scale.shape != want_lhs else 4
        want = want_lhs if index == 3 else want_rhs
        call.report(
            messages.SCALE_SHAPES_MISMATCH.at(
                call.args[index].span,
                lhs=shape_text(lhs.shape),
                rhs=shape_text(rhs.shape),
                groups=groups,
                want_lhs=shape_text(want_lhs),
                want_rhs=shape_text(want_rhs),
                found=shape_text(tiles[index].shape),
                want=shape_text(want),
            )
        )
        return False
    if groups and k % groups == 0 and k // groups in blocks:
        return True
    sizes = " or ".join(str(b) for b in blocks)
    call.report(
        messages.SCALE_GROUPS_MISMATCH.at(
            call.args[3].span, elem=lhs.elem, sizes=sizes, k=k, groups=groups
        )
    )
    return False


def _mmaf_scaled(call: CallTyper) -> SemType | None:
    tiles = [tile_arg(call, i, "mmaf_scaled") for i in range(5)]
    if any(t is None for t in tiles):
        return None
    lhs, rhs, acc, *_ = tiles
    assert lhs is not None and rhs is not None and acc is not None
    blocks = _scaled_elements(call, tiles)  # type: ignore[arg-type]
    if blocks is None or not _shapes_ok(call, lhs, rhs, acc, "mmaf_scaled"):
        return None
    if not _scaled_shapes(call, tiles, blocks):  # type: ignore[arg-type]
        return None
    return acc


MMA_INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic(
        "mma",
        "fn mma<E1, E2, const M: i32, const N: i32, const K: i32>(lhs: Tile<E1, {[M, K]}>, "
        "rhs: Tile<E1, {[K, N]}>, acc: Tile<E2, {[M, N]}>) -> Tile<E2, {[M, N]}>",
        (3,),
        _mma("mma"),
        functions=("mma",),
    ),
    Intrinsic(
        "mmaf",
        "fn mmaf<EIn, EOut, const LHS: [i32; N], const RHS: [i32; N], const ACC: [i32; N]>(lhs: "
        "Tile<EIn, LHS>, rhs: Tile<EIn, RHS>, acc: Tile<EOut, ACC>) -> Tile<EOut, ACC>",
        (3,),
        _mma("mmaf"),
        functions=("mmaf",),
    ),
    Intrinsic(
        "mmai",
        "fn mmai<EIn, const LHS: [i32; N], const RHS: [i32; N], const ACC: [i32; N], SL, SR>(lhs: "
        "Tile<EIn, LHS>, rhs: Tile<EIn, RHS>, acc: Tile<i32, ACC>, signedness_lhs: SL, "
        "signedness_rhs: SR) -> Tile<i32, ACC>",
        (5,),
        _mma("mmai"),
        functions=("mmai",),
    ),
    Intrinsic(
        "mmaf_scaled",
        "fn mmaf_scaled<EIn, EScale, const LHS: [i32; N], const RHS: [i32; N], const ACC: "
        "[i32; N], const LHS_SCALE: [i32; N], const RHS_SCALE: [i32; N]>(lhs: Tile<EIn, LHS>, "
        "rhs: Tile<EIn, RHS>, acc: Tile<f32, ACC>, lhs_scale: Tile<EScale, LHS_SCALE>, "
        "rhs_scale: Tile<EScale, RHS_SCALE>) -> Tile<f32, ACC>",
        (5,),
        _mmaf_scaled,
        functions=("mmaf_scaled",),
    ),
)
