"""Raw views (`parser.prelude.raw_views`): tensors made with `make_tensor_view`, partition
views made with an explicit token, and the unchecked view accesses; which of them need
`unsafe` follows cuTile Rust."""

from __future__ import annotations

import pytest

from parser import codes
from parser.types import TOKEN, Elem, PartitionTy, ShapeTy, TensorTy, TileTy
from tests.parser.prelude_support import compile_body, lets, the_error

# an unsafe entry over a raw pointer, with `tok` and the [n, 64] tensor `tv` made from it
RAW = {
    "sig": "p: *mut f16, n: i32",
    "qualifier": "unsafe ",
    "prelude": "let tok: Token = new_token_unordered();\n"
    "let shape: Shape<{ [-1, 64] }> = Shape::<{ [-1, 64] }> { dims: &[n] };\n"
    "let strides: Array<{ [64, 1] }> = Array::<{ [64, 1] }> { dims: &[] };\n"
    "let tv: Tensor<f16, { [-1, 64] }> = make_tensor_view(pointer_to_tile(p), shape, "
    "strides, tok);",
}
TILE = "let tile: Tile<f16, { [4, 64] }> = constant(0.0f16, const_shape![4, 64]);"


def test_a_made_tensor_is_partitioned_like_a_parameter() -> None:
    types = lets(
        "let parts = tv.partition(const_shape![4, 64]);\n"
        "let t = parts.load([0i32, 0i32]);\n"
        "let mut whole = tv.partition_full_mut(const_shape![4, 64]);\n"
        "let back = load_view_tko_mut(&whole, [1i32, 0i32], ordering::Weak, scope::TileBlock, "
        "None, tma::Enabled);\n"
        "let done = store_view_tko_mut(&mut whole, t, [0i32, 0i32], ordering::Release, "
        "scope::Device, Some(3), tma::Disabled);\n"
        "let dims = tv.shape();",
        **RAW,
    )
    assert types["tv"] == TensorTy(Elem.F16, (-1, 64))
    assert types["parts"] == PartitionTy(Elem.F16, (4, 64), mutable=False)
    assert types["whole"] == PartitionTy(Elem.F16, (4, 64), mutable=True, full=True)
    assert types["t"] == types["back"] == TileTy(Elem.F16, (4, 64))
    assert types["done"] == TOKEN
    assert types["dims"] == ShapeTy((-1, 64))


def test_partition_views_with_tokens_of_parameters() -> None:
    types = lets(
        "let tok = get_tensor_token(z);\n"
        "let read = make_partition_view(x, const_shape![4, 64], padding::NegInf, "
        "const_array![1, 0], tok);\n"
        "let plain = make_partition_view(x, const_shape![4, 64], padding::None, "
        "dim_map::Identity, tok);\n"
        "let mut write = unsafe { make_partition_view_mut(z, z.shape(), padding::None, tok) };\n"
        "let t2 = load_view_tko(&read, [0i32, 0i32], ordering::Weak, scope::TileBlock, None, "
        "tma::Enabled);\n"
        "unsafe { store_view_tko_mut(&mut write, t2, [0i32, 0i32], ordering::Weak, "
        "scope::TileBlock, None, tma::Enabled) };"
    )
    assert types["read"] == types["plain"] == PartitionTy(Elem.F32, (4, 64), mutable=False)
    assert types["write"] == PartitionTy(Elem.F32, (4, 64), mutable=True, full=True)


@pytest.mark.parametrize(
    ("body", "name"),
    [
        (
            "let q: PointerTile<*mut f32, { [] }> = int_to_ptr(constant(0i64, const_shape![]));\n"
            "let tv2 = make_tensor_view(q, const_shape![64], const_array![1], "
            "new_token_unordered());",
            "make_tensor_view",
        ),
        (
            "let w = make_partition_view_mut(z, z.shape(), padding::None, new_token_unordered());",
            "make_partition_view_mut",
        ),
    ],
)
def test_the_unsafe_constructors_need_unsafe(body: str, name: str) -> None:
    result = compile_body(body)
    errors = [d for d in result.diagnostics if d.is_error]
    assert [d.code for d in errors] == [codes.UNSAFE_REQUIRED], errors
    assert f"`{name}`" in errors[0].message


