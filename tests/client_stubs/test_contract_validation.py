"""validate_contract fails closed on anything it does not fully understand."""

from __future__ import annotations

import pytest

from client_stubs import ContractError, validate_contract
from protos.generated.cutile.compile.v1 import contract_pb2 as pb


def test_add_contract_flattens(add):
    spec = validate_contract(add)
    assert [p.name for p in spec.params] == ["z", "x", "y"]
    assert [p.kind for p in spec.params] == ["TENSOR_OUT", "TENSOR_IN", "TENSOR_IN"]
    assert spec.params[0].tile_shape == (128,) and spec.params[1].declared_shape == (-1,)
    assert spec.grid_outputs == (0,)
    assert spec.param_buffer_bytes == 56
    assert spec.block == (1, 1, 1) and spec.generics == (("B", "128"),)
    assert spec.slot_offsets[-1] == 52


def test_unknown_schema_version(add):
    add.schema_version = 2
    with pytest.raises(ContractError, match="schema_version 2"):
        validate_contract(add)


def test_missing_entry_symbol(add):
    add.kernel.entry_symbol = ""
    with pytest.raises(ContractError, match="entry_symbol"):
        validate_contract(add)


def test_unknown_dtype(add):
    add.params[1].dtype = "f8e4m3"  # not a cuTile spelling (that is f8e4m3fn)
    with pytest.raises(ContractError, match="unknown dtype"):
        validate_contract(add)


def test_param_index_must_match_position(add):
    add.params[1].index = 2
    with pytest.raises(ContractError, match="position"):
        validate_contract(add)


def test_slot_size_must_match_ctype(add):
    add.abi[1].size = 8
    with pytest.raises(ContractError, match="size 8"):
        validate_contract(add)


def test_unknown_ctype(add):
    add.abi[1].ctype = "i128"
    with pytest.raises(ContractError, match="unknown ctype"):
        validate_contract(add)


def test_overlapping_slots(add):
    add.abi[2].offset = 8
    with pytest.raises(ContractError, match="overlap"):
        validate_contract(add)


def test_buffer_smaller_than_slots(add):
    add.launch.param_buffer_bytes = 40
    with pytest.raises(ContractError, match="param_buffer_bytes"):
        validate_contract(add)


def test_buffer_past_the_drivers_limit_is_never_allocated(add):
    add.launch.param_buffer_bytes = 2**32 - 1  # a hostile contract: 4 GiB of parameters
    with pytest.raises(ContractError, match="past the driver's limit of 32764 bytes"):
        validate_contract(add)
    add.launch.param_buffer_bytes = 0  # then the last slot's end decides
    add.abi[-1].offset = 40000
    with pytest.raises(ContractError, match="40004 bytes is past"):
        validate_contract(add)


def test_every_param_needs_each_of_its_slots_once(add, saxpy):
    del saxpy.abi[0]  # the scalar's VALUE slot
    with pytest.raises(ContractError, match="param 0 `a` has no VALUE slot, where it needs one"):
        validate_contract(saxpy)
    add.abi[10].CopyFrom(add.abi[9])  # y: DIM twice, no STRIDE
    add.abi[10].offset = 52
    with pytest.raises(ContractError, match="param 2 `y` has 2 DIM slots for axis 0"):
        validate_contract(add)


def test_hostile_text_is_quoted_as_ascii(add):
    add.abi[1].ctype = "it's\x1b[2J"
    with pytest.raises(ContractError) as raised:
        validate_contract(add)
    assert str(raised.value).endswith('unknown ctype "it\'s\\x1b[2J"')


def test_role_invalid_for_kind(add):
    add.abi[5].role = pb.SLOT_ROLE_PART_DIM  # x is an input
    with pytest.raises(ContractError, match="PART_DIM is invalid"):
        validate_contract(add)


def test_axis_out_of_range(add):
    add.abi[1].axis = 1
    with pytest.raises(ContractError, match="axis 1"):
        validate_contract(add)


def test_output_rank_must_be_1_to_3(kit):
    c = kit.build("k", [kit.P("z", kit.OUT, "f32", [2, 2, 2, 2])])
    with pytest.raises(ContractError, match=r"1\.\.3"):
        validate_contract(c)


def test_grid_mode_required(add):
    add.grid.mode = pb.GridRule.MODE_UNSPECIFIED
    with pytest.raises(ContractError, match="grid mode"):
        validate_contract(add)


def test_grid_param_must_be_an_output(add):
    add.grid.output_params[:] = [1]
    with pytest.raises(ContractError, match="not an output"):
        validate_contract(add)


def test_grid_defaults_to_all_outputs(add):
    del add.grid.output_params[:]
    assert validate_contract(add).grid_outputs == (0,)


def test_unknown_assumption_kind(add):
    add.assumptions.add(param=1, kind=99, axis=0, value=1)
    with pytest.raises(ContractError, match="unknown assumption"):
        validate_contract(add)


