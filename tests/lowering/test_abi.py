"""The entry ABI: slot order, C types and natural-alignment offsets."""

from __future__ import annotations

from lowering.abi import entry_abi
from lowering.contract import SlotRole
from lowering.pipeline import Stage
from tests.lowering.kernels import compile_example, compile_text


def _abi(result):  # type: ignore[no-untyped-def]
    assert result.ok, result.diagnostics
    return entry_abi(result.kernel.signature)


def test_add_abi_matches_the_cutile_layout() -> None:
    slots, size = _abi(compile_example("add.rs", "add", {"B": "128"}, Stage.CHECK))
    rows = [(s.slot.param, s.slot.role, s.slot.axis, s.slot.ctype, s.slot.offset) for s in slots]
    assert rows == [
        (0, SlotRole.PTR, 0, "u64", 0),
        (0, SlotRole.DIM, 0, "i32", 8),
        (0, SlotRole.STRIDE, 0, "i32", 12),
        (0, SlotRole.PART_DIM, 0, "i32", 16),
        (0, SlotRole.PART_STRIDE, 0, "i32", 20),
        (1, SlotRole.PTR, 0, "u64", 24),
        (1, SlotRole.DIM, 0, "i32", 32),
        (1, SlotRole.STRIDE, 0, "i32", 36),
        (2, SlotRole.PTR, 0, "u64", 40),
        (2, SlotRole.DIM, 0, "i32", 48),
        (2, SlotRole.STRIDE, 0, "i32", 52),
    ]
    assert size == 56


def test_scalars_are_packed_with_natural_alignment() -> None:
    text = """
#[cutile::module]
mod k {
    use cutile::core::*;
    #[cutile::entry()]
    fn f<const B: i32>(flag: bool, h: f16, z: &mut Tensor<f32, { [B, 2] }>, d: f64, n: i32) {}
}
"""
    slots, size = _abi(compile_text(text, generics={"B": "4"}, stop_after=Stage.CHECK))
    by_param = {(s.slot.param, s.slot.role, s.slot.axis): s.slot for s in slots}
    assert (by_param[(0, SlotRole.VALUE, 0)].ctype, by_param[(0, SlotRole.VALUE, 0)].offset) == (
        "bool",
        0,
    )
    assert (by_param[(1, SlotRole.VALUE, 0)].ctype, by_param[(1, SlotRole.VALUE, 0)].offset) == (
        "f16",
        2,
    )
    assert by_param[(2, SlotRole.PTR, 0)].offset == 8
    # rank-2 output: 8 i32 slots after the pointer, then the f64 realigned to 8
    assert by_param[(2, SlotRole.PART_STRIDE, 1)].offset == 16 + 7 * 4
    assert by_param[(3, SlotRole.VALUE, 0)].offset == 48
    assert by_param[(4, SlotRole.VALUE, 0)].offset == 56
    assert size == 64
