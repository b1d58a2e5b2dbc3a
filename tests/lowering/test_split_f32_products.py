"""`lowering.split_f32_products`: an f32 x f32 `mmaf` the tensor cores take becomes three
TF32 products summed from zero, added to the accumulator in f32 (each operand split into a
TF32 head and tail), unless the request asks for exact f32 products; every other product is
left as it was. The arithmetic the pass emits is evaluated here with numpy: TF32 as f32
rounded to 10 fraction bits, nearest even, as `ftof` rounds, and a product's sum as the tensor
cores keep it, in f32 truncated toward zero after every 8 of k. So a wrong term, a wrong split
or a k-loop chained through the tensor cores shows up as lost accuracy."""

from __future__ import annotations

import numpy as np
import pytest

from lowering.ir.core import Block, Function, Module, Op, Value, walk
from lowering.ir.ops_arith import AddF, SubF
from lowering.ir.ops_convert import FToF
from lowering.ir.ops_core import Constant
from lowering.ir.ops_matmul import MmaF
from lowering.ir.printer import print_module
from lowering.ir.types import ElementType, TileType
from lowering.pipeline import CompileRequest, CompileResult, Stage, compile_kernel
from lowering.split_f32_products import on_tensor_cores, split_f32_products
from parser.render import render
from parser.spans import SourceFile

F16, F32, TF32 = ElementType.F16, ElementType.F32, ElementType.TF32


def gemm(element: str, two_products: bool = False) -> str:
    """cutile-rs's `gemm.rs` shape: one output tile, a k-loop of mma; `two_products` also
    multiplies the x tile a second time (its split is reused)."""
    second = "tile_z = mma(tile_x, tile_y, tile_z);" if two_products else ""
    return f"""
#[cutile::module]
mod k {{
    use cutile::core::*;
    #[cutile::entry()]
    fn f<const BM: i32, const BN: i32, const BK: i32>(
        z: &mut Tensor<{element}, {{ [BM, BN] }}>,
        x: &Tensor<{element}, {{ [-1, -1] }}>,
        y: &Tensor<{element}, {{ [-1, -1] }}>,
    ) {{
        let part_x = x.partition(const_shape![BM, BK]);
        let part_y = y.partition(const_shape![BK, BN]);
        let pid: (i32, i32, i32) = get_tile_block_id();
        let mut tile_z = load_tile_mut(z);
        for i in 0i32..num_tiles(&part_x, 1) {{
            let tile_x = part_x.load([pid.0, i]);
            let tile_y = part_y.load([i, pid.1]);
            tile_z = mma(tile_x, tile_y, tile_z);
            {second}
        }}
        z.store(tile_z);
    }}
}}
"""


def lower(text: str, tiles: tuple[int, int, int] = (64, 64, 32), exact: bool = False) -> Module:
    generics = tuple(zip(("BM", "BN", "BK"), map(str, tiles), strict=True))
    request = CompileRequest((SourceFile("k.rs", text),), "f", generics, exact_f32_products=exact)
    result: CompileResult = compile_kernel(request, stop_after=Stage.IR)
    assert result.ok, [render(d) for d in result.diagnostics]
    assert result.ir is not None
    return result.ir


def products(module: Module) -> list[MmaF]:
    return [op for op in walk(module.functions[0].body) if isinstance(op, MmaF)]


def operand_elements(module: Module) -> list[tuple[object, object, object]]:
    return [(p.lhs.type.element, p.rhs.type.element, p.acc.type.element) for p in products(module)]  # type: ignore[union-attr]


def test_an_f32_product_becomes_three_tf32_products_added_to_the_accumulator() -> None:
    module = lower(gemm("f32"))
    assert operand_elements(module) == [(TF32, TF32, F32)] * 3
    ops = list(walk(module.functions[0].body))
    # each product feeds the next, from zero; their sum is added to the loop's accumulator
    first, second, third = products(module)
    assert second.acc == first.result and third.acc == second.result
    (zero,) = [op for op in ops if isinstance(op, Constant) and op.result == first.acc]
    assert zero.values == (0.0,)
    (added,) = [op for op in ops if isinstance(op, AddF)]
    assert added.rhs == third.result and added.lhs.type == third.result.type
    # the small terms first: a.lo @ b.hi, a.hi @ b.lo, then a.hi @ b.hi
    assert first.rhs == third.rhs and second.lhs == third.lhs
    assert first.lhs != third.lhs and second.rhs != third.rhs


