#version 450

// The element-wise half of LayerNorm, InstanceNorm, GroupNorm, RMSNorm and Normalize:
//     y = x * a + b                      (a, b) of the element's row, from reduction_rows.comp
//     y = y * gamma[j] (+ beta[j])       when the layer is affine; gamma and beta share one
//                                        buffer, beta from p.beta_offset on (four storage
//                                        buffers in all: what every Vulkan device offers)
// where j is (spec constant affine_index)
//     1 the element's position in its row (LayerNorm, RMSNorm: gamma spans the row),
//     2 its channel, the unpacked index along the packing axis (InstanceNorm, GroupNorm,
//       Normalize), or 3 always 0 (Normalize's channel_shared scale).
// One invocation per scalar, or (lanes = 4) per pack4 item when the lanes are kept axes:
// the item's four scalars then sit in rows g..g+3 at the same position k, so one address
// decomposition serves four elements.

layout (constant_id = 0) const int affine_index = 0;  // 0: no affine
layout (constant_id = 1) const int has_beta = 0;
layout (constant_id = 2) const int lanes = 1;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

// after the local size: functions there see the real gl_WorkGroupSize
#include "reduction_rows.h"

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) readonly buffer stats { vec4 stats_data[]; };
layout (binding = 2) readonly buffer affine_blob { sfp affine_data[]; };   // gamma, then beta
layout (binding = 3) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int total;         // scalars
    int s0; int s1; int s2; int s3; int s4;
    int reduced_mask;
    int naxes;
    int channel_step;  // scalars per item row of the packing axis: inner * elempack
    int elempack;
    int beta_offset;   // where beta starts in affine_data
} p;

void main()
{
    const int i0 = rows_flat_invocation() * lanes;
    if (i0 >= p.total)
        return;
    const ivec2 gk = rows_row_of(i0, p.s0, p.s1, p.s2, p.s3, p.s4, p.reduced_mask, p.naxes);
    const int channel0 = (i0 / p.channel_step) * p.elempack + i0 % p.elempack;
    for (int l = 0; l < lanes; l++)
    {
        const int i = i0 + l;
        const vec4 st = stats_data[gk.x + l];
        float v = float(buffer_ld1(bottom_blob_data, i)) * st.x + st.y;
        if (affine_index != 0)
        {
            int j = 0;
            if (affine_index == 1)
                j = gk.y;
            else if (affine_index == 2)
                j = channel0 + l;
            v = v * float(buffer_ld1(affine_data, j));
            if (has_beta == 1)
                v = v + float(buffer_ld1(affine_data, p.beta_offset + j));
        }
        buffer_st1(top_blob_data, i, afp(v));
    }
}
