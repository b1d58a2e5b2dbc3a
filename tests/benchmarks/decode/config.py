"""Qwen3 model shapes, the fused weight layout both decoders read, and the bytes a decode step
must move (the memory-bandwidth bound). Pure Python: no torch, no GPU.

The shapes are the public Hugging Face configs:
  Qwen3-4B:  hidden 2560, 36 layers, 32 query / 8 KV heads of 128, intermediate 9728,
             vocab 151936, tied embeddings;
  Qwen3-32B: hidden 5120, 64 layers, 64 query / 8 KV heads of 128, intermediate 25600,
             vocab 151936, untied LM head;
both rms_norm_eps 1e-6 and rope_theta 1e6.

Weights are fused the way the kernels want them (`weight_shapes`): per layer one [q; k; v]
projection, one stacked [gate; up] projection; Hugging Face checkpoints are mapped onto this
layout by `tests.benchmarks.decode.weights`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

BF16_BYTES = 2


@dataclass(frozen=True)
class ModelConfig:
    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied: bool
    eps: float = 1e-6
    rope_theta: float = 1e6

    def __post_init__(self) -> None:
        if self.heads % self.kv_heads:
            raise ValueError(f"{self.heads} query heads do not group over {self.kv_heads}")

    @property
    def group(self) -> int:
        """Query heads per KV head (GQA)."""
        return self.heads // self.kv_heads

    @property
    def q_dim(self) -> int:
        return self.heads * self.head_dim

    @property
    def kv_dim(self) -> int:
        return self.kv_heads * self.head_dim

    @property
    def qkv_dim(self) -> int:
        return self.q_dim + 2 * self.kv_dim

    def layer_shapes(self, layer: int) -> dict[str, tuple[int, ...]]:
        p = f"layers.{layer}."
        return {
            p + "input_norm": (self.hidden,),
            p + "qkv": (self.qkv_dim, self.hidden),
            p + "q_norm": (self.head_dim,),
            p + "k_norm": (self.head_dim,),
            p + "o": (self.hidden, self.q_dim),
            p + "post_norm": (self.hidden,),
            p + "gate_up": (2 * self.intermediate, self.hidden),
            p + "down": (self.hidden, self.intermediate),
        }

    def weight_shapes(self) -> dict[str, tuple[int, ...]]:
        """Every weight tensor of the fused layout, in load order."""
        shapes: dict[str, tuple[int, ...]] = {"embed": (self.vocab, self.hidden)}
        for layer in range(self.layers):
            shapes.update(self.layer_shapes(layer))
        shapes["final_norm"] = (self.hidden,)
        if not self.tied:
            shapes["lm_head"] = (self.vocab, self.hidden)
        return shapes

    def parameters(self) -> int:
        return sum(_numel(s) for s in self.weight_shapes().values())

    def streamed_weight_bytes(self) -> int:
        """Weight bytes one decode step reads: every layer's weights and the LM head (the
        embedding table itself only for its B rows, which is negligible)."""
        layer = sum(_numel(s) for s in self.layer_shapes(0).values())
        lm_head = self.vocab * self.hidden
        return (self.layers * layer + lm_head + self.hidden) * BF16_BYTES

    def kv_bytes(self, batch: int, context: int) -> int:
        """KV-cache bytes one decode step reads at `context` cached tokens per sequence."""
        return self.layers * 2 * batch * self.kv_heads * context * self.head_dim * BF16_BYTES

    def step_bytes(self, batch: int, context: int) -> int:
        return self.streamed_weight_bytes() + self.kv_bytes(batch, context)


def _numel(shape: tuple[int, ...]) -> int:
    count = 1
    for extent in shape:
        count *= extent
    return count


QWEN3_4B = ModelConfig(
    name="Qwen3-4B",
    hidden=2560,
    layers=36,
    heads=32,
    kv_heads=8,
    head_dim=128,
    intermediate=9728,
    vocab=151936,
    tied=True,
)
QWEN3_32B = ModelConfig(
    name="Qwen3-32B",
    hidden=5120,
    layers=64,
    heads=64,
    kv_heads=8,
    head_dim=128,
    intermediate=25600,
    vocab=151936,
    tied=False,
)
# the small model of the correctness smoke test and the compute-sanitizer run: Qwen3-4B's widths
# (so its kernels are the 4B specializations), two layers and a 4096-token vocabulary
TINY = replace(QWEN3_4B, name="tiny (Qwen3-4B widths, 2 layers)", layers=2, vocab=4096)

MODELS = {"4b": QWEN3_4B, "32b": QWEN3_32B, "tiny": TINY}