def test_tensor_assumption_on_scalar(saxpy):
    saxpy.assumptions.add(param=0, kind=pb.ASSUMPTION_KIND_DIM_DIV, axis=0, value=4)
    with pytest.raises(ContractError, match="scalar"):
        validate_contract(saxpy)


def test_assumption_needs_positive_divisor(add):
    add.assumptions.add(param=1, kind=pb.ASSUMPTION_KIND_BASE_ALIGN, axis=0, value=0)
    with pytest.raises(ContractError, match="positive"):
        validate_contract(add)


def test_empty_block_means_1_1_1(add):
    del add.launch.block[:]
    assert validate_contract(add).block == (1, 1, 1)


@pytest.mark.parametrize(
    ("slot", "ctype", "size", "wanted"),
    [
        (1, "f32", 4, "a DIM slot of TENSOR_OUT `z` must be i32 or i64, got f32"),
        (2, "u32", 4, "a STRIDE slot of TENSOR_OUT `z` must be i32 or i64, got u32"),
        (3, "f32", 4, "a PART_DIM slot of TENSOR_OUT `z` must be i32 or i64, got f32"),
        (0, "f64", 8, "a PTR slot of TENSOR_OUT `z` must be u64, got f64"),
        (0, "i64", 8, "a PTR slot of TENSOR_OUT `z` must be u64, got i64"),
    ],
)
def test_tensor_slots_have_the_types_the_compiler_emits(add, slot, ctype, size, wanted):
    # the cubin's layout check sees offsets and sizes only: an f32 dim would reach the kernel
    # as a float's bits (1000003 read as the i32 1232348208)
    add.abi[slot].ctype, add.abi[slot].size = ctype, size
    with pytest.raises(ContractError, match=wanted):
        validate_contract(add)


@pytest.mark.parametrize(("ctype", "size"), [("i32", 4), ("f64", 8), ("bf16", 2)])
def test_a_value_slot_has_its_scalars_dtype(saxpy, ctype, size):
    saxpy.abi[0].ctype, saxpy.abi[0].size = ctype, size
    with pytest.raises(ContractError, match=f"VALUE slot of SCALAR `a` must be f32, got {ctype}"):
        validate_contract(saxpy)


def test_index_slots_may_be_i64(kit):
    c = kit.build(
        "add64", [kit.P("z", kit.OUT, "f32", [128], "i64"), kit.P("n", kit.SCALAR, "i64")]
    )
    assert {s.ctype for s in validate_contract(c).slots} == {"u64", "i64"}


def two_outputs(kit, kind):
    tile = {"map_shape": [1]} if kind == kit.MAPPED else {}
    return kit.build(
        "split",
        [kit.P("a", kind, "f32", [64], extra=tile), kit.P("b", kind, "f32", [64], extra=tile)],
    )


@pytest.mark.parametrize("mapped", [False, True])
@pytest.mark.parametrize("listed", [[0], [1], [0, 0], [0, 1, 1]])
def test_grid_params_name_every_output_once(kit, mapped, listed):
    # an output left out of the grid is never compared with it: its blocks write past it
    c = two_outputs(kit, kit.MAPPED if mapped else kit.OUT)
    c.grid.output_params[:] = listed
    with pytest.raises(ContractError, match=r"grid params \[.*\] are not each TENSOR_OUT"):
        validate_contract(c)


def test_grid_params_in_any_order(kit):
    c = two_outputs(kit, kit.OUT)
    c.grid.output_params[:] = [1, 0]
    assert validate_contract(c).grid_outputs == (1, 0)


def test_a_mapped_tile_is_positive(persistent):
    persistent.params[0].tile_shape[0] = 0
    with pytest.raises(ContractError, match=r"tile shape \(0, 64\) does not fit rank 2"):
        validate_contract(persistent)


@pytest.mark.parametrize(
    ("bytecode", "sm"),
    [
        ("13.\u00b2", "sm_90"),  # a superscript two: str.isdigit, but not int()'s
        ("\u0661\u0663.\u0664", "sm_90"),  # Arabic-Indic 13.4
        ("13.4", "sm_\u0669\u0660"),  # Arabic-Indic 90
        ("13.4", "sm_\u00b9\u2070\u2070"),
        ("", "sm_90"),
    ],
)
def test_early_launch_reads_ascii_digits_only(add, bytecode, sm):
    add.launch.waits_for_prior_grids = True
    add.target.bytecode_version, add.target.sm = bytecode, sm
    with pytest.raises(ContractError, match="waits for prior grids"):
        validate_contract(add)


@pytest.mark.parametrize(
    ("bytecode", "sm"), [("13.4", "sm_90"), ("013.04", "sm_100a"), ("9" * 5000 + ".0", "sm_90")]
)
def test_early_launch_from_bytecode_13_4_and_sm_90(add, bytecode, sm):
    add.launch.waits_for_prior_grids = True
    add.target.bytecode_version, add.target.sm = bytecode, sm
    assert validate_contract(add).waits_for_prior_grids
