"""The verifier: valid sample kernels pass; each broken rule is reported once, by name."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from lowering.ir.core import (
    Block,
    Builder,
    Function,
    Module,
    Op,
    Region,
    Trait,
    Value,
    operand,
    result,
)
from lowering.ir.ops_arith import AddF, AddI
from lowering.ir.ops_control import Break, Continue, For, If, Yield
from lowering.ir.ops_core import Constant, Return
from lowering.ir.types import I1, I32, ElementType, TileType
from lowering.ir.verify import verify_module

F32 = TileType(ElementType.F32)


def _function(fill: Callable[[Builder], None], params: tuple[TileType, ...] = ()) -> Module:
    """A one-function module whose body `fill` emits (Return is not added)."""
    b = Builder()
    values = tuple(b.value(t) for t in params)
    fill(b)
    return Module((Function("k", values, b.finish(values)),))


def _replace_ops(module: Module, ops: tuple[Op, ...]) -> Module:
    fn = module.functions[0]
    return Module((dataclasses.replace(fn, body=dataclasses.replace(fn.body, ops=ops)),))


def _counting_for(b: Builder, terminator: Callable[[Builder, Value], None]) -> For:
    lo, hi, step = (b.emit(Constant, result=I32, values=(v,)).result for v in (0, 4, 1))
    init = b.emit(Constant, result=F32, values=(0.0,)).result
    body = b.region([I32, F32], lambda args: terminator(b, args[1]))
    return b.emit(
        For, outputs=(F32,), lower=lo, upper=hi, step=step, init_values=(init,), body=body
    )


def test_sample_kernels_are_valid(any_kernel: tuple[str, Module]) -> None:
    assert verify_module(any_kernel[1]) == []


def test_missing_return() -> None:
    module = _function(lambda b: b.emit(Constant, result=I32, values=(1,)))
    assert verify_module(module) == ["@k: function body must end with return"]


def test_terminator_in_the_middle_of_a_block() -> None:
    def fill(b: Builder) -> None:
        b.emit(Return)
        b.emit(Return)

    assert verify_module(_function(fill)) == [
        "@k: return: a terminator must be the last op of its block"
    ]


def test_use_before_definition(vadd_module: Module) -> None:
    ops = vadd_module.functions[0].body.ops
    swapped = (ops[1], ops[0], *ops[2:])  # assume first, make_token second: still fine
    assert verify_module(_replace_ops(vadd_module, swapped)) == []
    moved = (*ops[:2], ops[3], ops[2], *ops[4:])  # make_tensor_view before its assume
    assert verify_module(_replace_ops(vadd_module, moved)) == [
        "@vadd_ir: make_tensor_view: operand %11 is not defined in a dominating position"
    ]


def test_operand_type_must_match_its_definition() -> None:
    def fill(b: Builder) -> None:
        x = b.emit(Constant, result=I32, values=(1,)).result
        wrong = Value(x.id, F32)
        b.emit(AddF, result=F32, lhs=wrong, rhs=wrong)
        b.emit(Return)

    errors = verify_module(_function(fill))
    assert errors == ["@k: addf: operand %0 has type tile<f32>, defined as tile<i32>"] * 2


def test_value_defined_twice() -> None:
    def fill(b: Builder) -> None:
        x = b.emit(Constant, result=I32, values=(1,)).result
        b.add(Constant(result=x, values=(2,)))
        b.emit(Return)

    assert verify_module(_function(fill)) == ["@k: value %0 is defined more than once"]


def test_block_arguments_do_not_escape_their_region() -> None:
    escaped: list[Value] = []

    def fill(b: Builder) -> None:
        def keep(b: Builder, acc: Value) -> None:
            escaped.append(acc)
            b.emit(Continue, values=(acc,))

        _counting_for(b, keep)
        b.emit(AddF, result=F32, lhs=escaped[0], rhs=escaped[0])
        b.emit(Return)

    errors = verify_module(_function(fill))
    assert errors == [f"@k: addf: operand {escaped[0]} is not defined in a dominating position"] * 2


def test_region_cannot_use_its_owners_results() -> None:
    def fill(b: Builder) -> None:
        cond = b.emit(Constant, result=I1, values=(True,)).result
        ghost = b.value(I32)  # %1: will be the if's own result
        then = b.region([], lambda _: b.emit(Yield, values=(ghost,)))
        other = b.region([], lambda _: b.emit(Yield, values=(ghost,)))
        b.add(If(outputs=(ghost,), condition=cond, then_region=then, else_region=other))
        b.emit(Return)

    errors = verify_module(_function(fill))
    assert errors == ["@k: yield: operand %1 is not defined in a dominating position"] * 2


def test_for_body_must_end_with_continue() -> None:
    def fill(b: Builder) -> None:
        _counting_for(b, lambda b, acc: b.emit(Yield, values=(acc,)))
        b.emit(Return)

    assert verify_module(_function(fill)) == ["@k: for: region must end with continue"]


def test_continue_types_must_match_the_loop() -> None:
    def fill(b: Builder) -> None:
        _counting_for(b, lambda b, acc: b.emit(Continue, values=()))
        b.emit(Return)

    assert verify_module(_function(fill)) == [
        "@k: continue: carries () but for expects (tile<f32>)"
    ]


def test_break_is_not_allowed_in_a_for() -> None:
    def fill(b: Builder) -> None:
        cond = b.emit(Constant, result=I1, values=(True,)).result

        def body(b: Builder, acc: Value) -> None:
            leave = b.region([], lambda _: b.emit(Break, values=(acc,)))
            b.emit(If, outputs=(), condition=cond, then_region=leave, else_region=Region(()))
            b.emit(Continue, values=(acc,))

        _counting_for(b, body)
        b.emit(Return)

    assert verify_module(_function(fill)) == ["@k: if: region must end with continue or yield"]


def test_if_yield_types_must_match_results() -> None:
    def fill(b: Builder) -> None:
        cond = b.emit(Constant, result=I1, values=(True,)).result
        one = b.emit(Constant, result=I32, values=(1,)).result
        then = b.region([], lambda _: b.emit(Yield, values=(one,)))
        other = b.region([], lambda _: b.emit(Yield, values=()))
        b.emit(If, outputs=(I32,), condition=cond, then_region=then, else_region=other)
        b.emit(Return)

    assert verify_module(_function(fill)) == ["@k: yield: carries () but if expects (tile<i32>)"]


def test_return_inside_a_region() -> None:
    def fill(b: Builder) -> None:
        cond = b.emit(Constant, result=I1, values=(True,)).result
        then = b.region([], lambda _: b.emit(Return))
        b.emit(If, outputs=(), condition=cond, then_region=then, else_region=Region(()))
        b.emit(Return)

    assert verify_module(_function(fill)) == [
        "@k: return: return is only allowed at the end of the function body",
        "@k: if: region must end with yield",
    ]


def test_op_rules_are_included() -> None:
    def fill(b: Builder) -> None:
        x = b.emit(Constant, result=F32, values=(1.0,)).result
        b.emit(AddI, result=F32, lhs=x, rhs=x)
        b.emit(Return)

    assert verify_module(_function(fill)) == ["@k: addi: needs integer operands, got tile<f32>"]


def test_tile_dimensions_must_be_powers_of_two() -> None:
    def fill(b: Builder) -> None:
        b.emit(Constant, result=TileType(ElementType.F32, (3,)), values=(0.0,))
        b.emit(Return)

    assert verify_module(_function(fill)) == [
        "@k: %0: tile dimensions must be powers of two (tile<3xf32>)"
    ]


def test_function_level_rules() -> None:
    b = Builder()
    p = b.value(TileType(ElementType.F32, (4,)))
    b.emit(Return)
    fn = Function("not-a-symbol", (p,), b.finish((p,)))
    errors = verify_module(Module((fn, fn)))
    name_error = "@not-a-symbol: name must match [A-Za-z_][A-Za-z0-9_]* (a PTX identifier)"
    param_error = "@not-a-symbol: entry parameters must be rank-0 tiles"
    assert errors == [
        name_error,
        param_error,
        "@not-a-symbol: duplicate function name",
        name_error,
        param_error,
    ]


def test_body_arguments_must_be_the_parameters() -> None:
    b = Builder()
    p = b.value(I32)
    b.emit(Return)
    fn = Function("k", (p,), Block((), b.finish(()).ops))
    assert verify_module(Module((fn,))) == [
        "@k: body block arguments must be the function parameters"
    ]


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Traited(Op):
    """An op that states its rules only as traits: the verifier checks them generically."""

    NAME = "traited"
    TRAITS = frozenset({Trait.SAME_TYPE, Trait.INTEGERS, Trait.TERMINATOR})
    result: Value = result()
    lhs: Value = operand()


def test_declared_traits_are_verified_generically() -> None:
    def fill(b: Builder) -> None:
        x = b.emit(Constant, result=F32, values=(1.0,)).result
        b.emit(_Traited, result=I32, lhs=x)
        b.emit(Return)

    assert verify_module(_function(fill)) == [
        "@k: traited: operand and result types differ",
        "@k: traited: a terminator must be the last op of its block",
    ]


def test_ops_declare_their_traits() -> None:
    assert Trait.TERMINATOR in Return.TRAITS and Trait.TERMINATOR in Yield.TRAITS
    assert Trait.LOOP in For.TRAITS and Trait.LOOP not in If.TRAITS
    assert {Trait.SAME_TYPE, Trait.FLOATS} == AddF.TRAITS
    assert {Trait.SAME_TYPE, Trait.INTEGERS} == AddI.TRAITS
