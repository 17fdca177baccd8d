"""ncnn's layer type indices (its LayerType enum), used by binary .param files.

The order is ncnn's src/CMakeLists.txt registration order; a .param.bin stores
the index, not the name. Custom layers carry bit 8 (CUSTOM_BIT) on top.
"""

LAYER_TYPE_NAMES = (
    "AbsVal", "ArgMax", "BatchNorm", "Bias", "BNLL", "Concat", "Convolution", "Crop",
    "Deconvolution", "Dropout", "Eltwise", "ELU", "Embed", "Exp", "Flatten", "InnerProduct",
    "Input", "Log", "LRN", "MemoryData", "MVN", "Pooling", "Power", "PReLU", "Proposal",
    "Reduction", "ReLU", "Reshape", "ROIPooling", "Scale", "Sigmoid", "Slice", "Softmax",
    "Split", "SPP", "TanH", "Threshold", "Tile", "RNN", "LSTM", "BinaryOp", "UnaryOp",
    "ConvolutionDepthWise", "Padding", "Squeeze", "ExpandDims", "Normalize", "Permute",
    "PriorBox", "DetectionOutput", "Interp", "DeconvolutionDepthWise", "ShuffleChannel",
    "InstanceNorm", "Clip", "Reorg", "YoloDetectionOutput", "Quantize", "Dequantize",
    "Yolov3DetectionOutput", "PSROIPooling", "ROIAlign", "Packing", "Requantize", "Cast",
    "HardSigmoid", "SELU", "HardSwish", "Noop", "PixelShuffle", "DeepCopy", "Mish",
    "StatisticsPooling", "Swish", "Gemm", "GroupNorm", "LayerNorm", "Softplus", "GRU",
    "MultiHeadAttention", "GELU", "Convolution1D", "Pooling1D", "ConvolutionDepthWise1D",
    "Convolution3D", "ConvolutionDepthWise3D", "Pooling3D", "MatMul", "Deconvolution1D",
    "DeconvolutionDepthWise1D", "Deconvolution3D", "DeconvolutionDepthWise3D", "Einsum",
    "DeformableConv2D", "GLU", "Fold", "Unfold", "GridSample", "CumulativeSum", "CopyTo",
    "Erf", "Diag", "CELU", "Shrink", "RMSNorm", "Spectrogram", "InverseSpectrogram", "Flip",
    "SDPA", "RotaryEmbed",
)

CUSTOM_BIT = 1 << 8

LAYER_TYPE_INDEX = {name: i for i, name in enumerate(LAYER_TYPE_NAMES)}


def layer_to_index(type_name: str) -> int:
    """ncnn's index of a layer type name, -1 if ncnn has no such built-in type."""
    return LAYER_TYPE_INDEX.get(type_name, -1)
