"""tests/benchmarks/decode/weights.py: our safetensors reader and writer, the mapping of Hugging
Face Qwen3 names onto the fused layout, its checks, and (with torch) loading a checkpoint
written here, by the `safetensors` package when it is installed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tests.benchmarks.decode.config import ModelConfig
from tests.benchmarks.decode.weights import (
    Stored,
    check_checkpoint,
    checkpoint_slots,
    read_safetensors,
    write_safetensors,
)

SMALL = ModelConfig("small", 64, 2, 4, 2, 16, 96, 50, tied=False)


def _bf16_bits(values: np.ndarray) -> np.ndarray:
    """bf16 bit patterns of float32 values (truncated: exact for these test values)."""
    return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _checkpoint(model: ModelConfig) -> dict[str, tuple[str, np.ndarray]]:
    """Every Hugging Face tensor of `model`, filled with its index (exact in bf16)."""
    shapes = model.weight_shapes()
    tensors = {}
    for i, (name, slot) in enumerate(checkpoint_slots(model).items()):
        shape = (slot.stop - slot.start, *shapes[slot.name][1:])
        tensors[name] = ("BF16", _bf16_bits(np.full(shape, float(i % 200), np.float32)))
    return tensors


def test_written_files_read_back_as_memory_maps(tmp_path: Path) -> None:
    path = tmp_path / "x.safetensors"
    f32 = np.arange(6, dtype=np.float32).reshape(2, 3)
    bf16 = _bf16_bits(np.array([1.0, -2.0, 0.5], np.float32))
    write_safetensors(path, {"a": ("F32", f32), "b.weight": ("BF16", bf16)})
    stored = read_safetensors(path)
    assert stored["a"].shape == (2, 3) and stored["a"].dtype == "F32"
    np.testing.assert_array_equal(stored["a"].data, f32)
    np.testing.assert_array_equal(stored["b.weight"].data, bf16)
    assert isinstance(stored["b.weight"].data, np.memmap)


def test_a_file_that_is_no_safetensors_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(b"\xff" * 16)
    with pytest.raises(ValueError, match="not a safetensors header"):
        read_safetensors(path)


def test_hugging_face_names_fill_every_fused_row_once() -> None:
    for model in (SMALL, replace(SMALL, tied=True)):
        rows: dict[str, list[int]] = {}
        for slot in checkpoint_slots(model).values():
            rows.setdefault(slot.name, []).extend(range(slot.start, slot.stop))
        shapes = model.weight_shapes()
        assert set(rows) == set(shapes)
        for name, covered in rows.items():
            assert sorted(covered) == list(range(shapes[name][0])), name
    assert "lm_head.weight" not in checkpoint_slots(replace(SMALL, tied=True))


def test_a_checkpoint_missing_or_misshapen_tensors_is_refused() -> None:
    stored = {
        name: Stored(dtype, array.shape, array)
        for name, (dtype, array) in _checkpoint(SMALL).items()
    }
    check_checkpoint(SMALL, stored)
    with pytest.raises(ValueError, match="lacks 1 tensors"):
        check_checkpoint(SMALL, {k: v for k, v in stored.items() if "q_norm" not in k or "0" in k})
    bad = dict(stored)
    name = "model.layers.1.self_attn.k_proj.weight"
    bad[name] = Stored("BF16", (3, 64), stored[name].data[:3])
    with pytest.raises(ValueError, match=r"k_proj\.weight: shape"):
        check_checkpoint(SMALL, bad)


def test_load_checkpoint_fuses_a_sharded_checkpoint(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from tests.benchmarks.decode.weights import load_checkpoint

    tensors = _checkpoint(SMALL)
    names = list(tensors)
    half = len(names) // 2
    shards = [tmp_path / "model-00001.safetensors", tmp_path / "model-00002.safetensors"]
    for shard, part in zip(shards, (names[:half], names[half:]), strict=True):
        _write(shard, {n: tensors[n] for n in part}, torch)
    weights = load_checkpoint(SMALL, shards, torch.bfloat16, device="cpu")
    slots = checkpoint_slots(SMALL)
    for i, (name, slot) in enumerate(slots.items()):
        rows = weights[slot.name][slot.start : slot.stop]
        assert bool((rows == float(i % 200)).all()), name
    q, kv = SMALL.q_dim, SMALL.kv_dim
    assert weights["layers.1.qkv"].shape == (q + 2 * kv, SMALL.hidden)


def _write(path: Path, tensors: dict[str, tuple[str, np.ndarray]], torch) -> None:
    """With the safetensors package when it is here (the real writer), else ours."""
    try:
        from safetensors.torch import save_file
    except ImportError:
        write_safetensors(path, tensors)
        return
    as_torch = {
        name: torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
        for name, (_, array) in tensors.items()
    }
    save_file(as_torch, str(path))
