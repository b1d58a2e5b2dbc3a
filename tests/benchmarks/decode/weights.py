"""The decoder's weights: seeded random ones at a config's shapes, or a Hugging Face Qwen3
checkpoint in safetensors files, both in the fused layout of `ModelConfig.weight_shapes`.

Random weights are drawn on the GPU (torch), one generator per tensor seeded from the run's
seed and the tensor's index, so every run (and the reference) gets the same model: matrices
N(0, 0.02^2) like Hugging Face's initializer, norm weights 1 + N(0, 0.1^2).

The safetensors reader is our own (the format is an 8-byte little-endian header length, a JSON
header {name: {dtype, shape, data_offsets}}, then the raw data), so loading needs neither the
`safetensors` package nor a copy on the host: each tensor is a memory map of its bytes, copied
into its rows of the fused GPU tensor. Nothing is ever downloaded.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tests.benchmarks.decode.config import ModelConfig

if TYPE_CHECKING:
    import torch

MATRIX_STD = 0.02
NORM_STD = 0.1
# safetensors dtype -> (numpy storage dtype, bytes per element); bf16 is kept as raw uint16
DTYPES = {"BF16": (np.uint16, 2), "F16": (np.float16, 2), "F32": (np.float32, 4)}
_MAX_HEADER = 100 * 1024 * 1024


@dataclass(frozen=True)
class Stored:
    """One tensor of a safetensors file: its dtype name, shape and raw little-endian data."""

    dtype: str
    shape: tuple[int, ...]
    data: np.ndarray  # the storage dtype of DTYPES (a memory map of the file)


def read_safetensors(path: Path) -> dict[str, Stored]:
    """Every tensor of a safetensors file, memory-mapped (nothing is read until used)."""
    with path.open("rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        if not 0 < length <= _MAX_HEADER:
            raise ValueError(f"{path}: header length {length} is not a safetensors header")
        header = json.loads(f.read(length))
    base = 8 + length
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = info["dtype"]
        if dtype not in DTYPES:
            raise ValueError(f"{path}: {name} has dtype {dtype}; supported: {sorted(DTYPES)}")
        storage, size = DTYPES[dtype]
        shape = tuple(int(d) for d in info["shape"])
        begin, end = (int(o) for o in info["data_offsets"])
        count = int(np.prod(shape, dtype=np.int64))
        if end - begin != count * size:
            raise ValueError(
                f"{path}: {name} holds {end - begin} bytes, its shape needs {count * size}"
            )
        data = np.memmap(path, dtype=storage, mode="r", offset=base + begin, shape=(count,))
        tensors[name] = Stored(dtype, shape, data.reshape(shape))
    return tensors


def write_safetensors(path: Path, tensors: Mapping[str, tuple[str, np.ndarray]]) -> None:
    """Write {name: (dtype name, array in its storage dtype)} as a safetensors file."""
    header: dict[str, object] = {}
    offset = 0
    blobs = []
    for name, (dtype, array) in tensors.items():
        storage, _ = DTYPES[dtype]
        blob = np.ascontiguousarray(array, dtype=storage).tobytes()
        header[name] = {
            "dtype": dtype,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(blob)],
        }
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    with path.open("wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            f.write(blob)


@dataclass(frozen=True)
class Slot:
    """Where a checkpoint tensor goes: rows [start, stop) of fused tensor `name`."""

    name: str
    start: int
    stop: int


def checkpoint_slots(model: ModelConfig) -> dict[str, Slot]:
    """Hugging Face Qwen3 tensor names -> their rows of the fused layout."""
    slots = {
        "model.embed_tokens.weight": Slot("embed", 0, model.vocab),
        "model.norm.weight": Slot("final_norm", 0, model.hidden),
    }
    if not model.tied:
        slots["lm_head.weight"] = Slot("lm_head", 0, model.vocab)
    q, kv, inter = model.q_dim, model.kv_dim, model.intermediate
    for i in range(model.layers):
        hf, ours = f"model.layers.{i}.", f"layers.{i}."
        slots.update(
            {
                hf + "input_layernorm.weight": Slot(ours + "input_norm", 0, model.hidden),
                hf + "self_attn.q_proj.weight": Slot(ours + "qkv", 0, q),
                hf + "self_attn.k_proj.weight": Slot(ours + "qkv", q, q + kv),
                hf + "self_attn.v_proj.weight": Slot(ours + "qkv", q + kv, q + 2 * kv),
                hf + "self_attn.q_norm.weight": Slot(ours + "q_norm", 0, model.head_dim),
                hf + "self_attn.k_norm.weight": Slot(ours + "k_norm", 0, model.head_dim),
                hf + "self_attn.o_proj.weight": Slot(ours + "o", 0, model.hidden),
                hf + "post_attention_layernorm.weight": Slot(ours + "post_norm", 0, model.hidden),
                hf + "mlp.gate_proj.weight": Slot(ours + "gate_up", 0, inter),
                hf + "mlp.up_proj.weight": Slot(ours + "gate_up", inter, 2 * inter),
                hf + "mlp.down_proj.weight": Slot(ours + "down", 0, model.hidden),
            }
        )
    return slots


def check_checkpoint(model: ModelConfig, stored: Mapping[str, Stored]) -> None:
    """Raise ValueError naming what is missing or misshapen (before anything is copied)."""
    slots = checkpoint_slots(model)
    shapes = model.weight_shapes()
    missing = sorted(set(slots) - set(stored))
    if missing:
        raise ValueError(f"checkpoint lacks {len(missing)} tensors, e.g. {missing[:3]}")
    for name, slot in slots.items():
        fused = shapes[slot.name]
        want = (slot.stop - slot.start, *fused[1:])
        if stored[name].shape != want:
            raise ValueError(f"{name}: shape {stored[name].shape}, the config needs {want}")


def empty_weights(model: ModelConfig, dtype: torch.dtype, device: str) -> dict[str, torch.Tensor]:
    import torch

    return {n: torch.empty(s, dtype=dtype, device=device) for n, s in model.weight_shapes().items()}


def load_checkpoint(
    model: ModelConfig, files: Iterable[Path], dtype: torch.dtype, device: str = "cuda"
) -> dict[str, torch.Tensor]:
    """The fused weights from Hugging Face safetensors files (any sharding): each stored
    tensor is checked, converted to `dtype` and copied into its rows."""

    stored: dict[str, Stored] = {}
    for path in files:
        stored.update(read_safetensors(Path(path)))
    check_checkpoint(model, stored)
    weights = empty_weights(model, dtype, device)
    for name, slot in checkpoint_slots(model).items():
        weights[slot.name][slot.start : slot.stop].copy_(_as_torch(stored[name]).to(dtype))
    return weights


def _as_torch(tensor: Stored) -> torch.Tensor:
    import torch

    data = np.array(tensor.data)  # one tensor at a time, writable (torch.from_numpy wants that)
    if tensor.dtype == "BF16":
        return torch.from_numpy(data.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(data)


def random_weights(
    model: ModelConfig, seed: int, dtype: torch.dtype, device: str = "cuda"
) -> dict[str, torch.Tensor]:
    """Seeded random weights (see the module docstring), generated on `device`."""
    import torch

    weights = {}
    for index, (name, shape) in enumerate(model.weight_shapes().items()):
        generator = torch.Generator(device=device).manual_seed(seed * 100_003 + index)
        values = torch.randn(shape, generator=generator, device=device, dtype=dtype)
        if len(shape) == 1:
            weights[name] = values.mul_(NORM_STD).add_(1.0)
        else:
            weights[name] = values.mul_(MATRIX_STD)
    return weights


def lm_head(weights: Mapping[str, torch.Tensor], model: ModelConfig) -> torch.Tensor:
    """The LM head's [vocab, hidden] weight: the embedding table when tied."""
    return weights["embed"] if model.tied else weights["lm_head"]
