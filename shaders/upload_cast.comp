// vulkan1.0: no
// (fp16 storage only, which Vulkan 1.0 devices do not get: no SPIR-V 1.0 build)
#version 450

// The last step of an fp16-storage upload: fp32 scalars (already packed, copied from the
// staging buffer) become the blob's fp16 scalars. Casting here instead of on the host
// saves numpy's slow float32->float16 conversion on every inference.

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer src_blob { float src_data[]; };
layout (binding = 1) writeonly buffer dst_blob { sfp dst_data[]; };

layout (push_constant) uniform parameter
{
    int n;
} p;

void main()
{
    const uint row = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int gi = int(gl_GlobalInvocationID.y * row + gl_GlobalInvocationID.x);

    if (gi >= p.n)
        return;

    dst_data[gi] = sfp(src_data[gi]);
}
