"""MemoryData: a constant blob stored in the .bin (no inputs).

Shape params w, h, d, c (innermost-first); the highest one set decides the dims
(all 0: one value, not read from the .bin). load_type is the ModelBin type: 1 raw fp32 (default), 0 tagged.

GPU: the blob is uploaded once, at load (upload_model), in the storage precision and
packing the net's options ask for; each forward hands out a view of that buffer, so the
runtime may release it after its consumers without freeing the constant.
"""

import numpy as np

from vkncnn.gpu.ops import data_movement as gather
from vkncnn.gpu.vulkan.vkmat import storage_dtype
from vkncnn.layer import Layer, register_layer
from vkncnn.memory_budget import check_alloc


@register_layer("MemoryData")
class MemoryData(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = False
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True
        self.data_gpu = None

    def load_param(self, pd) -> int:
        self.w = pd.get(0, 0)
        self.h = pd.get(1, 0)
        self.d = pd.get(11, 0)
        self.c = pd.get(2, 0)
        self.load_type = pd.get(21, 1)
        return 0

    def load_model(self, mb) -> int:
        # the shape is params alone, and a weightless load (DataReaderFromEmpty) makes zeros of
        # any size; load_model gets no Option, so the machine's default budget applies
        check_alloc(None, [n for n in (self.c, self.d, self.h, self.w) if n], 4, "the constant")
        if self.d:
            self.data = mb.load(self.w, self.h, self.d, self.c, self.load_type)
        elif self.c:
            self.data = mb.load(self.w, self.h, self.c, self.load_type)
        elif self.h:
            self.data = mb.load(self.w, self.h, self.load_type)
        elif self.w:
            self.data = mb.load(self.w, self.load_type)
        else:
            # ncnn creates a 1-element blob without reading the .bin (its value is
            # uninitialised memory there); we read nothing either and give 0
            self.data = np.zeros(1, np.float32)
        return 0

    def forward_cpu(self, bottoms, opt):
        return [self.data]

    # -- GPU ------------------------------------------------------------------------------------
    def upload_model(self, cmd, opt) -> int:
        self.data_gpu = cmd.record_upload(self.data, opt, elempack=gather.output_elempack(self.data.shape, opt))
        return 0

    def destroy_pipeline(self, opt) -> int:
        if self.data_gpu is not None:
            self.data_gpu.release()
            self.data_gpu = None
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        stored = self.data_gpu
        if stored is None or stored.scalar_size() != storage_dtype(np.float32, opt, cmd.vkdev).itemsize:
            # this extractor stores another precision than the net did at load: a per-plan copy
            return [cmd.record_upload(self.data, opt, elempack=gather.output_elempack(self.data.shape, opt))]
        return [gather.view(stored, stored.numpy_shape())]
