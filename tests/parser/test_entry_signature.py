"""Entry parameters (roles, output tile rules), return types and entry options."""

from __future__ import annotations

import pytest

from parser import codes
from parser.diagnostics import Diagnostic, DiagnosticSink
from parser.entry_signature import EntrySignature, ParamRole, check_entry_signature
from parser.type_eval import TypeEnv, TypeResolver
from parser.types import Elem, PointerTy, RefTy, ScalarTy, TensorTy
from tests.parser.support import check, kernel, line_of, only_function

GENERICS = {"B": 128}


def signature(
    sig: str,
    *,
    attr: str = "#[cutile::entry()]",
    fn: str = "fn",
    generics: dict | None = None,
    ret: str = "",
) -> tuple[EntrySignature | None, list[Diagnostic], str]:
    text = kernel("", sig=sig + ret, attr=attr, fn=fn)
    if ret:  # `kernel` closes the parameter list itself: move the `)` before the return type
        text = text.replace(sig + ret + ")", sig + ")" + ret)
    function = only_function(text)
    sink = DiagnosticSink()
    resolver = TypeResolver(TypeEnv(generics or GENERICS, {}), sink)
    return check_entry_signature(function, resolver, sink), list(sink), text


def single_error(sig: str, **kwargs: object) -> tuple[Diagnostic, str]:
    result, diagnostics, text = signature(sig, **kwargs)  # type: ignore[arg-type]
    assert result is None
    assert len(diagnostics) == 1, [d.message for d in diagnostics]
    return diagnostics[0], text


def test_roles_indices_and_types() -> None:
    result, diagnostics, _ = signature(
        "a: f32, x: &Tensor<f16, { [-1, 64] }>, z: &mut Tensor<f16, { [B, 32] }>, "
        "n: i32, w: &mut Tensor<u8, { [4] }>"
    )
    assert diagnostics == []
    assert result is not None
    assert [(p.index, p.name, p.role) for p in result.params] == [
        (0, "a", ParamRole.SCALAR),
        (1, "x", ParamRole.INPUT),
        (2, "z", ParamRole.OUTPUT),
        (3, "n", ParamRole.SCALAR),
        (4, "w", ParamRole.OUTPUT),
    ]
    assert result.params[0].type == ScalarTy(Elem.F32)
    assert result.params[1].type == RefTy(TensorTy(Elem.F16, (-1, 64)), False)
    assert result.params[2].tensor == TensorTy(Elem.F16, (128, 32))
    assert [p.name for p in result.outputs] == ["z", "w"]
    assert result.params[2].span.text == "z: &mut Tensor<f16, { [B, 32] }>"
    assert not result.options.unchecked_accesses
    assert not result.options.deny_in_kernel_checks


@pytest.mark.parametrize("shape", ["{ [4] }", "{ [4, 8] }", "{ [1, 2, 1024] }"])
def test_outputs_of_rank_one_to_three_are_accepted(shape: str) -> None:
    result, diagnostics, _ = signature(f"z: &mut Tensor<f32, {shape}>")
    assert diagnostics == []
    assert result is not None


def test_inputs_may_have_any_rank_and_dynamic_extents() -> None:
    result, diagnostics, _ = signature(
        "z: &mut Tensor<f32, { [B] }>, x: &Tensor<f32, { [-1, 3, -1, 5, 7] }>, "
        "s: &Tensor<f32, { [] }>"
    )
    assert diagnostics == []
    assert result is not None
    assert result.params[1].tensor.shape == (-1, 3, -1, 5, 7)


@pytest.mark.parametrize(("shape", "rank"), [("{ [2, 2, 2, 2] }", 4), ("{ [] }", 0)])
def test_output_rank_outside_one_to_three(shape: str, rank: int) -> None:
    diagnostic, text = single_error(f"z: &mut Tensor<f32, {shape}>")
    assert diagnostic.code is codes.OUTPUT_RANK
    assert diagnostic.message == f"partitioned output `z` has rank {rank}"
    assert diagnostic.primary_span.text == f"&mut Tensor<f32, {shape}>"  # type: ignore[union-attr]
    assert diagnostic.primary_span.start_line_col[0] == line_of(text, "fn f")  # type: ignore[union-attr]
    assert any("1, 2 or 3" in n for n in diagnostic.notes)


