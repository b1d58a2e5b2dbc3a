"""tests/benchmarks/decode/config.py: the Qwen3 shapes, the fused layout and the bytes a decode
step moves (what the bandwidth bound divides)."""

from __future__ import annotations

import pytest

from tests.benchmarks.decode.config import QWEN3_4B, QWEN3_32B, TINY, ModelConfig


def test_qwen3_4b_has_the_public_config_shapes_and_about_four_billion_parameters() -> None:
    m = QWEN3_4B
    assert (m.hidden, m.layers, m.heads, m.kv_heads, m.head_dim) == (2560, 36, 32, 8, 128)
    assert (m.intermediate, m.vocab, m.tied, m.group) == (9728, 151936, True, 4)
    assert (m.q_dim, m.kv_dim, m.qkv_dim) == (4096, 1024, 6144)
    assert "lm_head" not in m.weight_shapes()
    assert 4.02e9 < m.parameters() < 4.03e9  # Qwen3-4B: 4.0 B with the tied embedding


def test_qwen3_32b_is_untied_with_64_query_heads() -> None:
    m = QWEN3_32B
    assert (m.hidden, m.layers, m.heads, m.kv_heads, m.group) == (5120, 64, 64, 8, 8)
    shapes = m.weight_shapes()
    assert shapes["lm_head"] == (151936, 5120)
    assert shapes["layers.63.gate_up"] == (2 * 25600, 5120)
    assert shapes["layers.0.qkv"] == ((64 + 2 * 8) * 128, 5120)
    assert 32.7e9 < m.parameters() < 32.8e9


def test_a_decode_step_streams_every_layer_and_the_lm_head() -> None:
    m = QWEN3_4B
    per_layer = 2560 * 6144 + 2560 * 4096 + 3 * 2560 * 9728 + 2 * 2560 + 2 * 128
    assert m.streamed_weight_bytes() == 2 * (36 * per_layer + 151936 * 2560 + 2560)
    # KV: layers x (K, V) x batch x KV heads x positions x head dim x 2 bytes
    assert m.kv_bytes(64, 8192) == 36 * 2 * 64 * 8 * 8192 * 128 * 2
    assert m.step_bytes(1, 1024) == m.streamed_weight_bytes() + m.kv_bytes(1, 1024)
    assert 7.9e9 < m.streamed_weight_bytes() < 8.1e9  # ~8 GB: a bound near 500 tokens/s


def test_the_small_model_keeps_the_4b_widths() -> None:
    assert (TINY.hidden, TINY.head_dim, TINY.group, TINY.layers) == (2560, 128, 4, 2)


def test_heads_must_group_over_kv_heads() -> None:
    with pytest.raises(ValueError, match="do not group"):
        ModelConfig("x", 64, 1, 6, 4, 16, 128, 100, True)
