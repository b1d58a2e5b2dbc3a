"""Argument descriptions of the shared launch vectors and the Python objects they stand for.

{"tensor": {"ptr": "0x..", "shape": [..], "strides": [..] | null, "dtype": "f32",
            "device": 0}}
{"partition": {"tensor": T, "tile": [..]}}
{"mapped": {"tensor": T, "tile": [..], "map": [..], "num_tile_blocks": n}}
{"scalar": {"int": "5"} | {"float": "2.5"} | {"bool": true}}   (ints and floats as text)
{"moved": "tensor" | "partition" | "mapped"}   a handle whose value was moved away
{"other": "str"}                                 something that is no launch argument
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from client_stubs import DeviceTensor, plan_launch
from client_stubs.errors import ClientError, LaunchError
from protos.generated.cutile.compile.v1 import contract_pb2 as pb

# ---- arguments ------------------------------------------------------------------------------


def tensor(
    ptr: int,
    shape: Sequence[int],
    dtype: str = "f32",
    strides: Sequence[int] | None = None,
    device: int = 0,
) -> dict[str, Any]:
    return {
        "tensor": {
            "ptr": hex(ptr),
            "shape": list(shape),
            "strides": None if strides is None else list(strides),
            "dtype": dtype,
            "device": device,
        }
    }


def partition(t: dict[str, Any], tile: Sequence[int]) -> dict[str, Any]:
    return {"partition": {"tensor": t["tensor"], "tile": list(tile)}}


def mapped(
    t: dict[str, Any], tile: Sequence[int], groups: Sequence[int], blocks: int
) -> dict[str, Any]:
    return {
        "mapped": {
            "tensor": t["tensor"],
            "tile": list(tile),
            "map": list(groups),
            "num_tile_blocks": blocks,
        }
    }


def scalar(value: bool | int | float) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"scalar": {"bool": value}}
    if isinstance(value, int):
        return {"scalar": {"int": str(value)}}
    return {"scalar": {"float": repr(value)}}


def build_arg(desc: dict[str, Any]) -> object:
    """The Python object an argument description stands for."""
    ((kind, body),) = desc.items()
    if kind == "tensor":
        return _device_tensor(body)
    if kind == "partition":
        return _device_tensor(body["tensor"]).partition(body["tile"])
    if kind == "mapped":
        part = _device_tensor(body["tensor"]).partition(body["tile"])
        return part.map(body["map"], body["num_tile_blocks"])
    if kind == "scalar":
        ((sort, text),) = body.items()
        return text if sort == "bool" else (int(text) if sort == "int" else float(text))
    if kind == "moved":
        return _moved(body)
    if kind == "other":
        return "not a launch argument"
    raise ValueError(f"unknown argument description {desc}")


def _device_tensor(body: dict[str, Any]) -> DeviceTensor:
    return DeviceTensor(
        int(body["ptr"], 16), body["shape"], body["strides"], body["dtype"], body["device"]
    )


def _moved(handle: str) -> object:
    t = DeviceTensor(0x7E00_0000_0000, [256])
    part = t.partition([128])
    if handle == "tensor":
        return t
    if handle == "partition":
        part.unpartition()
        return part
    mapped_part = part.map([1], 1)
    mapped_part.unmap()
    return mapped_part


def outcome(
    contract: pb.LaunchContract, args: list[dict[str, Any]], grid: list[int] | None
) -> dict:
    """What the Python planner does with this launch."""
    try:
        objects = [build_arg(a) for a in args]
        plan = plan_launch(contract, objects, grid=None if grid is None else tuple(grid))
    except LaunchError as exc:
        return {"error": {"kind": type(exc).__name__, "param": exc.param, "message": str(exc)}}
    except ClientError as exc:
        return {"error": {"kind": type(exc).__name__, "param": None, "message": str(exc)}}
    return {"accepted": {"grid": list(plan.grid), "param_buffer": plan.param_buffer.hex()}}