def test_output_rank_through_a_const_generic_array() -> None:
    text = kernel("", generics="<const S: [i32; 4]>", sig="z: &mut Tensor<f32, S>")
    result = check(text, generics={"S": "[2, 2, 2, 2]"})
    assert [d.code for d in result.diagnostics] == [codes.OUTPUT_RANK]


def test_a_dynamic_output_tile_is_the_host_partitions() -> None:
    """`&mut Tensor<E, {[B, -1]}>`: the host's partition tile gives the `-1` extent."""
    result, diagnostics, _ = signature("z: &mut Tensor<f32, { [B, -1] }>")
    assert diagnostics == [] and result is not None
    assert result.params[0].tensor.shape == (128, -1)


def test_a_mapped_output_tile_is_static() -> None:
    diagnostic, _ = single_error("mut z: MappedPartitionMut<f32, { [B, -1] }, { [1, 1] }>")
    assert diagnostic.code is codes.OUTPUT_SHAPE_DYNAMIC
    assert diagnostic.message == "the tile shape of mapped output `z` must be static"
    assert diagnostic.labels[0].message == "tile shape [128, -1]"


@pytest.mark.parametrize(("shape", "bad"), [("{ [0] }", 0), ("{ [-4] }", -4), ("{ [B, 0] }", 0)])
def test_output_tile_dimensions_must_be_positive(shape: str, bad: int) -> None:
    diagnostic, _ = single_error(f"z: &mut Tensor<f32, {shape}>")
    assert diagnostic.code is codes.TILE_NOT_POWER_OF_TWO
    assert diagnostic.message == f"tile dimension {bad} of output `z` is not positive"


@pytest.mark.parametrize("shape", ["{ [B, 3] }", "{ [100] }", "{ [6, 6] }"])
def test_any_output_tile_can_be_cut_with_partition_mut(shape: str) -> None:
    """cuTile Rust accepts any tile extents: only a tile loaded or stored whole must be a
    power of two (the sub-tiles of `partition_mut` are the Tile IR tiles)."""
    result, diagnostics, _ = signature(f"z: &mut Tensor<f32, {shape}>")
    assert diagnostics == [] and result is not None


@pytest.mark.parametrize("value", ["100", "1000"])
def test_power_of_two_is_checked_after_binding_generics(value: str) -> None:
    result = check(kernel("        z.store(x.load_like(z));"), generics={"B": value})
    errors = [d for d in result.diagnostics if d.is_error]
    assert errors and all(d.code is codes.TILE_NOT_POWER_OF_TWO for d in errors)
    assert (
        errors[0].message == f"tile dimension {value} of output `z` is not a positive power of two"
    )


@pytest.mark.parametrize("value", ["0", "-8"])
def test_a_non_positive_tile_is_refused_at_the_signature(value: str) -> None:
    result = check(kernel("        z.store(x.load_like(z));"), generics={"B": value})
    assert [d.code for d in result.diagnostics] == [codes.TILE_NOT_POWER_OF_TWO]


@pytest.mark.parametrize("value", ["1", "2", "4096", "1048576"])
def test_powers_of_two_pass(value: str) -> None:
    result = check(kernel("        z.store(x.load_like(z));"), generics={"B": value})
    assert result.ok, [d.message for d in result.diagnostics]


@pytest.mark.parametrize("extent", ["0", "-2"])
def test_input_extents_must_be_positive_or_dynamic(extent: str) -> None:
    diagnostic, _ = single_error(
        f"z: &mut Tensor<f32, {{ [B] }}>, x: &Tensor<f32, {{ [{extent}] }}>"
    )
    assert diagnostic.code is codes.GENERIC_ARGUMENT
    assert diagnostic.message == f"input `x` declares extent {extent}"


