"""Which folds this test run's device can take (its profile may forbid some)."""

from __future__ import annotations

import vkncnn
from vkncnn.gpu.ops import matrix_product
from vkncnn.layers import sdpa


def merges_in_the_product(heads: int, dv: int, keys: int) -> bool:
    """Does a one-row attention of `heads` heads of width dv over `keys` keys hand its output
    to the product after it as unmerged splits here? The attention needs its one-dispatch
    kernel (6 storage buffers a stage), and the product room for the row and the splits
    (gemv_merge_pays: few enough of them for the product's merge to cost less)."""
    device = vkncnn.get_gpu_device()
    splits, _, _ = sdpa.decode_layout(keys, dv, sdpa.decode_local(device))
    return (device.info.max_per_stage_storage_buffers() >= sdpa.DECODE_BINDINGS[0]
            and matrix_product.gemv_merge_pays(device, heads * dv, splits))
