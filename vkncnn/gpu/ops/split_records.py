"""An attention's partial results per split of its keys, left for the product after it.

A decode step's attention splits each head's keys over workgroups (layers/sdpa.py,
shaders/sdpa_decode.comp), and each split's softmax must meet the others' before the head's
output is known. The attention can merge them itself: the last of a head's workgroups to
finish (an atomic count the host zeroes before each step) reads every split back. Or it can
leave the splits as they are and let the matrix-vector product that reads its output merge
them as it loads its input (shaders/innerproduct_gemv.comp's MERGE): no count, no zeroing,
no second pass over the splits at the end of the attention. A decoder's o projection reads
the attention's output that way, through views that keep its layout.
"""

from __future__ import annotations

from ..vulkan.vkmat import VkMat

# sdpa_decode.comp's record of one split: its maximum, its sum, a NaN flag, then dv column sums
RECORD_HEAD = 3


def record_words(rows: int, splits: int, dv: int) -> int:
    """Words of sdpa_decode.comp's workspace for `rows` (head, query row) pairs: a counter
    each, then each one's `splits` records."""
    return rows * (1 + splits * (dv + RECORD_HEAD))


class SplitRecords(VkMat):
    """The words sdpa_decode.comp leaves with MERGE_BY_READER for one query row: `heads`
    counters (unused), then per head and split RECORD_HEAD + dv words (fp32 bits). It stands
    for the attention's (heads, 1, dv) output, read by a product as one row of heads * dv."""

    def __init__(self, heads: int, splits: int, dv: int, fp16: bool, allocator) -> None:
        super().__init__(record_words(heads, splits, dv), dims=1, elemsize=4, allocator=allocator)
        self.heads, self.splits, self.dv = heads, splits, dv
        self.fp16 = fp16  # the storage of the output it stands for

    @property
    def row_length(self) -> int:
        """The values of the output row it stands for."""
        return self.heads * self.dv
