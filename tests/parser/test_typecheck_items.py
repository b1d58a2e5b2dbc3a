"""Type checking a module's own items: structs (literals, fields, patterns), `impl`
methods and associated functions (inlined), trait impls on DSL types and default
methods, type aliases, unit structs; array patterns and repeat arrays; and what is
rejected (missing / unknown fields, associated const values, wrong turbofish arity)."""

from __future__ import annotations

from parser.render import render
from parser.typed_kernel import TypedKernel
from parser.types import ArrayTy, Elem, ScalarTy, StructTy, TileTy
from tests.parser.support import check, codes_of, errors, full_text, kernel, line_of, where

TILE = TileTy(Elem.F32, (128,))
ITEMS = """    struct Carrier {
        tile: Tile<f32, { [128] }>,
        scale: f32,
    }
    struct Marker;
    type Out = Tensor<f32, { [128] }>;
    trait Doubled {
        const TWO: i32;
        fn get(&self) -> Tile<f32, { [128] }>;
        fn doubled(&self) -> Tile<f32, { [128] }> {
            self.get() + self.get()
        }
    }
    impl Carrier {
        fn new(tile: Tile<f32, { [128] }>) -> Self {
            Self { tile, scale: 2.0f32 }
        }
        fn scaled(&self) -> Tile<f32, { [128] }> {
            self.tile * broadcast_scalar(self.scale, const_shape![128])
        }
    }
    impl Doubled for Carrier {
        const TWO: i32 = 2;
        fn get(&self) -> Tile<f32, { [128] }> {
            self.tile
        }
    }
    trait Probe {
        fn by_ref(&self) -> i64;
        fn by_mut(&mut self) -> i64;
    }
    impl Probe for Tensor<f32, { [128] }> {
        fn by_ref(&self) -> i64 {
            0i64
        }
        fn by_mut(&mut self) -> i64 {
            1i64
        }
    }
"""


def items_kernel(*lines: str, sig: str = "z: &mut Out, x: &Tensor<f32, { [-1] }>") -> str:
    body = "\n".join(f"        {line}" for line in lines)
    return kernel(body, extra=ITEMS, sig=sig, generics="")


def typed(text: str) -> TypedKernel:
    result = check(text, "f", {})
    assert result.ok, [render(d) for d in result.diagnostics]
    assert isinstance(result.kernel, TypedKernel)
    return result.kernel


def types_of(k: TypedKernel, name: str) -> list[object]:
    return [v.type for vs in k.body.lets.values() for v in vs if v.name == name]


def test_struct_literal_fields_and_methods() -> None:
    k = typed(
        items_kernel(
            "let c = Carrier::new(constant(1.0f32, const_shape![128]));",
            "let t = c.tile;",
            "let s = c.scaled() + c.doubled();",
            "z.store(t + s);",
        )
    )
    carrier = StructTy((TILE, ScalarTy(Elem.F32)), "Carrier", ("tile", "scale"))
    assert types_of(k, "c") == [carrier]
    assert types_of(k, "t") == [TILE]
    assert str(carrier) == "Carrier"
    inlined = sorted(k.body.inlined.values(), key=lambda c: c.args[0].span.start)
    assert [c.function.name for c in inlined] == ["new", "scaled", "doubled"]
    # a trait's default method is checked with `Self` the impl's type
    assert inlined[2].params[0].type == carrier


def test_struct_patterns_array_patterns_and_repeat_arrays() -> None:
    k = typed(
        items_kernel(
            "let c = Carrier { tile: constant(1.0f32, const_shape![128]), scale: 1.0f32 };",
            "let Carrier { tile, .. } = c;",
            "let [i0, _, i2] = [1i32, 2i32, 3i32];",
            "let zeros = [0i32; 2];",
            "let m = Marker;",
            "z.store(tile);",
        )
    )
    assert types_of(k, "tile") == [TILE]
    assert types_of(k, "i0") == types_of(k, "i2") == [ScalarTy(Elem.I32)]
    assert types_of(k, "zeros") == [ArrayTy(ScalarTy(Elem.I32), 2)]
    assert types_of(k, "m") == [StructTy((), "Marker", ())]


def test_trait_methods_on_a_tensor_take_the_receiver_by_reference() -> None:
    ok = typed(items_kernel("let a = z.by_ref();", "let b = z.by_mut();", "z.store(z.load());"))
    assert types_of(ok, "a") == types_of(ok, "b") == [ScalarTy(Elem.I64)]
    text = items_kernel(
        "let a = x.by_mut();",
        "z.store(z.load());",
        sig="z: &mut Out, x: &Tensor<f32, { [128] }>",
    )
    result = check(text, "f", {})
    assert codes_of(result) == ["E0308"]
    assert where(errors(result)[0])[0] == line_of(text, "x.by_mut()")


