"""`--specialize none|auto|D[,D..]` parsing and the facts of an automatic variant."""

from __future__ import annotations

import pytest

from lowering.pipeline import CompileRequest, Stage, compile_kernel
from parser.spans import SourceFile
from parser.specialization import TensorFacts
from protos.generated.cutile.compile.v1 import contract_pb2 as pb
from service.cli.specialize_arg import (
    OCCUPANCY,
    ROWS,
    TRAILING,
    AutoVariant,
    SpecializeError,
    builds,
    kept_variants,
    parse_specialize,
    row_facts,
    variant_facts,
)
from tests.fake_cubin import fake_cubin

STATIC_ROWS = """\
#[cutile::module]
mod kernel {
    use cutile::core::*;

    #[cutile::entry()]
    fn rows<const B: i32>(
        z: &mut Tensor<f32, { [1, B] }>,
        x: &Tensor<f32, { [-1, 24] }>,
        s: f32,
    ) {
        let row = get_tile_block_id().0;
        let t: Tile<f32, { [1, B] }> = x.partition(const_shape![1, B]).load([row, 0i32]);
        let one: Tile<f32, { [1, 1] }> = scalar_to_tile(s).reshape(const_shape![1, 1]);
        let scale: Tile<f32, { [1, B] }> = one.broadcast(const_shape![1, B]);
        z.store(t * scale);
    }
}
"""


def _d(*divisors: int) -> tuple[AutoVariant, ...]:
    return tuple(AutoVariant(divisor=d) for d in divisors)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("auto", (OCCUPANCY, *_d(16), TRAILING, ROWS)),
        ("none", ()),
        ("16,8", _d(16, 8)),
        ("2,8,8", _d(8, 2)),
        (" AUTO ", (OCCUPANCY, *_d(16), TRAILING, ROWS)),
        ("rows", (ROWS,)),
        ("rows,16", (*_d(16), ROWS)),
        ("occupancy", (OCCUPANCY,)),
        ("16,rows,occupancy", (OCCUPANCY, *_d(16), ROWS)),
    ],
)
def test_parse(text: str, expected: tuple[AutoVariant, ...]) -> None:
    assert parse_specialize(text) == expected


@pytest.mark.parametrize("text", ["fast", "16,1", "32", "", "16;8", "row"])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(SpecializeError):
        parse_specialize(text)


def _contract() -> pb.LaunchContract:
    """rows(z: &mut Tensor<f32, {[1, B]}>, x: &Tensor<f32, {[-1, 24]}>, s: f32), plus a
    mapped output `m` of rank 1 and a rank-0 input `c`."""
    contract = pb.LaunchContract()
    contract.params.add(name="z", kind=pb.PARAM_KIND_TENSOR_OUT, rank=2, tile_shape=[1, 128])
    contract.params.add(name="x", kind=pb.PARAM_KIND_TENSOR_IN, rank=2, declared_shape=[-1, 24])
    contract.params.add(name="s", kind=pb.PARAM_KIND_SCALAR)
    contract.params.add(
        name="m", kind=pb.PARAM_KIND_TENSOR_OUT_MAPPED, rank=1, tile_shape=[8], map_shape=[1]
    )
    contract.params.add(name="c", kind=pb.PARAM_KIND_TENSOR_IN, rank=0)
    return contract


def test_every_extent_and_stride_but_the_unit_last_one_and_static_extents_keep_their_part() -> None:
    assert variant_facts(_contract(), 16) == (
        TensorFacts("m", (16,), (1,)),
        TensorFacts("x", (16, 8), (16, 1)),  # 24 is a multiple of 8, not of 16
        TensorFacts("z", (16, 16), (16, 1)),  # an output's type gives its tile, not its extent
    )
    assert variant_facts(_contract(), 4)[1] == TensorFacts("x", (4, 4), (4, 1))


def test_past_the_leading_extent_the_row_count_is_free_and_vectors_assume_nothing() -> None:
    assert variant_facts(_contract(), 16, leading_free=True) == (
        TensorFacts("x", (1, 8), (16, 1)),  # [4097, 24] meets it; rank-1 `m` assumes nothing
        TensorFacts("z", (1, 16), (16, 1)),
    )
    assert TRAILING.facts(_contract()) == variant_facts(_contract(), 16, leading_free=True)
    assert TRAILING.describe() == "divisible by 16 past the leading extent"


def test_no_variant_where_no_tensor_gains_anything() -> None:
    contract = pb.LaunchContract()
    contract.params.add(name="x", kind=pb.PARAM_KIND_TENSOR_IN, rank=1, declared_shape=[7])
    contract.params.add(name="p", kind=pb.PARAM_KIND_POINTER)
    assert variant_facts(contract, 16) == ()