@pytest.mark.parametrize(
    ("body", "code", "message"),
    [
        (
            "let r = make_partition_view(z, const_shape![4, 64], padding::None, "
            "dim_map::Identity, new_token_unordered());",
            codes.UNSAFE_REQUIRED,
            "`make_partition_view` of an output reads tiles other blocks may be writing",
        ),
        (
            "let r = make_partition_view(x, const_shape![64], padding::None, dim_map::Identity, "
            "new_token_unordered());",
            codes.MISMATCHED_TYPES,
            "a rank-2 tensor needs a rank-2 tile shape, found rank 1",
        ),
        (
            "let r = make_partition_view(x, const_shape![4, 64], padding::None, "
            "const_array![0, 0], new_token_unordered());",
            codes.MISMATCHED_TYPES,
            "`[0, 0]` is not a permutation of the 2 dimensions of the tile",
        ),
        (
            "let r = make_partition_view(x, const_shape![4, 64], padding::Zero, "
            "dim_map::Identity, n);",
            codes.MISMATCHED_TYPES,
            "mismatched types: `make_partition_view` expects a `Token`, found `i32`",
        ),
        (
            "let r = x.partition(const_shape![4, 64]);\n"
            "let s = unsafe { store_view_tko_mut(&mut r, t, [0i32, 0i32], ordering::Weak, "
            "scope::TileBlock, None, tma::Enabled) };",
            codes.MISMATCHED_TYPES,
            "mismatched types: `store_view_tko_mut` expects a `&PartitionMut<..>`, found "
            "`Partition<f32, {[4, 64]}>`",
        ),
        (
            "let mut w = unsafe { z.partition_full_mut(const_shape![4, 64]) };\n"
            "let s = unsafe { store_view_tko_mut(&mut w, t, [0i32, 0i32], ordering::Acquire, "
            "scope::TileBlock, None, tma::Enabled) };",
            codes.UNSUPPORTED_TYPE,
            "`store_view_tko_mut` does not support `ordering::Acquire` (use one of "
            "`ordering::Weak`, `ordering::Relaxed`, `ordering::Release`)",
        ),
        (
            "let mut w = unsafe { z.partition_full_mut(const_shape![4, 64]) };\n"
            "let s = unsafe { store_view_tko_mut(&mut w, t, [0i32, 0i32], ordering::Weak, "
            "scope::TileBlock, Some(12), tma::Enabled) };",
            codes.GENERIC_ARGUMENT,
            "the latency of `store_view_tko_mut` must be in 1..=10, found 12",
        ),
    ],
)
def test_raw_view_misuse_is_reported(body: str, code: object, message: str) -> None:
    diagnostic = the_error(body)
    assert (diagnostic.code, diagnostic.message) == (code, message)


def test_make_tensor_view_checks_its_operands() -> None:
    wrong_rank = the_error(
        "let s2: Array<{ [1] }> = Array::<{ [1] }> { dims: &[] };\n"
        "let t2: Tensor<f16, { [-1, 64] }> = make_tensor_view(pointer_to_tile(p), shape, s2, "
        "tok);\n" + TILE,
        **RAW,
    )
    assert wrong_rank.message == "`make_tensor_view`: the shape has rank 2, the strides 1"
    tile_base = the_error(
        "let base = pointer_to_tile(p).broadcast(const_shape![2]);\n"
        "let t2 = make_tensor_view(base, shape, strides, tok);",
        **RAW,
    )
    assert tile_base.message == (
        "mismatched types: `make_tensor_view` takes a `PointerTile<*mut E, {[]}>` base, found "
        "`PointerTile<*mut f16, {[2]}>`"
    )


GSV = (
    "let gsv: GatherScatterView<f32, { [8, 64] }, 0> = unsafe { "
    "make_gather_scatter_view(x, const_shape![8, 64], padding::None) };\n"
    "let rows: Tile<i32, { [8] }> = constant(0i32, const_shape![8]);\n"
)
SV = (
    "let sv: StridedView<f32, { [4, 64] }, { [2, 1] }, { [1, 0] }> = unsafe { "
    "make_strided_view(x, const_shape![4, 64], padding::Zero) };\n"
)


def test_gather_scatter_and_strided_views_load_tiles_and_tokens() -> None:
    types = lets(
        GSV + SV + "let tok = new_token_unordered();\n"
        "let (g, gt) = unsafe { load_gather_scatter_view_tko(&gsv, rows, n, tok, "
        "ordering::Relaxed, scope::TileBlock) };\n"
        "let (s2, st) = unsafe { load_strided_view_tko(&sv, [n, 0i32], gt, ordering::Acquire, "
        "scope::Device) };"
    )
    assert str(types["gsv"]) == "GatherScatterView<f32, {[8, 64]}, 0>"
    assert str(types["sv"]) == "StridedView<f32, {[4, 64]}, {[2, 1]}, {[1, 0]}>"
    assert types["g"] == TileTy(Elem.F32, (8, 64)) and types["s2"] == TileTy(Elem.F32, (4, 64))
    assert types["gt"] == types["st"] == TOKEN


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "let v = unsafe { make_strided_view(x, const_shape![4, 64], padding::None) };",
            "type annotations needed for `make_strided_view`: the view's layout is in its type",
        ),
        (
            GSV + "let short: Tile<i32, { [4] }> = constant(0i32, const_shape![4]);\n"
            "let r = unsafe { load_gather_scatter_view_tko(&gsv, short, n, "
            "new_token_unordered(), ordering::Relaxed, scope::TileBlock) };",
            "mismatched types: `load_gather_scatter_view_tko` expects the sparse indices "
            "`Tile<i32, {[8]}>`, found `Tile<i32, {[4]}>`",
        ),
        (
            SV + "let r = unsafe { load_strided_view_tko(&sv, [n, 0i32], new_token_unordered(), "
            "ordering::Release, scope::Device) };",
            "`load_strided_view_tko` does not support `ordering::Release` (loads take "
            "`ordering::Weak`, `Relaxed` or `Acquire`)",
        ),
    ],
)
def test_tileir_view_misuse_is_reported(body: str, message: str) -> None:
    assert the_error(body).message == message


def test_tileir_views_need_unsafe() -> None:
    result = compile_body(GSV.replace("unsafe { ", "").replace(") };", ");"))
    (error,) = [d for d in result.diagnostics if d.is_error]
    assert error.code is codes.UNSAFE_REQUIRED and "`make_gather_scatter_view`" in error.message
