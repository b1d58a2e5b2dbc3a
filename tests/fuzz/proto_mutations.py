"""Mutate any protobuf message in place, one field at a time, by reflection: a boundary number,
an unknown enum value, a string from the caller's words, a repeated entry removed, duplicated,
edited or appended, a map key removed, replaced or added, a sub-message cleared or set empty.
The fuzzers of hostile launch contracts (contract_inputs.py) and compile requests
(request_inputs.py) share it."""

from __future__ import annotations

from collections.abc import Sequence
from random import Random
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

UNSIGNED = (0, 1, 2, 3, 4, 7, 8, 16, 31, 32, 64, 255, 256, 65535, 65536, 2**31 - 1, 2**31)
UNSIGNED += (2**32 - 1,)
SIGNED = (0, 1, -1, -2, 2, 3, 16, 2**31 - 1, 2**31, -(2**31), 2**32, 2**53 + 1, 2**63 - 1, -(2**63))


def mutate_message(root: Message, rng: Random, words: Sequence[str]) -> str:
    """Edit one field somewhere in `root` (strings drawn from `words`); say what was done."""
    sites = list(_sites(root, ""))
    message, field, path = rng.choice(sites)
    if _is_map(field):
        return _mutate_map(getattr(message, field.name), path, rng, words)
    if field.is_repeated:
        return _mutate_repeated(message, field, path, rng, words)
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if message.HasField(field.name) and rng.random() < 0.5:
            message.ClearField(field.name)
            return f"{path}: cleared"
        getattr(message, field.name).SetInParent()
        return f"{path}: set empty"
    value = _new_value(field, getattr(message, field.name), rng, words)
    setattr(message, field.name, value)
    return f"{path} = {value!r}"


def _is_map(field: FieldDescriptor) -> bool:
    return field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry


def _mutate_map(entries: Any, path: str, rng: Random, words: Sequence[str]) -> str:
    """A map<string, string>: a key removed, a value replaced, or a key added."""
    keys = sorted(entries)
    choice = rng.randrange(3) if keys else 2
    if choice == 0:
        key = rng.choice(keys)
        del entries[key]
        return f"{path}[{key!r}]: removed"
    key = rng.choice(keys) if choice == 1 else rng.choice(words)
    entries[key] = rng.choice(words)
    return f"{path}[{key!r}] = {entries[key]!r}"


def _sites(message: Message, prefix: str):
    """(message, field, path) of every field of `message` and of the messages inside it."""
    for field in message.DESCRIPTOR.fields:
        path = f"{prefix}{field.name}"
        yield message, field, path
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        if _is_map(field):
            continue
        if field.is_repeated:
            for i, item in enumerate(getattr(message, field.name)):
                yield from _sites(item, f"{path}[{i}].")
        elif message.HasField(field.name):
            yield from _sites(getattr(message, field.name), f"{path}.")


def _mutate_repeated(
    message: Message, field: FieldDescriptor, path: str, rng: Random, words: Sequence[str]
) -> str:
    items = getattr(message, field.name)
    is_message = field.type == FieldDescriptor.TYPE_MESSAGE
    choice = rng.randrange(4) if len(items) else 3
    if choice == 0:
        i = rng.randrange(len(items))
        del items[i]
        return f"{path}[{i}]: removed"
    if choice == 1:
        i = rng.randrange(len(items))
        if is_message:
            items.add().CopyFrom(items[i])
        else:
            items.append(items[i])
        return f"{path}[{i}]: duplicated at the end"
    if choice == 2 and not is_message:
        i = rng.randrange(len(items))
        items[i] = _new_value(field, items[i], rng, words)
        return f"{path}[{i}] = {items[i]!r}"
    if is_message:
        item = items.add()
        if len(items) > 1 and rng.random() < 0.7:
            item.CopyFrom(items[rng.randrange(len(items) - 1)])
            _mutate_scalar_field(item, rng, words)
        return f"{path}: one more entry"
    items.append(_new_value(field, None, rng, words))
    return f"{path}: appended {items[-1]!r}"


def _mutate_scalar_field(message: Message, rng: Random, words: Sequence[str]) -> None:
    """One scalar field of `message` (an entry just appended) set to a new value."""
    fields = [
        f
        for f in message.DESCRIPTOR.fields
        if f.type != FieldDescriptor.TYPE_MESSAGE and not f.is_repeated
    ]
    if fields:
        field = rng.choice(fields)
        setattr(message, field.name, _new_value(field, getattr(message, field.name), rng, words))


def _new_value(field: FieldDescriptor, old: object, rng: Random, words: Sequence[str]) -> object:
    kind = field.type
    if kind == FieldDescriptor.TYPE_BOOL:
        return not old
    if kind == FieldDescriptor.TYPE_STRING:
        return rng.choice(words)
    if kind == FieldDescriptor.TYPE_ENUM:
        known = [v.number for v in field.enum_type.values]
        return rng.choice([*known, max(known) + 1, 42, -1])
    unsigned = kind in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64)
    pool = UNSIGNED if unsigned else SIGNED
    if isinstance(old, int) and rng.random() < 0.4:
        nudged = old + rng.choice((-1, 1))
        if not unsigned or nudged >= 0:
            return nudged if abs(nudged) < 2**31 else old
    value = rng.choice(pool)
    if kind in (FieldDescriptor.TYPE_UINT32,):
        return value % 2**32
    if kind in (FieldDescriptor.TYPE_INT32,):
        return max(min(value, 2**31 - 1), -(2**31))
    return value
