#version 450

// Softmax, second pass: y = exp(x - max) / sum for every element, with (max, sum) of its
// row from reduction_rows.comp (op 8). One invocation per scalar of the tensor, pack1 or
// pack4 alike: the row of a scalar comes from its address (include/reduction_rows.h).

#include "reduction_rows.h"

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) readonly buffer stats { vec4 stats_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int total;  // scalars in the buffer
    int s0; int s1; int s2; int s3; int s4;  // merged packed axes, outermost first
    int reduced_mask;
} p;

void main()
{
    const int i = rows_flat_invocation();
    if (i >= p.total)
        return;
    const int g = rows_row_of(i, p.s0, p.s1, p.s2, p.s3, p.s4, p.reduced_mask).x;
    const vec4 st = stats_data[g];
    const float v = exp(float(buffer_ld1(bottom_blob_data, i)) - st.x) / st.y;
    buffer_st1(top_blob_data, i, afp(v));
}
