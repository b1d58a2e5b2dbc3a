"""Tile creation and shape manipulation: `constant(value, shape)`, `iota(shape)`,
`reshape`, `permute(t, const_array![..])`, `t.transpose()`, `extract(t, [i, ..])`,
`cat(a, b, dim)`, and the scalar <-> rank-0 tile relabels `scalar_to_tile`/`tile_to_scalar`.

Result shapes are computed from the operands (Rust infers them from annotations; a
disagreeing annotation is then reported by the `let`). `extract` is the exception: its
result shape comes only from the context, as in cuTile.
"""

from __future__ import annotations

from parser import messages
from parser.prelude.common import (
    check_tile_dims,
    const_int_arg,
    constant_arg,
    element_count,
    expected_type,
    scalar_arg,
    shape_arg,
    shape_text,
    static_value,
    target_elem,
    tile_arg,
)
from parser.prelude.spec import CallTyper, Intrinsic, Receiver
from parser.types import ArrayTy, Elem, ScalarTy, SemType, ShapeTy, TileTy

RANK0_I32 = TileTy(Elem.I32, ())


def _constant(call: CallTyper) -> SemType | None:
    expected = expected_type(call)
    hint = ScalarTy(expected.elem) if isinstance(expected, (ScalarTy, TileTy)) else None
    value = call.arg(0, hint)
    if value is None:
        return None
    if not isinstance(value, ScalarTy):
        call.report(messages.CONSTANT_NOT_SCALAR.at(call.args[0].span, found=value))
        return None
    dims = shape_arg(call, 1, "constant")
    if dims is None:
        return None
    if static_value(call, 0) is None:
        call.report(
            messages.CONSTANT_NOT_KNOWN.at(
                call.args[0].span, value=call.args[0].span.text, shape=call.args[1].span.text
            )
        )
        return None
    return TileTy(value.elem, dims)


def _reshape(call: CallTyper) -> SemType | None:
    source = tile_arg(call, 0, "reshape")
    dims = shape_arg(call, 1, "reshape") if source is not None else None
    if source is None or dims is None:
        return None
    have, want = element_count(source.shape), element_count(dims)
    if have != want:
        call.report(
            messages.RESHAPE_COUNT_MISMATCH.at(
                call.args[1].span,
                ((call.args[0].span, f"{have} elements"),),
                source=source,
                have=have,
                shape=shape_text(dims),
                want=want,
            )
        )
        return None
    return TileTy(source.elem, dims)


def _permutation(call: CallTyper, index: int, rank: int, fn: str) -> tuple[int, ...] | None:
    ty = call.arg(index)
    if ty is None:
        return None
    value = constant_arg(call, index)
    dims = getattr(ty, "dims", None)  # an `Array<{[..]}>` type that carries its values
    if isinstance(dims, tuple) and not isinstance(ty, ShapeTy):
        value = dims
    if (not isinstance(ty, ArrayTy) and dims is None) or not isinstance(value, tuple):
        entry = (
            messages.PERMUTATION_NOT_CONSTANT
            if isinstance(ty, ArrayTy)
            else messages.PERMUTATION_NOT_AN_ARRAY
        )
        call.report(entry.at(call.args[index].span, fn=fn, found=ty))
        return None
    if sorted(value) != list(range(rank)):
        call.report(
            messages.NOT_A_PERMUTATION.at(
                call.args[index].span, value=list(value), rank=rank, last=rank - 1
            )
        )
        return None
    return value


def _permute(call: CallTyper) -> SemType | None:
    source = tile_arg(call, 0, "permute")
    if source is None:
        return None
    permutation = _permutation(call, 1, len(source.shape), "permute")
    if permutation is None:
        return None
    return TileTy(source.elem, tuple(source.shape[p] for p in permutation))


def _transpose(call: CallTyper) -> SemType | None:
    source = tile_arg(call, 0, "transpose")
    if source is None:
        return None
    if len(source.shape) != 2:
        call.report(
            messages.TRANSPOSE_NEEDS_RANK_TWO.at(call.span, found=source, rank=len(source.shape))
        )
        return None
    rows, cols = source.shape
    return TileTy(source.elem, (cols, rows))


def _extract(call: CallTyper) -> SemType | None:
    source = tile_arg(call, 0, "extract")
    if source is None:
        return None
    rank = len(source.shape)
    indices = call.arg(1, ArrayTy(RANK0_I32, rank))
    if indices is None:
        return None
    if indices != ArrayTy(RANK0_I32, rank):
        call.report(
            messages.EXTRACT_INDICES_MISMATCH.at(call.args[1].span, rank=rank, found=indices)
        )
        return None
    return _extract_result(call, source)


def _extract_result(call: CallTyper, source: TileTy) -> SemType | None:
    expected = expected_type(call)
    if not isinstance(expected, TileTy):
        call.report(messages.EXTRACT_SHAPE_NOT_ANNOTATED.at(call.span))
        return None
    wanted = TileTy(source.elem, expected.shape)
    ok = len(expected.shape) == len(source.shape) and all(
        d > 0 and s % d == 0 for s, d in zip(source.shape, expected.shape, strict=True)
    )
    if not ok:
        call.report(
            messages.EXTRACT_NOT_DIVIDING.at(
                call.span, wanted=wanted, source=source, expected=expected
            )
        )
        return None
    return wanted


