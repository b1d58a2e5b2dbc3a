"""`parser.unify`: binding a device function's generics from its written parameter types
and the argument types at one call."""

from __future__ import annotations

import pytest

from parser import ast_nodes as A
from parser.types import (
    DYNAMIC,
    Elem,
    GenericValue,
    PointerTileTy,
    PointerTy,
    RefTy,
    ScalarTy,
    SemType,
    ShapeTy,
    TensorTy,
    TileTy,
    TupleTy,
)
from parser.unify import Conflict, unify
from tests.parser.support import only_function


def written(params: str, generics: str = "<E: ElementType, const M: i32, const N: i32>") -> list:
    """The written types (AST) of a device function's parameters."""
    text = (
        "#[cutile::module]\n"
        "mod kernel {\n"
        "    use cutile::core::*;\n"
        f"    fn g{generics}({params}) {{}}\n"
        "}\n"
    )
    return [p.type for p in only_function(text, "g").params]


def bind(
    params: str,
    actual: list[SemType],
    names: set[str] | None = None,
    bound: dict[str, GenericValue] | None = None,
    generics: str = "<E: ElementType, const M: i32, const N: i32>",
) -> dict[str, GenericValue]:
    bound = {} if bound is None else bound
    names = {"E", "M", "N", "S"} if names is None else names
    for ty, act in zip(written(params, generics), actual, strict=True):
        unify(ty, act, names, bound)
    return bound


def test_an_element_generic_binds_from_a_scalar() -> None:
    assert bind("a: E", [ScalarTy(Elem.F16)]) == {"E": Elem.F16}


def test_a_shape_binds_its_const_generic() -> None:
    generics = "<const S: [i32; 2]>"
    assert bind("s: Shape<S>", [ShapeTy((8, 4))], generics=generics) == {"S": (8, 4)}
    assert bind("s: Shape<{ [M, 4] }>", [ShapeTy((16, 4))]) == {"M": 16}


def test_a_raw_pointer_binds_its_pointee() -> None:
    assert bind("p: *mut E", [PointerTy(Elem.F32)]) == {"E": Elem.F32}
    assert bind("p: *const E", [PointerTy(Elem.U8, mutable=False)]) == {"E": Elem.U8}


def test_a_tile_binds_its_element_and_every_named_dimension() -> None:
    got = bind("t: Tile<E, { [M, N] }>", [TileTy(Elem.BF16, (64, 32))])
    assert got == {"E": Elem.BF16, "M": 64, "N": 32}


def test_literal_dimensions_bind_nothing_and_are_not_checked_here() -> None:
    # Matching `64` against 128 is `_compatible`'s job after substitution, not unify's.
    got = bind("t: Tile<f32, { [64, N] }>", [TileTy(Elem.F32, (128, 16))])
    assert got == {"N": 16}


def test_a_whole_const_generic_array_binds_the_shape_tuple() -> None:
    generics = "<E: ElementType, const S: [i32; 2]>"
    assert bind("t: Tile<E, S>", [TileTy(Elem.F32, (8, 4))], generics=generics) == {
        "E": Elem.F32,
        "S": (8, 4),
    }
    braced = bind("t: Tile<E, { S }>", [TileTy(Elem.F32, (2, 2))], generics=generics)
    assert braced == {"E": Elem.F32, "S": (2, 2)}


def test_tensor_references_bind_through_the_reference() -> None:
    actual = RefTy(TensorTy(Elem.F32, (DYNAMIC, 128)), False)
    assert bind("x: &Tensor<E, { [-1, N] }>", [actual]) == {"E": Elem.F32, "N": 128}
    mutable = RefTy(TensorTy(Elem.I32, (256,)), True)
    assert bind("z: &mut Tensor<E, { [N] }>", [mutable]) == {"E": Elem.I32, "N": 256}


def test_a_dynamic_extent_never_binds_a_dimension_generic() -> None:
    actual = RefTy(TensorTy(Elem.F32, (DYNAMIC, DYNAMIC)), False)
    assert bind("x: &Tensor<E, { [M, N] }>", [actual]) == {"E": Elem.F32}