@pytest.mark.parametrize(
    ("written", "code"),
    [
        ("Vec<f32>", codes.UNSUPPORTED_TYPE),
        ("Tensor<f32, { [-1] }>", codes.INVALID_PARAMETER),
        ("&mut f32", codes.INVALID_PARAMETER),
        ("&f32", codes.INVALID_PARAMETER),
        ("&Tile<f32, { [4] }>", codes.INVALID_PARAMETER),
        ("Tile<f32, { [4] }>", codes.INVALID_PARAMETER),
        ("(f32, f32)", codes.INVALID_PARAMETER),
        ("Shape<{ [4] }>", codes.INVALID_PARAMETER),
        ("i128", codes.UNSUPPORTED_TYPE),
        ("*mut f32", codes.UNSAFE_REQUIRED),
    ],
)
def test_unsupported_parameter_types(written: str, code: object) -> None:
    diagnostic, _ = single_error(f"z: &mut Tensor<f32, {{ [B] }}>, p: {written}")
    assert diagnostic.code is code
    assert diagnostic.primary_span.text == written  # type: ignore[union-attr]
    if code is codes.INVALID_PARAMETER:
        assert diagnostic.message == f"`{written}` is not a supported entry parameter type"
        assert "&mut Tensor<E, S>" in diagnostic.notes[0]


@pytest.mark.parametrize(
    ("written", "help_"),
    [
        ("&Tensor<f4e2m1fn, { [-1] }>", "`f4e2m1fnx2`"),
        ("i4", "bytes (`u8`)"),
        ("&mut Tensor<i4, { [B] }>", "bytes (`u8`)"),
    ],
)
def test_sub_byte_elements_stay_inside_kernels(written: str, help_: str) -> None:
    diagnostic, _ = single_error(f"z: &mut Tensor<f32, {{ [B] }}>, p: {written}")
    assert diagnostic.code is codes.UNSUPPORTED_TYPE
    assert "elements (narrower than a byte)" in diagnostic.message
    assert diagnostic.primary_span.text == written  # type: ignore[union-attr]
    assert help_ in diagnostic.help[0]


def test_fp8_and_packed_fp4_parameters() -> None:
    result, diagnostics, _ = signature(
        "z: &mut Tensor<f8e4m3fn, { [B] }>, x: &Tensor<f4e2m1fnx2, { [-1] }>, "
        "s: &Tensor<f8e8m0fnu, { [-1] }>, a: f8e5m2"
    )
    assert not diagnostics and result is not None
    assert [p.type for p in result.params] == [
        RefTy(TensorTy(Elem.F8E4M3FN, (128,)), mutable=True),
        RefTy(TensorTy(Elem.F4E2M1FNX2, (-1,)), mutable=False),
        RefTy(TensorTy(Elem.F8E8M0FNU, (-1,)), mutable=False),
        ScalarTy(Elem.F8E5M2),
    ]


def test_every_bad_parameter_is_reported() -> None:
    result, diagnostics, _ = signature(
        "z: &mut Tensor<f32, { [0] }>, p: Vec<f32>, w: &mut Tensor<f32, { [1, 1, 1, 1] }>, q: &f32"
    )
    assert result is None
    assert [d.code for d in diagnostics] == [
        codes.TILE_NOT_POWER_OF_TWO,
        codes.UNSUPPORTED_TYPE,
        codes.OUTPUT_RANK,
        codes.INVALID_PARAMETER,
    ]


def test_entry_without_an_output_takes_the_host_grid() -> None:
    """cuTile Rust launches such an entry with an explicit `.grid(..)`."""
    result, diagnostics, _ = signature("x: &Tensor<f32, { [-1] }>, a: f32")
    assert diagnostics == []
    assert result is not None and result.outputs == () and result.host_grid


def test_no_output_is_not_reported_on_top_of_a_bad_parameter() -> None:
    diagnostic, _ = single_error("x: Vec<f32>")
    assert diagnostic.code is codes.UNSUPPORTED_TYPE


def test_entries_cannot_return_a_value() -> None:
    diagnostic, _ = single_error("z: &mut Tensor<f32, { [B] }>", ret=" -> f32")
    assert diagnostic.code is codes.INVALID_PARAMETER
    assert diagnostic.message == "kernel entry functions cannot return a value"
    assert diagnostic.primary_span.text == "f32"  # type: ignore[union-attr]


OUT = "z: &mut Tensor<f32, { [B] }>"