def test_a_split_operand_is_reused_by_later_products() -> None:
    module = lower(gemm("f32", two_products=True))
    assert len(products(module)) == 6
    conversions = [op for op in walk(module.functions[0].body) if isinstance(op, FToF)]
    assert len(conversions) == 3 * 2  # head, head back to f32, tail: for x and y once each


def test_a_product_from_a_zero_constant_starts_there_and_adds_nothing() -> None:
    text = gemm("f32").replace(
        "tile_z = mma(tile_x, tile_y, tile_z);",
        "tile_z = mma(tile_x, tile_y, constant(0.0f32, const_shape![BM, BN])) + tile_z;",
    )
    module = lower(text)
    ops = list(walk(module.functions[0].body))
    first = products(module)[0]
    assert any(isinstance(op, Constant) and op.result == first.acc for op in ops)
    zeros = [op for op in ops if isinstance(op, Constant) and op.result.type == first.acc.type]
    assert len(zeros) == 1
    assert len([op for op in ops if isinstance(op, AddF)]) == 1  # the source's own `+`


def test_exact_f32_products_keep_the_product_as_written() -> None:
    assert operand_elements(lower(gemm("f32"), exact=True)) == [(F32, F32, F32)]


# what tileiras 13.5 made of TF32 products ([M, N]; cuobjdump -sass, 2026-12-05)
ON_FFMA = [(16, 16), (32, 8), (8, 64), (8, 128), (128, 4), (64, 4), (256, 2), (2, 256), (512, 1)]
ON_TENSOR_CORES = [(64, 8), (64, 16), (128, 8), (256, 8), (16, 32), (32, 16), (16, 64), (32, 32)]


def test_the_products_split_are_those_tileiras_puts_on_the_tensor_cores() -> None:
    assert not any(on_tensor_cores(m, n) for m, n in ON_FFMA)
    assert all(on_tensor_cores(m, n) for m, n in ON_TENSOR_CORES)


@pytest.mark.parametrize("tiles", [(16, 16, 8), (16, 16, 32), (128, 4, 16), (8, 64, 16)])
def test_a_product_tileiras_keeps_on_ffma_is_not_split(tiles: tuple[int, int, int]) -> None:
    split, exact = lower(gemm("f32"), tiles), lower(gemm("f32"), tiles, exact=True)
    assert print_module(split) == print_module(exact)


@pytest.mark.parametrize("tiles", [(16, 32, 8), (32, 16, 8), (64, 8, 16)])
def test_the_smallest_tensor_core_products_are_split(tiles: tuple[int, int, int]) -> None:
    assert operand_elements(lower(gemm("f32"), tiles)) == [(TF32, TF32, F32)] * 3


def test_half_precision_products_are_untouched() -> None:
    split, exact = lower(gemm("f16")), lower(gemm("f16"), exact=True)
    assert print_module(split) == print_module(exact)


# The emitted arithmetic, evaluated