def test_struct_literal_and_pattern_errors() -> None:
    cases = [
        ("let c = Carrier { tile: constant(1.0f32, const_shape![128]) };", "E0063", "scale"),
        ("let c = Carrier { tile: z.load(), scale: 1.0f32, extra: 1i32 };", "E0560", "extra"),
        ("let c = Carrier::new(z.load()); let w = c.width;", "E0609", "width"),
        ("let c = Carrier::new(z.load()); let Carrier { tile } = c;", "E0027", "scale"),
        ("let c = Carrier { tile: z.load(), scale: 1i32 };", "E0308", "f32"),
        ("let m = Marker::missing();", "E0599", "missing"),
    ]
    for line, code, mention in cases:
        text = items_kernel(line, "z.store(z.load());")
        result = check(text, "f", {})
        assert codes_of(result) == [code], (line, [render(d) for d in result.diagnostics])
        assert mention in full_text(errors(result)[0])
        assert where(errors(result)[0])[0] == line_of(text, line[:20])


def test_associated_const_values_are_rejected_as_in_cutile() -> None:
    text = items_kernel("let two = <Carrier as Doubled>::TWO;", "z.store(z.load());")
    result = check(text, "f", {})
    assert codes_of(result) == ["CT0002"]
    diagnostic = errors(result)[0]
    assert "associated const values are not supported" in diagnostic.message
    assert diagnostic.primary_span.text == "<Carrier as Doubled>::TWO"  # type: ignore[union-attr]


def test_element_type_associated_consts_still_fold() -> None:
    text = kernel(
        "        let zero = <T as ElementType>::ZERO;\n"
        "        let t: Tile<T, { [128] }> = constant(zero, const_shape![128]);\n"
        "        z.store(t);",
        generics="<T: ElementType>",
        sig="z: &mut Tensor<T, { [128] }>",
    )
    assert check(text, "f", {"T": "f16"}).ok


def test_wrong_turbofish_arity_is_e0107_at_the_function_name() -> None:
    devices = (
        "    fn scale<const N: i32, const M: i32>(t: Tile<f32, { [128] }>) -> Tile<f32, { [128] }> "
        "{ t }\n"
    )
    text = kernel("        z.store(scale::<2>(z.load()));", extra=devices)
    result = check(text)
    assert codes_of(result) == ["E0107"]
    diagnostic = errors(result)[0]
    assert diagnostic.message == (
        "function takes 2 generic arguments but 1 generic argument was supplied"
    )
    assert diagnostic.primary_span.text == "scale::<2>"  # type: ignore[union-attr]


def test_unsupported_syntax_in_a_called_function_is_reported_at_its_use() -> None:
    devices = "    fn helper() -> i32 { let m = match 1 { _ => 2 }; m }\n"
    unused = kernel("        z.store(z.load());", extra=devices)
    assert check(unused).ok
    used = kernel("        let h = helper();\n        z.store(z.load());", extra=devices)
    result = check(used)
    assert codes_of(result) == ["CT0002"]
    span = errors(result)[0].primary_span
    assert span is not None and span.text == "match 1 { _ => 2 }"
    assert span.call_site is not None and span.call_site.text == "helper()"


def test_items_of_a_nested_module_are_reachable_by_path() -> None:
    text = """#[cutile::module]
mod kernel {
    #![allow(unused)]
    use cutile::core::*;
    const TOP: i32 = 4;
    pub mod inner {
        use cutile::core::*;
        pub const EIGHT: i32 = 8;
        pub struct Pair {
            pub a: i32,
        }
        pub fn helper(x: i32) -> i32 {
            x + super::TOP
        }
    }
    #[allow(dead_code)]
    #[cutile::entry()]
    fn f(z: &mut Tensor<f32, { [inner::EIGHT] }>) {
        let a = inner::helper(inner::EIGHT) + self::TOP;
        let p = inner::Pair { a };
        let inner::Pair { a: b } = p;
        let t: Tile<f32, { [8] }> = constant(1.0f32, const_shape![inner::EIGHT]);
        z.store(t);
    }
}
"""
    k = typed(text)
    assert types_of(k, "b") == [ScalarTy(Elem.I32)]
    assert k.signature.params[0].tensor.shape == (8,)


def test_tuple_structs_moves_and_copy_structs() -> None:
    extra = (
        "    struct Wrap(i32, f32);\n"
        "    #[derive(Clone, Copy)]\n"
        "    struct Twice { a: i32 }\n"
        "    struct Once { a: i32 }\n"
        "    struct Rec { inner: Rec }\n"
    )

    def run(*lines: str) -> object:
        body = "\n".join(f"        {line}" for line in (*lines, "z.store(z.load());"))
        sig = "z: &mut Tensor<f32, { [128] }>"
        return check(kernel(body, extra=extra, sig=sig, generics=""), "f", {})

    assert run("let w = Wrap(1i32, 2.0f32);", "let i = w.0;").ok  # type: ignore[attr-defined]
    assert run("let t = Twice { a: 1i32 };", "let u = t;", "let v = t;").ok  # type: ignore[attr-defined]
    moved = run("let o = Once { a: 1i32 };", "let u = o;", "let v = o;")
    assert codes_of(moved) == ["E0382"]  # type: ignore[arg-type]
    # copying fields out with a pattern moves nothing
    assert run("let o = Once { a: 1i32 };", "let Once { a } = o;", "let v = o;").ok  # type: ignore[attr-defined]
    recursive = run("let r = Rec { inner: 1 };")
    assert codes_of(recursive) == ["CT0204"]  # type: ignore[arg-type]
    assert "contains itself" in errors(recursive)[0].message  # type: ignore[arg-type]
