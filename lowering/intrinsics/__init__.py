"""How each prelude intrinsic lowers to tile IR, keyed by the ids in `parser.prelude`;
one module per family, like the prelude."""

from __future__ import annotations

from lowering.intrinsics.spec import IntrinsicLowering
from lowering.intrinsics.tensors import TENSOR_LOWERINGS

INTRINSIC_LOWERINGS: dict[str, IntrinsicLowering] = {**TENSOR_LOWERINGS}

__all__ = ["INTRINSIC_LOWERINGS", "IntrinsicLowering"]
