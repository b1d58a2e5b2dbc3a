"""Lowering of comparisons, `select` and the bitwise tile ops, assembled by tileiras."""

from __future__ import annotations

import re

from lowering.tileiras import Tileiras
from tests.parser.prelude_support import assembled_ir


def test_tile_comparisons_and_select(tileiras: Tileiras) -> None:
    body = """
    let i: Tile<i32, { [4, 64] }> = convert_tile(t);
    let u: Tile<u32, { [4, 64] }> = bitcast(i);
    let below = lt_tile(t, exp(t));
    let same = eq_tile(i, i);
    let over = ge_tile(u, u);
    let mask = andi(ori(below, same), xori(over, ne_tile(t, t)));
    let picked = select(mask, t, negf(t));
    z.store(select(gt_tile(picked, t), picked, select(le_tile(t, picked), t, picked)));
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= cmpf .*predicate = lt, ordering = ordered", ir)
    assert re.search(r"= cmpi .*predicate = eq, signedness = signed", ir)
    assert re.search(r"= cmpi .*predicate = ge, signedness = unsigned", ir)
    for op in ("andi", "ori", "xori"):
        assert re.search(rf"= {op} .* : tile<4x64xi1>", ir)
    assert len(re.findall(r"= select ", ir)) == 3


def test_explicit_predicates_and_shifts(tileiras: Tileiras) -> None:
    body = """
    let i: Tile<i32, { [4, 64] }> = convert_tile(t);
    let a = cmpi(i, i, predicate::GreaterThan);
    let b = cmpf(t, t, predicate::NotEqual, cmp_ordering::Unordered);
    let shifted = shri(shli(i, i, overflow::NoUnsignedWrap), i);
    let pick = select(andi(a, b), shifted, i);
    z.store(convert_tile(pick));
    """
    ir = assembled_ir(body, tileiras)
    assert re.search(r"= cmpi .*predicate = gt", ir)
    assert re.search(r"= cmpf .*predicate = ne, ordering = unordered", ir)
    assert re.search(r"= shli .*overflow = nuw", ir)
    assert re.search(r"= shri .*signedness = signed", ir)
