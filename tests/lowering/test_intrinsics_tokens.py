"""Lowering of tokens (`lowering.intrinsics.tokens`): `make_token`, `join_tokens`,
`print_tko` on the print chain, and tokens the kernel passes joining the chains the
compiler threads, so an access is ordered after both (Tile IR orders memory only through
tokens); the bytecode round-trips through tileirdisasm and assembles."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lowering.ir.core import walk
from lowering.ir.ops_core import JoinTokens, MakeToken
from lowering.ir.ops_debug import PrintTko
from lowering.ir.ops_memory import LoadPtrTko, MakePartitionView, StorePtrTko, StoreViewTko
from lowering.ir.printer import print_module
from lowering.pipeline import Stage
from lowering.tileiras import Tileiras
from tests.lowering.kernels import compile_text

JOINED = """
#[cutile::module]
mod k {
    use cutile::core::*;

    #[cutile::entry()]
    fn f<const S: [i32; 1]>(output: &mut Tensor<f32, S>) {
        let first: Token = new_token_unordered();
        let second: Token = new_token_unordered();
        let joined: Token = join_tokens(&[first, second]);
        let shape = output.shape();
        let tile: Tile<f32, S> = constant(1.0, shape);
        let printed: Token = print_tko("value: %f\\n", tile, Some(joined));
        let mut whole: PartitionMut<f32, S> =
            unsafe { make_partition_view_mut(output, shape, padding::None, printed) };
        unsafe {
            store_view_tko_mut(&mut whole, tile, [0i32], ordering::Weak, scope::TileBlock,
                None, tma::Enabled);
        }
        output.store(tile);
    }
}
"""

USER_TOKENS = """
#[cutile::module]
mod k {
    use cutile::core::*;

    #[cutile::entry()]
    fn f(out: &mut Tensor<f32, { [64] }>) {
        let seed: Tile<i64, { [64] }> = constant(0i64, const_shape![64]);
        let ints: PointerTile<*mut i64, { [64] }> = int_to_ptr(seed);
        let ptrs: PointerTile<*mut f32, { [64] }> = ptr_to_ptr(ints);
        let mine: Token = new_token_unordered();
        let (v, after_load): (Tile<f32, { [64] }>, Token) = load_ptr_tko(ptrs, ordering::Relaxed,
            Some(scope::Device), None, None, Some(mine), Latency::<3>);
        let stored: Token = store_ptr_tko(ptrs, v, ordering::Release, Some(scope::System), None,
            Some(after_load), Latency::<0>);
        let again = store_ptr_tko(ptrs, v, ordering::Weak, None::<scope::TileBlock>, None,
            Some(mine), Latency::<0>);
        out.store(v);
    }
}
"""


def _ops(result, kind):  # type: ignore[no-untyped-def]
    (function,) = result.ir.functions
    return [op for op in walk(function.body) if isinstance(op, kind)]


def test_joined_tokens_order_the_print_and_the_view() -> None:
    result = compile_text(JOINED, generics={"S": "[128]"}, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    (join, *merges) = _ops(result, JoinTokens)
    made = [op.result for op in _ops(result, MakeToken)]
    assert join.tokens[0] in made and join.tokens[1] in made
    (printed,) = _ops(result, PrintTko)
    assert printed.format == "value: %f\n"
    # the print comes after the kernel's print chain and the joined token
    assert printed.token is not None and join.result in merges[0].tokens
    assert printed.token == merges[0].result
    # the view's first store waits for the print (merged into the output's chain)
    raw_store, block_store = _ops(result, StoreViewTko)
    assert raw_store.token == merges[1].result and printed.result_token in merges[1].tokens
    assert block_store.token == raw_store.result_token
    assert len(_ops(result, MakePartitionView)) == 1  # the whole output once, shared


def test_tokens_the_kernel_passes_join_the_raw_chain() -> None:
    result = compile_text(USER_TOKENS, stop_after=Stage.IR)
    assert result.ok, result.diagnostics
    (load,) = _ops(result, LoadPtrTko)
    first, second = _ops(result, StorePtrTko)
    joins = _ops(result, JoinTokens)
    text = print_module(result.ir)  # type: ignore[arg-type]
    # the load waits for the chain's start and `mine`
    assert load.token == joins[0].result and len(joins[0].tokens) == 2
    assert "ordering = relaxed, scope = device, hints = [default = {latency = 3}]" in text
    # `after_load` is the chain itself: no join
    assert first.token == load.result_token
    assert "ordering = release, scope = system" in text
    # an older token passed again still comes after the chain's latest access
    assert second.token == joins[1].result
    assert set(joins[1].tokens) == {first.result_token, joins[0].tokens[1]}


@pytest.mark.tileiras
def test_tokens_disassemble_and_assemble(
    disassemble: Callable[[bytes], str], tileiras: Tileiras
) -> None:
    result = compile_text(JOINED, generics={"S": "[128]"}, stop_after=Stage.CUBIN)
    assert result.ok, result.diagnostics
    text = disassemble(result.bytecode)  # type: ignore[arg-type]
    assert text.count("make_token") >= 2 and "join_tokens" in text
    assert 'print_tko "value: %f\\0A"' in text
    assert result.cubin
    users = compile_text(USER_TOKENS, stop_after=Stage.CUBIN)
    assert users.ok and users.cubin, users.diagnostics
    text = disassemble(users.bytecode)  # type: ignore[arg-type]
    assert "load_ptr_tko relaxed device" in text and "store_ptr_tko release sys" in text
