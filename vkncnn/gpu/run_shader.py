"""run_shader: run your own GLSL compute shader on numpy arrays, through the same runtime.

    out, = run_shader('''
        #version 450
        layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;
        layout (binding = 0) readonly buffer a_blob { sfp a[]; };
        layout (binding = 1) writeonly buffer b_blob { sfp b[]; };
        layout (push_constant) uniform parameter { int n; } p;
        void main() {
            int i = int(gl_GlobalInvocationID.x);
            if (i < p.n) buffer_st1(b, i, buffer_ld1(a, i) * 2.f);
        }''', [x], [x.shape], global_size=(x.size, 1, 1), push_constants=[x.size])

Bindings are set 0, in order: inputs, then outputs. Each array is one flat buffer of
its scalars (C order). Float arrays are stored as float32, or float16 with fp16=True
(the preamble's sfp then means float16_t); int arrays as int32 / uint32, 8-bit arrays
as they are. An output given as a shape comes back as a new float32 array; an output
given as an array is uploaded first (the shader may read it) and filled in place.
Push constants and specializations are converted to the types the shader declares.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..errors import GpuError
from .compiler.registry import compile_glsl, spirv_target
from .vulkan.command import VkCompute
from .vulkan.instance import get_gpu_device
from .vulkan.pipeline import Pipeline
from .vulkan.vkmat import VkMat, storage_dtype


def run_shader(glsl_source: str, inputs: list, outputs: list, global_size: tuple, push_constants=(),
               specializations=(), local_size: tuple = (64, 1, 1), fp16: bool = False, defines=None,
               device=None) -> list:
    """Compile and run `glsl_source` once; returns the output arrays in order."""
    vkdev = device if device is not None and not isinstance(device, int) else get_gpu_device(device)
    if fp16 and not vkdev.info.support_fp16_storage():
        raise GpuError(f"run_shader(fp16=True): '{vkdev.info.device_name()}' has no 16-bit storage")
    opt = SimpleNamespace(use_fp16_storage=bool(fp16), blob_vkallocator=None, staging_vkallocator=None)

    spirv = compile_glsl(glsl_source, defines, name="run_shader", fp16_storage=bool(fp16),
                         target=spirv_target(vkdev))
    pipeline = Pipeline(vkdev)
    pipeline.set_local_size_xyz(*local_size)
    pipeline.create(spirv, opt, list(specializations))

    arrays = [np.ascontiguousarray(a) for a in inputs]
    fill_in = []
    for out in outputs:
        if isinstance(out, np.ndarray):
            fill_in.append(out)
            arrays.append(np.ascontiguousarray(out))
        else:
            fill_in.append(None)
            arrays.append(np.zeros(tuple(out), np.float32))

    cmd = VkCompute(vkdev)
    mats: list = []
    try:
        for a in arrays:
            # a flat 1-D tensor of the array's scalars (any ndim, dims only matter to layers)
            if a.size:
                mats.append(cmd.record_upload(a.reshape(-1), opt))
            else:
                mats.append(VkMat(0, 1, 1, 1, 1, storage_dtype(a.dtype, opt, vkdev).itemsize))
        cmd.record_pipeline(pipeline, mats, list(push_constants), tuple(global_size))
        n_in = len(inputs)
        downloads = [cmd.record_download(m, opt, dtype=storage_dtype(a.dtype, opt, vkdev))
                     for m, a in zip(mats[n_in:], arrays[n_in:])]
        cmd.submit_and_wait()
        results = []
        for d, a, target in zip(downloads, arrays[n_in:], fill_in):
            data = d.array.reshape(a.shape)
            if target is not None:
                np.copyto(target, data, casting="unsafe")
                results.append(target)
            else:
                results.append(data)
        return results
    finally:
        cmd.release()
        for m in mats:
            m.release()
