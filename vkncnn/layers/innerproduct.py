"""InnerProduct (fully connected): y = activation(W x + b).

A 2-D input whose width is num_input is a batch of rows: each row is transformed,
giving (h, num_output). Any other input (1-4 dims) is flattened to one vector of
num_input values, giving (num_output,). Weights `[num_output][num_input]`.

int8 models (`int8_scale_term` != 0) load a weight scale per output and a bottom
scale; with `opt.use_int8_inference` (ncnn's default) the input is quantized, the
products summed exactly and scaled back, as ncnn computes. Otherwise the
(dequantized) weights run in fp32.
"""

from __future__ import annotations

import numpy as np

from vkncnn.cpu_fallback import conv, gemm
from vkncnn.cpu_fallback.activation import fused_activation
from vkncnn.cpu_fallback.blas import BlasThreads
from vkncnn.errors import ParamError, ShapeError, WeightError
from vkncnn.gpu.ops.dispatch_options import (
    activation_specs,
    arithmetic_fp16,
    as_pack1,
    flat_layout,
    out_elempack,
    storage_is_fp16,
)
from vkncnn.gpu.ops.matrix_product import GemmOperand, record_gemm, record_gemv, upload_row_slices
from vkncnn.gpu.vulkan.vkmat import VkMat, use_fp16_storage
from vkncnn.layer import Layer, register_layer

# batch_native crossover, numpy, 2 threads (docs/perf-notes.md, "Batched blobs"): a weight of up to
# 512x512 values gains from one product at any batch; a larger one from 16 rows on
BATCH_GEMV_WEIGHTS = 512 * 512
BATCH_MIN_ROWS = 16


