"""How weights are stored in a .bin, for the layer fuzzer: the storage flag forms ncnn's
ModelBin reads for a type-0 load (fp32, fp16, int8, the legacy 8-bit lookup table), and
a recorder that asks a layer which loads it makes (sizes and load types, in order).

Writing a case's weights in a flag form other than fp32 checks our ModelBin and the
layer's handling of what it returns (an int8 array stays int8) against ncnn's reader.
"""

from __future__ import annotations

import numpy as np

from vkncnn.testing import layer_param_text

FLAG_FP32 = 0x00000000
FLAG_FP16 = 0x01306B47
FLAG_INT8 = 0x000D4B38
# ncnn reads any flag whose four bytes do not sum to 0 and is no known tag as the
# 8-bit codebook form: 256 fp32 values, then one uint8 index per weight
FLAG_LUT = 0x00000101


def _pad4(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 4)


def raw(a) -> bytes:
    """A type-1 load: bare little-endian fp32."""
    return np.ascontiguousarray(a, "<f4").tobytes()


def fp32(a) -> bytes:
    return FLAG_FP32.to_bytes(4, "little") + raw(a)


def fp16(a) -> bytes:
    return FLAG_FP16.to_bytes(4, "little") + _pad4(np.ascontiguousarray(a, "<f2").tobytes())


def int8(q) -> bytes:
    return FLAG_INT8.to_bytes(4, "little") + _pad4(np.ascontiguousarray(q, np.int8).tobytes())


def lut(a, rng) -> bytes:
    """The codebook form: a table of 256 values and each weight's nearest entry."""
    a = np.asarray(a, np.float32).ravel()
    lo, hi = (float(a.min()), float(a.max())) if a.size else (0.0, 0.0)
    table = np.linspace(lo, hi, 256, dtype=np.float32)
    if rng.random() < 0.5:  # tables need not be sorted
        table = rng.permutation(table)
    idx = np.abs(a[:, None] - table[None, :]).argmin(axis=1).astype(np.uint8)
    return FLAG_LUT.to_bytes(4, "little") + raw(table) + _pad4(idx.tobytes())


def encode(data, type_: int, form: str, rng) -> bytes:
    """One load in the given flag form (type-1 loads have no flag: always raw fp32)."""
    if type_ == 1:
        return raw(data)
    if form == "fp16":
        return fp16(data)
    if form == "lut":
        return lut(data, rng)
    return fp32(data)


def record_loads(case, seed: int) -> list[list]:
    """[data, load type] per load the case's layer makes, with seeded random data."""
    from vkncnn.format.recording_modelbin import RecordingModelBin
    from vkncnn.net import Net

    net = Net()
    net.opt.use_vulkan_compute = False
    net.load_param_mem(layer_param_text(case.type_name, case.params, len(case.inputs), case.n_outputs))
    mb = RecordingModelBin(seed)
    for layer in net.layers():
        mb.start_layer(layer)
        layer.load_model(mb)
    return [load for layer_loads in mb.loads for load in layer_loads]