def test_tuples_bind_element_by_element() -> None:
    actual = TupleTy((TileTy(Elem.F16, (32,)), ScalarTy(Elem.F16)))
    assert bind("p: (Tile<E, { [N] }>, E)", [actual]) == {"E": Elem.F16, "N": 32}


def test_the_same_generic_bound_twice_to_equal_values_is_fine() -> None:
    got = bind(
        "a: Tile<E, { [N] }>, b: Tile<E, { [N] }>",
        [TileTy(Elem.F32, (64,)), TileTy(Elem.F32, (64,))],
    )
    assert got == {"E": Elem.F32, "N": 64}


@pytest.mark.parametrize(
    ("params", "actual", "name"),
    [
        ("a: Tile<E, { [N] }>, b: Tile<E, { [N] }>", [(Elem.F32, (64,)), (Elem.F32, (128,))], "N"),
        ("a: Tile<E, { [N] }>, b: Tile<E, { [N] }>", [(Elem.F32, (64,)), (Elem.F16, (64,))], "E"),
        ("a: Tile<f32, { [M, M] }>", [(Elem.F32, (64, 32))], "M"),
    ],
)
def test_conflicting_bindings_raise_conflict_naming_the_generic(params, actual, name) -> None:
    with pytest.raises(Conflict) as raised:
        bind(params, [TileTy(e, s) for e, s in actual])
    assert str(raised.value) == name


def test_a_conflict_with_an_explicit_turbofish_value_is_a_conflict() -> None:
    with pytest.raises(Conflict):
        bind("t: Tile<E, { [N] }>", [TileTy(Elem.F32, (64,))], bound={"N": 128})


def test_names_outside_the_generic_set_are_left_alone() -> None:
    # Explicit (turbofish) generics are removed from the set: unify must not rebind them.
    bound: dict[str, GenericValue] = {"N": 128}
    got = bind("t: Tile<E, { [N] }>", [TileTy(Elem.F32, (64,))], names={"E"}, bound=bound)
    assert got == {"N": 128, "E": Elem.F32}


@pytest.mark.parametrize(
    ("params", "actual"),
    [
        ("x: &Tensor<E, { [N] }>", TileTy(Elem.F32, (64,))),  # a tile for a reference
        ("t: Tile<E, { [N] }>", ScalarTy(Elem.F32)),  # a scalar for a tile
        ("p: (E, E)", ScalarTy(Elem.F32)),  # a scalar for a tuple
        ("a: E", TileTy(Elem.F32, (64,))),  # a tile for a scalar generic
    ],
)
def test_shapes_that_do_not_match_bind_nothing_and_raise_nothing(params, actual) -> None:
    # Mismatches are reported by the caller after substitution, with the parameter's span.
    assert bind(params, [actual]) == {}


def test_a_rank_mismatch_binds_the_element_but_no_dimension() -> None:
    assert bind("t: Tile<E, { [M, N] }>", [TileTy(Elem.F32, (64,))]) == {"E": Elem.F32}


def test_a_written_type_without_generics_binds_nothing() -> None:
    types = written("t: Tile<f32, { [64] }>, s: i32")
    bound: dict[str, GenericValue] = {}
    unify(types[0], TileTy(Elem.F32, (64,)), {"E", "N"}, bound)
    unify(types[1], ScalarTy(Elem.I32), {"E", "N"}, bound)
    assert bound == {}


def test_written_types_are_ast_nodes_with_spans() -> None:
    (ty,) = written("t: Tile<E, { [M, N] }>")
    assert isinstance(ty, A.PathType) and ty.name == "Tile"
    assert ty.span.text == "Tile<E, { [M, N] }>"


def test_pointers_and_pointer_tiles_bind_their_pointee_and_shape() -> None:
    assert bind("p: *mut E", [PointerTy(Elem.F16)]) == {"E": Elem.F16}
    got = bind("p: PointerTile<*mut E, { [M] }>", [PointerTileTy(Elem.I64, (64,))])
    assert got == {"E": Elem.I64, "M": 64}
