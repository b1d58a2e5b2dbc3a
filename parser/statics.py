"""Module `static` items: only `static NAME: Global<E, {[]}> = Global::new(v);`, one scalar
in device global memory, initialized with a literal or a module `const` (as cuTile Rust;
shaped globals are not lowered there either). Any other `static` is an error at its type.

The global's Tile IR symbol is the module path and the name joined by `_`
(`global_memory_module_COUNTER`), so statics of different modules never clash.
"""

from __future__ import annotations

import weakref

from parser import ast_nodes as A
from parser import messages
from parser.diagnostics import DiagnosticSink
from parser.program import Program
from parser.type_eval import NotConstant, TypeEnv, eval_const
from parser.types import ELEM_BY_NAME, Elem, GlobalTy

# program -> static name -> its type (None: invalid, already reported)
_RESOLVED: weakref.WeakKeyDictionary[Program, dict[str, GlobalTy | None]] = (
    weakref.WeakKeyDictionary()
)


def check_module_statics(
    program: Program, module: A.KernelModule, env: TypeEnv, sink: DiagnosticSink
) -> None:
    """Check every `static` of the entry's module (an invalid one fails the compile even
    when no kernel uses it, as in cuTile Rust)."""
    for item in module.statics:
        resolve_static(program, item.name, env, sink)


def resolve_static(
    program: Program, name: str, env: TypeEnv, sink: DiagnosticSink
) -> tuple[bool, GlobalTy | None]:
    """(whether a kernel module has a `static` named `name`, its type or None when it is
    invalid); each static is checked, and reported, once per program."""
    resolved = _RESOLVED.setdefault(program, {})
    if name in resolved:
        return True, resolved[name]
    for module in program.modules:
        for item in module.statics:
            if item.name == name:
                resolved[name] = check_static(item, module, env, sink)
                return True, resolved[name]
    return False, None


def check_static(
    item: A.StaticItem, module: A.KernelModule, env: TypeEnv, sink: DiagnosticSink
) -> GlobalTy | None:
    """The type of a `static`, or None after reporting why it is not a supported global."""
    elem = _global_element(item, env, sink)
    if elem is None:
        return None
    if item.mutable:
        sink.add(messages.MUTABLE_STATIC.at(item.span, name=item.name))
        return None
    value = _initial_value(item, elem, env, sink)
    if value is None:
        return None
    return GlobalTy(elem, "_".join((*module.path, item.name)), value)


def _global_element(item: A.StaticItem, env: TypeEnv, sink: DiagnosticSink) -> Elem | None:
    ty = item.type
    elem: Elem | None = None
    shape: object = None
    if isinstance(ty, A.PathType) and ty.name == "Global" and len(ty.args) == 2:
        first, second = ty.args
        if isinstance(first, A.TypeArg) and isinstance(first.type, A.PathType):
            bound = env.generics.get(first.type.name)
            elem = ELEM_BY_NAME.get(first.type.name) or (bound if isinstance(bound, Elem) else None)
        if isinstance(second, A.ConstArg):
            try:
                shape = eval_const(second.value, env)
            except NotConstant:
                shape = None
    if elem is not None and shape == ():
        return elem
    shaped = elem is not None and isinstance(shape, tuple)
    why = "shaped globals are not supported" if shaped else "not a scalar `Global`"
    sink.add(
        messages.STATIC_NOT_SCALAR_GLOBAL.at(ty.span, name=item.name, written=ty.span.text, why=why)
    )
    return None


def _initial_value(
    item: A.StaticItem, elem: Elem, env: TypeEnv, sink: DiagnosticSink
) -> int | float | bool | None:
    """`Global::new(v)` with `v` a literal or a module `const` of the element's kind."""
    value = item.value
    is_new = (
        isinstance(value, A.Call)
        and isinstance(value.function, A.PathExpr)
        and value.function.segments[-2:] == ("Global", "new")
        and len(value.args) == 1
    )
    folded: object = None
    if is_new:
        assert isinstance(value, A.Call)
        try:
            folded = eval_const(value.args[0], env)
        except NotConstant:
            folded = None
    fits = isinstance(folded, bool) if elem is Elem.BOOL else isinstance(folded, (int, float))
    if fits and not elem.is_float and isinstance(folded, float):
        fits = False
    if fits and elem is not Elem.BOOL and isinstance(folded, bool):
        fits = False
    if not fits:
        sink.add(messages.STATIC_INITIALIZER_NOT_CONSTANT.at(value.span, name=item.name, elem=elem))
        return None
    assert isinstance(folded, (int, float, bool))
    return float(folded) if elem.is_float else folded
