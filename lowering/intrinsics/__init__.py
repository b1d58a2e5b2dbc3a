"""How each prelude intrinsic lowers to tile IR, keyed by the ids in `parser.prelude`;
one module per family, like the prelude."""

from __future__ import annotations

from lowering.intrinsics.atomics import ATOMIC_LOWERINGS
from lowering.intrinsics.compare import COMPARE_LOWERINGS
from lowering.intrinsics.convert import CONVERT_LOWERINGS
from lowering.intrinsics.dims import DIM_LOWERINGS
from lowering.intrinsics.math import MATH_LOWERINGS
from lowering.intrinsics.mma import MMA_LOWERINGS
from lowering.intrinsics.packing import PACKING_LOWERINGS
from lowering.intrinsics.pointers import POINTER_LOWERINGS
from lowering.intrinsics.raw_views import RAW_VIEW_LOWERINGS
from lowering.intrinsics.reduce import REDUCE_LOWERINGS
from lowering.intrinsics.shape import SHAPE_LOWERINGS
from lowering.intrinsics.spec import IntrinsicLowering
from lowering.intrinsics.tensors import TENSOR_LOWERINGS
from lowering.intrinsics.tokens import TOKEN_LOWERINGS
from lowering.intrinsics.unsafe_views import UNSAFE_VIEW_LOWERINGS
from lowering.intrinsics.views import VIEW_LOWERINGS

INTRINSIC_LOWERINGS: dict[str, IntrinsicLowering] = {
    **TENSOR_LOWERINGS,
    **UNSAFE_VIEW_LOWERINGS,
    **VIEW_LOWERINGS,
    **MATH_LOWERINGS,
    **COMPARE_LOWERINGS,
    **SHAPE_LOWERINGS,
    **REDUCE_LOWERINGS,
    **MMA_LOWERINGS,
    **CONVERT_LOWERINGS,
    **PACKING_LOWERINGS,
    **POINTER_LOWERINGS,
    **DIM_LOWERINGS,
    **TOKEN_LOWERINGS,
    **ATOMIC_LOWERINGS,
    **RAW_VIEW_LOWERINGS,
}

__all__ = ["INTRINSIC_LOWERINGS", "IntrinsicLowering"]