@register_layer("InnerProduct")
class InnerProduct(Layer):
    def __init__(self) -> None:
        super().__init__()
        self.one_blob_only = True
        self.support_inplace = False
        self.support_vulkan = True
        self.support_vulkan_packing = True

    def load_param(self, pd) -> int:
        self.num_output = pd.get(0, 0)
        self.bias_term = pd.get(1, 0)
        self.weight_data_size = pd.get(2, 0)
        self.int8_scale_term = pd.get(8, 0)
        self.activation_type = pd.get(9, 0)
        self.activation_params = pd.get(10, np.zeros(0, np.float32))
        if self.num_output <= 0:
            raise ParamError(f"num_output (0) must be positive, got {self.num_output}")
        if self.weight_data_size <= 0 or self.weight_data_size % self.num_output:
            raise ParamError(f"weight_data_size (2) {self.weight_data_size} is not a positive multiple "
                             f"of num_output {self.num_output}")
        if not 0 <= self.activation_type <= 6:
            raise ParamError(f"activation_type (9) must be 0-6, got {self.activation_type}")
        self.num_input = self.weight_data_size // self.num_output
        self.support_int8_storage = bool(self.int8_scale_term)
        if self.int8_scale_term:
            self.support_vulkan = False  # int8 inference runs on numpy (exact integer sums)
        return 0

    def load_model(self, mb) -> int:
        weight = mb.load(self.weight_data_size, 0).reshape(self.num_output, self.num_input)
        self.bias_data = mb.load(self.num_output, 1) if self.bias_term else None
        if not self.int8_scale_term:
            if weight.dtype == np.int8:
                raise WeightError("int8 weights but int8_scale_term (8) is 0: no scales to dequantize them")
            self.weight_data = np.ascontiguousarray(weight, np.float32)
            return 0
        scales = mb.load(self.num_output, 1).astype(np.float32)
        self.bottom_int8_scale = float(mb.load(1, 1)[0])
        if weight.dtype == np.int8:
            with np.errstate(divide="ignore", invalid="ignore"):
                self.weight_data = np.where(scales[:, None] == 0, 0,
                                            weight / scales[:, None]).astype(np.float32)
            q = weight
        else:
            self.weight_data = np.ascontiguousarray(weight, np.float32)
            q = conv.quantize(weight, scales[:, None])
        # float64 holds every int8 product sum exactly
        self.weight_int8 = q.astype(np.float64)
        self.scale_in = conv.dequantize_scales(self.bottom_int8_scale, scales)
        return 0

    def forward_cpu(self, bottoms, opt):
        x = bottoms[0]
        if x.ndim == 2 and x.shape[1] == self.num_input:
            rows = x
        elif x.size == self.num_input:
            rows = x.reshape(1, -1)
        else:
            raise ShapeError(f"input {x.shape} has {x.size} values; InnerProduct expects {self.num_input} "
                             f"(or a 2-D batch of rows of {self.num_input})")
        if self.int8_scale_term and getattr(opt, "use_int8_inference", True):
            xq = rows if rows.dtype == np.int8 else conv.quantize(rows, self.bottom_int8_scale)
            acc = (xq.astype(np.float64) @ self.weight_int8.T).astype(np.float32)
            out = acc * self.scale_in
            if self.bias_data is not None:
                out += self.bias_data
        else:
            with BlasThreads(rows.shape[0] * self.weight_data.size, getattr(opt, "num_threads", 1),
                             vector=rows.shape[0] == 1):
                out = gemm.innerproduct(rows.astype(np.float32, copy=False), self.weight_data, self.bias_data)
        out = fused_activation(out, self.activation_type, self.activation_params)
        return [out if x.ndim == 2 and x.shape[1] == self.num_input else out.reshape(-1)]

    batch_native = True

    def forward_cpu_batch(self, bottoms, sizes, opt):
        """A batch of n items folded into the rows of one matrix product: each output row
        depends on its input row alone, so the result is the stack of the per-item ones."""
        x, n = bottoms[0], sizes[0]
        item = x.shape[1:]
        rows = n * item[0] if len(item) == 2 and item[1] == self.num_input else n
        if self.weight_data.size > BATCH_GEMV_WEIGHTS and rows < BATCH_MIN_ROWS:
            # a few rows times a large weight: BLAS packs the whole weight for a matrix
            # product, while one matrix-vector product per item streams it once each, which
            # was faster below 16 rows (1280->1000: 8 rows 0.45 ms as one product, 0.34 ms per item)
            return None
        if len(item) == 2 and item[1] == self.num_input:  # each item a 2-D batch of rows
            out = self.forward_cpu([x.reshape(-1, self.num_input)], opt)[0]
            return [out.reshape(n, item[0], -1)]
        if x.size == n * self.num_input:  # each item one vector, whatever its dims
            return [self.forward_cpu([x.reshape(n, self.num_input)], opt)[0]]
        return None  # per item, whose forward names the mismatch

    # -- GPU -----------------------------------------------------------------------------------
    def upload_model(self, cmd, opt) -> int:
        """Weight rows (num_output, num_input) as stored, cut into slices of output rows when
        the whole matrix would exceed the device's storage-buffer range (VGG's fc6 does on
        many devices); each slice is then one dispatch."""
        self.weight_gpu = upload_row_slices(cmd, opt, self.weight_data, use_fp16_storage(opt, self.vkdev))
        self.bias_gpu = cmd.record_upload(self.bias_data, opt) if self.bias_data is not None else None
        return 0

    def forward_gpu(self, bottoms, cmd, opt):
        x = bottoms[0]
        fp16 = storage_is_fp16(x)
        scalar = x.scalar_size()
        if x.dims == 2 and x.w == self.num_input:
            # a batch of rows: y = x W^T, the rows may arrive packed by 4
            m = x.h * x.elempack
            a = GemmOperand(x, x.w * x.elempack, x.elempack, elempack=x.elempack)
            ep = out_elempack(m, opt)
            top = VkMat.for_numpy_shape((m, self.num_output), ep, scalar, cmd.blob_allocator(opt))
            out = GemmOperand(top, self.num_output * ep, ep, elempack=ep)
        else:
            if int(np.prod(x.numpy_shape())) != self.num_input:
                raise ShapeError(f"input {x.numpy_shape()} has {int(np.prod(x.numpy_shape()))} values; "
                                 f"InnerProduct expects {self.num_input} (or a 2-D batch of rows of "
                                 f"{self.num_input})")
            if not flat_layout(x):
                x = as_pack1(x, cmd, opt)
            m = 1
            a = GemmOperand(x, 0, 1)
            # a 1-D output is the same bytes in pack1 and pack4: label it pack4 when it can be
            top = VkMat.for_numpy_shape((self.num_output,), out_elempack(self.num_output, opt), scalar,
                                        cmd.blob_allocator(opt))
            out = GemmOperand(top, 0, 1)
        act = activation_specs(self.activation_type, self.activation_params)
        if m == 1 and self.num_input % 4 == 0 and a.s_row == 0:
            for n0, weight in self.weight_gpu:  # one vector: a matrix-vector product at memory speed
                record_gemv(self, cmd, fp16, x, weight, self.bias_gpu, top, n0, self.num_input, act, opt=opt)
            return [top]
        for n0, weight in self.weight_gpu:
            rows = weight.numpy_shape()[0]
            bias = GemmOperand(self.bias_gpu, 0, 1, off=n0) if self.bias_gpu is not None else None
            # B(k, n) = W[n][k]: k is contiguous, the matrix-vector kernel reads W once, coalesced
            record_gemm(self, cmd, fp16, m, rows, self.num_input, a, GemmOperand(weight, 1, self.num_input),
                        bias, out.from_column(n0), activation=act, fp16_arithmetic=arithmetic_fp16(opt, fp16))
        return [top]