@pytest.mark.parametrize(
    ("options", "message", "culprit"),
    [
        ("bogus = true", "unknown entry option `bogus`", "bogus = true"),
        ("print_ir", "entry option `print_ir` needs a value", "print_ir"),
        (
            "unchecked_accesses",
            "entry option `unchecked_accesses` needs a value",
            "unchecked_accesses",
        ),
        ("print_ir = 1", "entry option `print_ir` takes `true` or `false`", "1"),
        (
            "deny_in_kernel_checks = B",
            "entry option `deny_in_kernel_checks` takes `true` or `false`",
            "B",
        ),
        ("print_ir = maybe", "entry option `print_ir` takes `true` or `false`", "maybe"),
    ],
)
def test_invalid_entry_options(options: str, message: str, culprit: str) -> None:
    diagnostic, text = single_error(OUT, attr=f"#[cutile::entry({options})]")
    assert diagnostic.code is codes.INVALID_ENTRY_OPTION
    assert diagnostic.message == message
    assert diagnostic.primary_span.text == culprit  # type: ignore[union-attr]
    assert diagnostic.primary_span.start_line_col[0] == line_of(text, "#[cutile::entry(")  # type: ignore[union-attr]


def test_unknown_option_lists_the_known_ones() -> None:
    diagnostic, _ = single_error(OUT, attr="#[cutile::entry(fast = true)]")
    assert "unchecked_accesses" in diagnostic.notes[0]
    assert "print_ir" in diagnostic.notes[0]


def test_unchecked_accesses_requires_unsafe_fn() -> None:
    diagnostic, text = single_error(OUT, attr="#[cutile::entry(unchecked_accesses = true)]")
    assert diagnostic.code is codes.INVALID_ENTRY_OPTION
    assert "unsafe fn" in diagnostic.message
    assert diagnostic.primary_span.text == "f"  # type: ignore[union-attr]
    assert diagnostic.primary_span.start_line_col[0] == line_of(text, "fn f")  # type: ignore[union-attr]


def test_unchecked_accesses_on_an_unsafe_fn() -> None:
    result, diagnostics, _ = signature(
        OUT,
        attr="#[cutile::entry(unchecked_accesses = true, deny_in_kernel_checks = true)]",
        fn="unsafe fn",
    )
    assert diagnostics == []
    assert result is not None
    assert result.options.unchecked_accesses and result.options.deny_in_kernel_checks


def test_false_options_and_print_ir_are_accepted() -> None:
    result, diagnostics, _ = signature(
        OUT, attr="#[cutile::entry(unchecked_accesses = false, print_ir = true)]"
    )
    assert diagnostics == []
    assert result is not None and not result.options.unchecked_accesses


def test_every_bad_option_is_reported() -> None:
    result, diagnostics, _ = signature(
        OUT, attr="#[cutile::entry(bogus = true, print_ir = 1, unchecked_accesses = true)]"
    )
    assert result is None
    assert [d.code for d in diagnostics] == [codes.INVALID_ENTRY_OPTION] * 3


def test_dump_mlir_dir_takes_a_string() -> None:
    result = check(
        kernel(
            "        z.store(x.load_like(z));", attr='#[cutile::entry(dump_mlir_dir = "/tmp/ir")]'
        )
    )
    assert result.ok, [d.message for d in result.diagnostics]


def test_raw_pointer_params_need_an_unsafe_fn_entry() -> None:
    diagnostic, _ = single_error("y: *mut f32, n: i32")
    assert diagnostic.code is codes.UNSAFE_REQUIRED
    assert diagnostic.message == "raw pointer parameter `y` requires an `unsafe fn` entry"
    assert diagnostic.primary_span.text == "*mut f32"  # type: ignore[union-attr]
    assert [label.span.text for label in diagnostic.labels if not label.primary] == ["f"]
    assert diagnostic.help == ("declare the entry `unsafe fn f`",)


def test_raw_pointer_params_of_an_unsafe_fn_entry() -> None:
    result, diagnostics, _ = signature("y: *mut f16, x: *const f32, n: i32", fn="unsafe fn")
    assert diagnostics == []
    assert result is not None
    assert [(p.name, p.role, p.type) for p in result.params] == [
        ("y", ParamRole.POINTER, PointerTy(Elem.F16, mutable=True)),
        ("x", ParamRole.POINTER, PointerTy(Elem.F32, mutable=False)),
        ("n", ParamRole.SCALAR, ScalarTy(Elem.I32)),
    ]
    assert result.outputs == ()
    assert result.host_grid  # no output defines the grid: the host passes it


def test_an_output_defines_the_grid_of_a_pointer_kernel() -> None:
    result, diagnostics, _ = signature("z: &mut Tensor<f32, { [B] }>, p: *mut f32", fn="unsafe fn")
    assert diagnostics == []
    assert result is not None
    assert not result.host_grid