def _cat(call: CallTyper) -> SemType | None:
    lhs = tile_arg(call, 0, "cat")
    rhs = tile_arg(call, 1, "cat") if lhs is not None else None
    if lhs is None or rhs is None:
        return None
    dim = const_int_arg(call, 2, "dimension argument", "cat")
    if dim is None:
        return None
    rank = len(lhs.shape)
    fits = rhs.elem == lhs.elem and len(rhs.shape) == rank and 0 <= dim < rank
    if fits and all(lhs.shape[i] == rhs.shape[i] for i in range(rank) if i != dim):
        dims = tuple(
            a + b if i == dim else a
            for i, (a, b) in enumerate(zip(lhs.shape, rhs.shape, strict=True))
        )
        if not check_tile_dims(call, dims, call.span, "the result of `cat`"):
            return None
        return TileTy(lhs.elem, dims)
    if not 0 <= dim < rank:
        call.report(messages.CAT_DIM_OUT_OF_RANGE.at(call.args[2].span, dim=dim, rank=rank))
    else:
        call.report(messages.CAT_SHAPES_DIFFER.at(call.args[1].span, lhs=lhs, rhs=rhs, dim=dim))
    return None


def _iota(call: CallTyper) -> SemType | None:
    dims = shape_arg(call, 0, "iota")
    if dims is None:
        return None
    elem = target_elem(call, "iota", 0, "the element type")
    if elem is None:
        return None
    if len(dims) != 1 or not elem.is_integer or (elem.bits < 64 and dims[0] > 1 << elem.bits):
        call.report(messages.IOTA_UNSUPPORTED_RESULT.at(call.span, result=TileTy(elem, dims)))
        return None
    return TileTy(elem, dims)


def _scalar_to_tile(call: CallTyper) -> SemType | None:
    scalar = scalar_arg(call, 0, "scalar_to_tile")
    return None if scalar is None else TileTy(scalar.elem, ())


def _tile_to_scalar(call: CallTyper) -> SemType | None:
    tile = tile_arg(call, 0, "tile_to_scalar")
    if tile is None:
        return None
    if tile.shape:
        call.report(
            messages.NOT_RANK_ZERO.at(
                call.args[0].span, elem=tile.elem, found=tile, text=call.args[0].span.text
            )
        )
        return None
    return ScalarTy(tile.elem)


def _permute_array(call: CallTyper) -> SemType | None:
    """`permute_array(a, const_array![..])`: `result[i] = a[p[i]]` (an index array)."""
    source = call.arg(0)
    if source is None:
        return None
    if not (isinstance(source, ArrayTy) and source.element == ScalarTy(Elem.I32)):
        call.report(messages.NOT_AN_INDEX_ARRAY.at(call.args[0].span, found=source))
        return None
    if _permutation(call, 1, source.length, "permute_array") is None:
        return None
    return ArrayTy(source.element, source.length)


SHAPE_INTRINSICS: tuple[Intrinsic, ...] = (
    Intrinsic(
        "constant",
        "fn constant<E: ElementType, const S: [i32; N]>(value: E, shape: Shape<S>) -> Tile<E, S>",
        (2,),
        _constant,
        functions=("constant",),
    ),
    Intrinsic(
        "reshape",
        "fn reshape<E, const S: [i32; N], const R: [i32; M]>(source: Tile<E, S>, shape: "
        "Shape<R>) -> Tile<E, R>",
        (2,),
        _reshape,
        functions=("reshape",),
        methods=("reshape",),
        receiver=Receiver.TILE,
    ),
    Intrinsic(
        "permute",
        "fn permute<E, const A: [i32; N], const I: [i32; N], const R: [i32; N]>(source: "
        "Tile<E, A>, permutation: Array<I>) -> Tile<E, R>",
        (2,),
        _permute,
        functions=("permute",),
    ),
    Intrinsic(
        "permute_array",
        "fn permute_array<const I: [i32; N]>(source: [i32; N], permutation: Array<I>) -> [i32; N]",
        (2,),
        _permute_array,
        functions=("permute_array",),
    ),
    Intrinsic(
        "transpose",
        "fn transpose<E, const M: i32, const N: i32>(self: Tile<E, {[M, N]}>) -> Tile<E, {[N, M]}>",
        (1,),
        _transpose,
        functions=("transpose",),
        methods=("transpose",),
        receiver=Receiver.TILE,
    ),
    Intrinsic(
        "extract",
        "fn extract<E, const SIn: [i32; N], const SOut: [i32; N]>(source: Tile<E, SIn>, "
        "indices: [Tile<i32, {[]}>; N]) -> Tile<E, SOut>",
        (2,),
        _extract,
        functions=("extract",),
    ),
    Intrinsic(
        "cat",
        "fn cat<E, const SLhs: [i32; N], const SRhs: [i32; N], const SOut: [i32; N]>(lhs: "
        "Tile<E, SLhs>, rhs: Tile<E, SRhs>, dim: i32) -> Tile<E, SOut>",
        (3,),
        _cat,
        functions=("cat",),
    ),
    Intrinsic(
        "iota",
        "fn iota<E: ElementType, const S: [i32; 1]>(shape: Shape<S>) -> Tile<E, S>",
        (1,),
        _iota,
        functions=("iota",),
    ),
    Intrinsic(
        "scalar_to_tile",
        "fn scalar_to_tile<E: ElementType>(scalar: E) -> Tile<E, {[]}>",
        (1,),
        _scalar_to_tile,
        functions=("scalar_to_tile",),
    ),
    Intrinsic(
        "tile_to_scalar",
        "fn tile_to_scalar<E: ElementType>(tile: Tile<E, {[]}>) -> E",
        (1,),
        _tile_to_scalar,
        functions=("tile_to_scalar",),
    ),
)
