#version 450

// PriorBox: the anchor boxes of a w x h feature map, one invocation per (prior, cell).
// Prior k of cell (x, y) is centred at (cx, cy) with half extents half_sizes[k]
// (computed on the host from min/max sizes and aspect ratios, fp32):
//     caffe (mxnet = 0): ((cx - hw) / image_w, (cy - hh) / image_h, (cx + hw) / image_w,
//                        (cy + hh) / image_h) in row 0 of a (2, 4 * count) output, the four
//                        variances in row 1;
//     mxnet (mxnet = 1): (cx - hw, cy - hh, cx + hw, cy + hh) in a (4 * count,) output.
// cx is accumulated step by step in fp32 (ncnn's center_x += step_w), cy multiplied.

layout (constant_id = 0) const int mxnet = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

// after the local size: functions there see the real gl_WorkGroupSize
#include "reduction_rows.h"

layout (binding = 0) readonly buffer half_sizes { float half_sizes_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int w;
    int h;
    int num_prior;
    int clip;
    float start_x;
    float start_y;
    float step_w;
    float step_h;
    float image_w;
    float image_h;
    float var0; float var1; float var2; float var3;
} p;

void main()
{
    const int n = rows_flat_invocation();  // (y * w + x) * num_prior + k
    const int count = p.w * p.h * p.num_prior;
    if (n >= count)
        return;
    const int k = n % p.num_prior;
    const int x = (n / p.num_prior) % p.w;
    const int y = n / (p.num_prior * p.w);

    float cx = p.start_x;
    for (int j = 0; j < x; j++)
        cx += p.step_w;
    const float cy = p.start_y + float(y) * p.step_h;
    const float hw = half_sizes_data[2 * k];
    const float hh = half_sizes_data[2 * k + 1];

    vec4 box = vec4(cx - hw, cy - hh, cx + hw, cy + hh);
    if (mxnet == 0)
        box = box / vec4(p.image_w, p.image_h, p.image_w, p.image_h);
    if (p.clip == 1)
        box = clamp(box, vec4(0.f), vec4(1.f));

    for (int c = 0; c < 4; c++)
        buffer_st1(top_blob_data, 4 * n + c, afp(box[c]));
    if (mxnet == 0)
    {
        const vec4 var = vec4(p.var0, p.var1, p.var2, p.var3);
        for (int c = 0; c < 4; c++)
            buffer_st1(top_blob_data, 4 * count + 4 * n + c, afp(var[c]));
    }
}
