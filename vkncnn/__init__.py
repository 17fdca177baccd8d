"""vkncnn: run ncnn models from Python, on Vulkan compute shaders or numpy.

`import vkncnn as ncnn` runs scripts written for the `ncnn` pip package.
Importing vkncnn never loads a Vulkan loader; the GPU runtime loads on first use.
"""

# pixels adds ncnn's pixel members to Mat (Mat.from_pixels, mat.to_pixels, ...): mat.py knows nothing of them;
# model_zoo and utils are ncnn's subpackages
from . import model_zoo, pixels, utils  # noqa: F401
from .allocators import Allocator, PoolAllocator, UnlockedPoolAllocator
from .cpu_info import (
    cpu_support_arm_asimdhp,
    cpu_support_arm_neon,
    cpu_support_arm_vfpv4,
    cpu_support_x86_avx,
    cpu_support_x86_avx2,
    get_big_cpu_count,
    get_cpu_count,
    get_cpu_powersave,
    get_kmp_blocktime,
    get_little_cpu_count,
    get_omp_dynamic,
    get_omp_num_threads,
    get_omp_thread_num,
    get_physical_big_cpu_count,
    get_physical_cpu_count,
    get_physical_little_cpu_count,
    set_cpu_powersave,
    set_kmp_blocktime,
    set_omp_dynamic,
    set_omp_num_threads,
)
from .device_api import (
    GPU_CLASSES,
    create_gpu_instance,
    destroy_gpu_instance,
    get_default_gpu_index,
    get_gpu_count,
    get_gpu_device,
    get_gpu_info,
    gpu_class,
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
    MatShapeError,
    MemoryBudgetError,
    MissingPackageError,
    ModelFileError,
    ModelFormatError,
    ParamError,
    ShaderCompileError,
    ShapeError,
    TokenizerError,
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
from .mat_ops import (
    BorderType,
    cast_bfloat16_to_float32,
    cast_float16_to_float32,
    cast_float32_to_bfloat16,
    cast_float32_to_float16,
    cast_int8_to_float32,
    convert_packing,
    copy_cut_border,
    copy_make_border,
    copy_make_border_3d,
    flatten,
    quantize_to_int8,
    resize_bicubic,
    resize_bilinear,
    resize_nearest,
)
from .net import Blob, Net
from .option import Option

__version__ = "0.1.0"

__all__ = [
    "Allocator", "PoolAllocator", "UnlockedPoolAllocator", "MatShapeError", *GPU_CLASSES,
    "ArgumentError", "ArgumentTypeError", "MatAllocationError", "ModelFileError",
    "Blob", "BlobNotFoundError", "DataReader", "DataReaderFromEmpty", "DataReaderFromMemory", "Error",
    "Extractor", "GpuError", "GraphError", "Layer", "LayerError", "Mat", "MatError", "MemoryBudgetError", "ModelBin",
    "ModelBinFromDataReader", "ModelBinFromMatArray", "ModelFormatError", "Net", "Option", "ParamDict",
    "ParamError", "ShaderCompileError", "ShapeError", "TokenizerError", "UnknownLayerError", "WeightError",
    "create_gpu_instance", "create_layer", "destroy_gpu_instance", "get_default_gpu_index",
    "get_gpu_count", "get_gpu_device", "get_gpu_info", "layer_to_index", "register_layer",
    "MissingPackageError", "model_zoo", "utils",
    # mat_ops.py
    "BorderType", "cast_bfloat16_to_float32", "cast_float16_to_float32", "cast_float32_to_bfloat16",
    "cast_float32_to_float16", "cast_int8_to_float32", "convert_packing", "copy_cut_border", "copy_make_border",
    "copy_make_border_3d", "flatten", "quantize_to_int8", "resize_bicubic", "resize_bilinear", "resize_nearest",
    # cpu_info.py
    "cpu_support_arm_asimdhp", "cpu_support_arm_neon", "cpu_support_arm_vfpv4", "cpu_support_x86_avx",
    "cpu_support_x86_avx2", "get_big_cpu_count", "get_cpu_count", "get_cpu_powersave", "get_kmp_blocktime",
    "get_little_cpu_count", "get_omp_dynamic", "get_omp_num_threads", "get_omp_thread_num",
    "get_physical_big_cpu_count", "get_physical_cpu_count", "get_physical_little_cpu_count",
    "set_cpu_powersave", "set_kmp_blocktime", "set_omp_dynamic", "set_omp_num_threads",
]


def __getattr__(name: str):
    """pyncnn's GPU classes (VulkanDevice, GpuInfo, the Vk allocators), loaded on first use
    so that `import vkncnn` never loads a Vulkan loader."""
    if name in GPU_CLASSES:
        return gpu_class(name)
    raise AttributeError(f"module 'vkncnn' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(GPU_CLASSES))
