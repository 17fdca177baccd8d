"""vkncnn: run ncnn models from Python, on Vulkan compute shaders or numpy.

`import vkncnn as ncnn` runs scripts written for the `ncnn` pip package.
Importing vkncnn never loads a Vulkan loader; the GPU runtime loads on first use.
"""

# pixels adds ncnn's pixel members to Mat (Mat.from_pixels, mat.to_pixels, ...): mat.py knows nothing of them
from . import pixels  # noqa: F401
from .device_api import (
                     create_gpu_instance,
                     destroy_gpu_instance,
                     get_default_gpu_index,
                     get_gpu_count,
                     get_gpu_device,
                     get_gpu_info,
)
from .errors import (
                     ArgumentError,
                     ArgumentTypeError,
                     BlobNotFoundError,
                     Error,
                     GpuError,
                     GraphError,
                     LayerError,
                     MatAllocationError,
                     MatError,
                     MemoryBudgetError,
                     ModelFileError,
                     ModelFormatError,
                     ParamError,
                     ShaderCompileError,
                     ShapeError,
                     UnknownLayerError,
                     WeightError,
)
from .extractor import Extractor
from .format.datareader import DataReader, DataReaderFromEmpty, DataReaderFromMemory
from .format.modelbin import ModelBin, ModelBinFromDataReader, ModelBinFromMatArray
from .format.paramdict import ParamDict
from .layer import Layer, create_layer, register_layer
from .layer_types import layer_to_index
from .mat import Mat
from .net import Blob, Net
from .option import Option

__version__ = "0.1.0"

__all__ = [
    "ArgumentError", "ArgumentTypeError", "MatAllocationError", "ModelFileError",
    "Blob", "BlobNotFoundError", "DataReader", "DataReaderFromEmpty", "DataReaderFromMemory", "Error",
    "Extractor", "GpuError", "GraphError", "Layer", "LayerError", "Mat", "MatError", "MemoryBudgetError", "ModelBin",
    "ModelBinFromDataReader", "ModelBinFromMatArray", "ModelFormatError", "Net", "Option", "ParamDict",
    "ParamError", "ShaderCompileError", "ShapeError", "UnknownLayerError", "WeightError",
    "create_gpu_instance", "create_layer", "destroy_gpu_instance", "get_default_gpu_index",
    "get_gpu_count", "get_gpu_device", "get_gpu_info", "layer_to_index", "register_layer",
]
