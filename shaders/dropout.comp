#version 450

// Dropout at inference: top = bottom * scale, scalar by scalar. Elementwise, so the
// elempack does not matter: the buffer is read as `n` plain scalars. A scale of 0 still
// makes +-inf and nan nan (mul_spec: the driver would fold x * 0 into 0).

layout (constant_id = 0) const float scale = 1.f;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

#include "nonfinite.comp"

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };

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

    buffer_st1(top_blob_data, gi, mul_spec(buffer_ld1(bottom_blob_data, gi), scale));
}
