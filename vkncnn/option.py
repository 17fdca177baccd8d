"""Option: ncnn's run-time switches, same field names, same defaults.

Fields ncnn keeps for ABI reasons or for CPU ISAs we do not have are accepted and
kept (old scripts set them) but have no effect here; DESIGN.md lists which matter.
"""

from __future__ import annotations

import numpy as np

from .blas_threads import available_cpus
from .errors import ArgumentError, ArgumentTypeError

# ncnn's int fields and the values that mean something for them
_INT_RANGES = {
    "num_threads": (0, 1 << 16),       # clamped to 1..the CPUs there are when used
    "openmp_blocktime": (0, 1 << 20),  # ms
    "flush_denormals": (0, 3),         # off, DAZ, FTZ, both
    "vulkan_device_index": (-1, 1 << 16),  # -1 = the default device
    "kvcache_max_seqlen_hint": (0, 1 << 30),
}


def _default_threads() -> int:
    return available_cpus()


class Option:
    """Per-net options; `net.opt` is live, as in pyncnn."""

    def __init__(self) -> None:
        self.lightmode = True
        self.num_threads = _default_threads()
        self.blob_allocator = None
        self.workspace_allocator = None
        self.blob_vkallocator = None
        self.workspace_vkallocator = None
        self.staging_vkallocator = None
        self.kvcache_allocator = None
        self.kvcache_vkallocator = None
        self.kvcache_max_seqlen_hint = 0  # tokens a KV cache is expected to grow to; 0 = unknown
        self.pipeline_cache = None
        self.openmp_blocktime = 20
        self.use_winograd_convolution = True
        self.use_sgemm_convolution = True
        self.use_int8_inference = True
        # vkncnn turns the GPU on by default where a device exists (DESIGN.md);
        # Net resolves "a device exists" lazily at load_param time.
        self.use_vulkan_compute = True
        self.use_bf16_storage = False
        self.use_fp16_packed = True
        self.use_fp16_storage = True
        self.use_fp16_arithmetic = True
        self.use_int8_packed = True
        self.use_int8_storage = True
        self.use_int8_arithmetic = True
        self.use_packing_layout = True
        self.use_shader_pack8 = False
        self.use_subgroup_ops = True
        self.use_image_storage = False
        self.use_tensor_storage = False
        self.use_weights_in_host_memory = False
        self.use_bf16_packed = False
        self.use_local_pool_allocator = True
        self.use_shader_local_memory = True
        self.use_cooperative_matrix = True
        self.use_winograd23_convolution = True
        self.use_winograd43_convolution = True
        self.use_winograd63_convolution = True
        self.use_a53_a55_optimized_kernel = False
        self.use_fp16_uniform = True
        self.use_int8_uniform = True
        self.use_int16_packed = True
        self.use_int16_storage = True
        self.use_mapped_model_loading = False
        self.flush_denormals = 3
        self.vulkan_device_index = -1
        # vkncnn only: the most bytes one layer may allocate at once (an output, a workspace,
        # a device buffer); 0 or None = half the machine's memory (vkncnn/memory_budget.py)
        self.memory_budget = 0

    def __setattr__(self, name: str, value) -> None:
        """ncnn's switches are bools and its counts ints: a wrong type (a string, None, a
        float thread count) fails here, naming the field, instead of somewhere deep in a
        later run. Other fields (allocators, pipeline cache, vkncnn's own) pass as they are."""
        if name in _INT_RANGES:
            value = _checked_int(name, value)
        elif name == "lightmode" or name.startswith("use_"):
            value = _checked_bool(name, value)
        object.__setattr__(self, name, value)

    def copy(self) -> Option:
        # every extractor copies the net's options: a plain attribute-dict copy is a few
        # times cheaper than copy.copy's reduce protocol
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin

    def __repr__(self) -> str:
        on = [k for k, v in vars(self).items() if v is True]
        return f"<vkncnn.Option threads={self.num_threads} on={on}>"


def _checked_bool(name: str, value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)) and value in (0, 1):  # ncnn's C++ users write 0/1
        return bool(value)
    raise ArgumentTypeError(f"Option.{name} is a switch: expected True or False, got "
                            f"{type(value).__name__} {value!r:.40}")


def _checked_int(name: str, value) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(f"Option.{name} expects an int, got {type(value).__name__} {value!r:.40}")
    lo, hi = _INT_RANGES[name]
    if not lo <= value <= hi:
        raise ArgumentError(f"Option.{name} must be in {lo}..{hi}, got {value}")
    return int(value)
