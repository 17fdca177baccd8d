"""`<Layer>@stored` fuzz cases: the weighted layers' generators again, with their weights
written as fp16 or as the 8-bit lookup table (storage.py) instead of fp32.

Each generator takes a numpy Generator and returns a valid Case over ncnn's parameter
space, or None when the draw cannot produce one (the caller skips it).
"""

from __future__ import annotations

from . import attention, conv, matrix, recurrent, storage
from .draw import pick


# -- the same layers with their weights in another storage form --------------------------------
def _stored(base_gen):
    def gen(rng):
        case = base_gen(rng)
        if case is None or case.weights is not None:
            return None
        form = pick(rng, ("fp16", "lut"))
        loads = storage.record_loads(case, int(rng.integers(1 << 31)))
        case.weights = b"".join(storage.encode(d, t, form, rng) for d, t in loads)
        return case
    return gen


STORED = {f"{name}@stored": _stored(gen) for name, gen in {
    "Convolution": conv.convolution, "ConvolutionDepthWise": conv.convolution_depthwise,
    "Deconvolution": conv.deconvolution, "DeconvolutionDepthWise": conv.deconvolution_depthwise,
    "InnerProduct": matrix.innerproduct, "Gemm": matrix.gemm, "MultiHeadAttention": attention.multiheadattention,
    "Convolution1D": conv.convolution1d, "Deconvolution1D": conv.deconvolution1d,
    "Convolution3D": conv.convolution3d, "LSTM": recurrent.RECURRENT["LSTM"], "Embed": recurrent.embed,
}.items()}