def test_the_compiler_takes_the_facts_of_a_static_extent() -> None:
    """The facts never contradict a declared extent (which the compiler would refuse)."""
    facts = tuple(f for f in variant_facts(_contract(), 16) if f.param in ("x", "z"))
    request = CompileRequest(
        sources=(SourceFile("rows.rs", STATIC_ROWS),),
        entry="rows",
        generics=(("B", "8"),),
        specialization=facts,
    )
    result = compile_kernel(request, stop_after=Stage.BYTECODE)
    assert result.ok, [d.message for d in result.diagnostics]
    contradicted = (TensorFacts("x", (16, 16), (16, 1)),)
    refused = compile_kernel(
        CompileRequest(
            sources=request.sources,
            entry="rows",
            generics=request.generics,
            specialization=contradicted,
        ),
        stop_after=Stage.BYTECODE,
    )
    assert not refused.ok and "static extent 24" in refused.diagnostics[0].message


def test_rows_assume_16_byte_strides_and_no_extent() -> None:
    contract = pb.LaunchContract()
    contract.params.add(name="x", kind=pb.PARAM_KIND_TENSOR_IN, rank=2, dtype="bf16")
    contract.params.add(name="o", kind=pb.PARAM_KIND_TENSOR_OUT, rank=3, dtype="f32")
    contract.params.add(name="q", kind=pb.PARAM_KIND_TENSOR_IN, rank=2, dtype="f8e4m3fn")
    contract.params.add(name="d", kind=pb.PARAM_KIND_TENSOR_IN, rank=2, dtype="f64")
    contract.params.add(name="v", kind=pb.PARAM_KIND_TENSOR_IN, rank=1, dtype="f32")
    assert row_facts(contract, 16) == (
        TensorFacts("d", (), (2, 1)),
        TensorFacts("o", (), (4, 4, 1)),
        TensorFacts("q", (), (16, 1)),
        TensorFacts("x", (), (8, 1)),
    )
    assert ROWS.facts(contract) == row_facts(contract, 16)
    assert AutoVariant(divisor=16).describe() == "divisible by 16"
    assert ROWS.describe() == "16-byte rows"


def test_rows_gain_nothing_from_vectors_or_wide_elements() -> None:
    contract = pb.LaunchContract()
    contract.params.add(name="v", kind=pb.PARAM_KIND_TENSOR_IN, rank=1, dtype="bf16")
    contract.params.add(name="c", kind=pb.PARAM_KIND_TENSOR_IN, rank=2, dtype="f4e2m1fn")
    contract.params.add(name="d", kind=pb.PARAM_KIND_TENSOR_IN, rank=2, dtype="f64")
    assert row_facts(contract, 16) == (TensorFacts("d", (), (2, 1)),)
    assert row_facts(contract, 8) == ()  # 8 bytes is one f64: nothing to assume


def test_of_variants_with_one_machine_code_the_weakest_is_kept() -> None:
    a, g = fake_cubin(payload=b"a"), fake_cubin(payload=b"g")
    a_again = fake_cubin(symbol="other", payload=b"a")  # another cubin, the same code
    c = fake_cubin(payload=b"c")
    # strongest first; the second is the first's code again, the fourth the general's
    assert kept_variants(g, [a, a_again, c, g, None]) == [False, True, True, False, False]
    assert kept_variants(g, []) == []
    # a cubin that differs from the general one outside its code is no variant
    assert kept_variants(g, [fake_cubin(symbol="renamed", payload=b"g")]) == [False]


def test_an_occupancy_variant_is_built_where_the_contract_says_the_entry_takes_one() -> None:
    contract = _contract()
    assert not builds(OCCUPANCY, contract)
    contract.launch.takes_occupancy_variant = True
    assert builds(OCCUPANCY, contract)
    # facts variants build where they assume something, whatever the entry's hints
    divisible = AutoVariant(divisor=16)
    assert builds(divisible, contract)
    assert not builds(ROWS, contract)  # no element types in this contract: no row facts
    assert OCCUPANCY.describe() == "16-byte rows, occupancy 4 for 1024+ tile blocks"


def test_a_cubin_whose_machine_code_cannot_be_read_is_not_kept() -> None:
    general, other = fake_cubin(payload=b"g"), fake_cubin(payload=b"o")
    assert kept_variants(general, [b"not an ELF", other]) == [False, True]
    assert kept_variants(b"not an ELF", [other]) == [False]