def tf32(x: np.ndarray) -> np.ndarray:
    """f32 rounded to TF32 (10 fraction bits), nearest even, kept in f32."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    dropped = 13
    half = 1 << (dropped - 1)
    odd = (bits >> dropped) & 1
    rounded = ((bits + half - 1 + odd) >> dropped) << dropped
    return (rounded & 0xFFFFFFFF).astype(np.uint32).view(np.float32)


def tensor_core_sum(acc: np.ndarray, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """`lhs @ rhs + acc` as the tensor cores sum it: exact products, the running f32 sum
    truncated toward zero after every 8 of k."""
    total = acc.astype(np.float32)
    for k in range(0, lhs.shape[1], 8):
        exact = total.astype(np.float64) + lhs[:, k : k + 8].astype(np.float64) @ rhs[k : k + 8]
        nearest = exact.astype(np.float32)
        too_far = np.abs(nearest.astype(np.float64)) > np.abs(exact)
        total = np.where(too_far, np.nextafter(nearest, np.float32(0)), nearest)
    return total


def evaluate(ops: tuple[Op, ...], env: dict[int, np.ndarray]) -> None:
    for op in ops:
        if isinstance(op, Constant):
            env[op.result.id] = np.full(op.result.type.shape, op.values[0], np.float32)  # type: ignore[union-attr]
        elif isinstance(op, FToF):
            source = env[op.source.id]
            to = op.result.type.element  # type: ignore[union-attr]
            env[op.result.id] = tf32(source) if to is TF32 else source.astype(np.float32)
        elif isinstance(op, SubF):
            env[op.result.id] = (env[op.lhs.id] - env[op.rhs.id]).astype(np.float32)
        elif isinstance(op, AddF):
            env[op.result.id] = (env[op.lhs.id] + env[op.rhs.id]).astype(np.float32)
        elif isinstance(op, MmaF):
            env[op.result.id] = tensor_core_sum(env[op.acc.id], env[op.lhs.id], env[op.rhs.id])
        else:
            raise AssertionError(f"unexpected op {op.NAME}")


def split_product(a: np.ndarray, b: np.ndarray, acc: np.ndarray) -> np.ndarray:
    m, k = a.shape
    n = b.shape[1]
    values = [
        Value(0, TileType(F32, (m, k))),
        Value(1, TileType(F32, (k, n))),
        Value(2, TileType(F32, (m, n))),
        Value(3, TileType(F32, (m, n))),
    ]
    mma = MmaF(result=values[3], lhs=values[0], rhs=values[1], acc=values[2])
    function = Function("f", tuple(values[:3]), Block((), (mma,)))
    (rewritten,) = split_f32_products(Module((function,))).functions
    env = {0: a, 1: b, 2: acc}
    evaluate(rewritten.body.ops, env)
    return env[3]


def k_loop(a: np.ndarray, b: np.ndarray, tile: int, step) -> np.ndarray:  # type: ignore[no-untyped-def]
    """A GEMM main loop: the accumulator carried over k-tiles of `tile` by `step`."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(0, a.shape[1], tile):
        acc = step(a[:, k : k + tile], b[k : k + tile], acc)
    return acc


def test_a_k_loop_of_three_products_is_as_accurate_as_f32() -> None:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((16, 2048)).astype(np.float32)
    b = rng.standard_normal((2048, 32)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(exact).max()

    def error(step) -> float:  # type: ignore[no-untyped-def]
        return float(np.abs(k_loop(a, b, 32, step) - exact).max() / scale)

    ffma = error(lambda x, y, acc: (acc + (x @ y)).astype(np.float32))
    one_tf32 = error(lambda x, y, acc: tensor_core_sum(acc, tf32(x), tf32(y)))
    chained = error(  # the three products chained into the accumulator across the loop
        lambda x, y, acc: tensor_core_sum(
            tensor_core_sum(tensor_core_sum(acc, x - tf32(x), tf32(y)), tf32(x), y - tf32(y)),
            tf32(x),
            tf32(y),
        )
    )
    ours = error(split_product)
    assert one_tf32 > 1e-4  # a single TF32 product loses about three decimal digits
    assert chained > 4 * ffma  # the tensor cores' truncation, 2048 / 8 times over
    assert ours < 2 * max(ffma, 2.0**-24), (ours, ffma, chained)


def test_tf32_rounds_to_ten_fraction_bits_nearest_even() -> None:
    ulp = 2.0**-10
    x = np.array([1 + ulp / 2, 1 + 3 * ulp / 2, 1 + ulp / 2 + 2.0**-20, -1 - ulp], np.float32)
    assert tf32(x).tolist() == [1.0, 1 + 2 * ulp, 1 + ulp, -1 - ulp]
