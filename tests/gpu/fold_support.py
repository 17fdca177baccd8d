"""Which folds this test run's device can take (its profile may forbid some)."""

from __future__ import annotations

import vkncnn
from vkncnn.gpu.ops import matrix_product
from vkncnn.layers import sdpa


def merges_in_the_product(k: int) -> bool:
    """Does a one-row attention's output of k values reach the product after it as unmerged
    splits here? The attention needs its one-dispatch kernel (6 storage buffers a stage) and
    the product room for the row (gemv_merge_fits)."""
    device = vkncnn.get_gpu_device()
    return (device.info.max_per_stage_storage_buffers() >= sdpa.DECODE_BINDINGS[0]
            and matrix_product.gemv_merge_fits(device, k))
