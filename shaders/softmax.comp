#version 450

// Softmax, second pass: y = exp(x - max) / sum for every element, with (max, sum) of its
// row from reduction_rows.comp (op 8). One invocation per scalar, or (lanes = 4) per pack4
// item when the lanes are kept axes (its scalars are in rows g..g+3): the row of a scalar
// comes from its address (include/reduction_rows.h), pack1 or pack4 alike.

layout (constant_id = 0) const int lanes = 1;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

// after the local size: functions there see the real gl_WorkGroupSize
#include "reduction_rows.h"

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) readonly buffer stats { vec4 stats_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int total;  // scalars in the buffer
    int s0; int s1; int s2; int s3; int s4;  // merged packed axes, outermost first
    int reduced_mask;
    int naxes;
} p;

void main()
{
    const int i0 = rows_flat_invocation() * lanes;
    if (i0 >= p.total)
        return;
    const int g = rows_row_of(i0, p.s0, p.s1, p.s2, p.s3, p.s4, p.reduced_mask, p.naxes).x;
    for (int l = 0; l < lanes; l++)
    {
        const vec4 st = stats_data[g + l];
        const float v = exp(float(buffer_ld1(bottom_blob_data, i0 + l)) - st.x) / st.y;
        buffer_st1(top_blob_data, i0 + l, afp(v));
    }
}
