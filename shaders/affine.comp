// variants: PACK4=0,1
#version 450

// Per-channel affine maps along the packing axis (ncnn's "channel": w of a 1-D blob,
// h of 2-D, c of 3-D/4-D), for BatchNorm, Bias, Scale and PReLU:
//
//   mode 0   y = x * scale[c] + bias[c]      (either term may be absent)
//   mode 1   y = x < 0 ? x * scale[c] : x    (PReLU, scale = the slopes)
//
// Parameters come from `params` (fp32 whatever the storage precision: scale values at 0,
// bias values at bias_offset), or the scales from a second input blob (Scale's two-input
// form, stored like any blob). lane_step = 0 with inner = n reads index 0 for every element
// (PReLU with one slope, Bias on a 1-D/2-D blob).
//
// One invocation per item: PACK4=0 an item is one scalar, PACK4=1 one vec4 of 4 consecutive
// channels (elempack 4). Item i belongs to channel group i / inner, inner = the positions of
// one channel (1 for 1-D, w for 2-D, w*h*d for 3-D/4-D).

layout (constant_id = 0) const int mode = 0;
layout (constant_id = 1) const int has_scale = 1;
layout (constant_id = 2) const int has_bias = 0;
layout (constant_id = 3) const int scale_from_blob = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

#if PACK4
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
#else
layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
#endif
layout (binding = 2) readonly buffer param_blob { float param_data[]; };
layout (binding = 3) readonly buffer scale_blob { sfp scale_blob_data[]; };

layout (push_constant) uniform parameter
{
    int n;            // items
    int inner;        // items per channel (group)
    int bias_offset;  // where the bias values start in param_data
    int lane_step;    // 1: lane k of a vec4 item is channel 4*group + k; 0: one value for all
} p;

afp scale_at(int c)
{
    if (has_scale == 0)
        return afp(1.f);
    if (scale_from_blob == 1)
        return buffer_ld1(scale_blob_data, c);
    return afp(param_data[c]);
}

afp bias_at(int c)
{
    return has_bias == 1 ? afp(param_data[p.bias_offset + c]) : afp(0.f);
}

void main()
{
    const uint row = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int gi = int(gl_GlobalInvocationID.y * row + gl_GlobalInvocationID.x);
    if (gi >= p.n)
        return;

    const int group = gi / p.inner;

#if PACK4
    // the 4 lanes are channels 4*group .. 4*group+3 (or all index 0 when shared)
    const int c0 = group * 4 * p.lane_step;
    const int step = p.lane_step;
    afpvec4 s = afpvec4(scale_at(c0), scale_at(c0 + step), scale_at(c0 + 2 * step), scale_at(c0 + 3 * step));
    afpvec4 b = afpvec4(bias_at(c0), bias_at(c0 + step), bias_at(c0 + 2 * step), bias_at(c0 + 3 * step));
    afpvec4 v = buffer_ld4(bottom_blob_data, gi);
    if (mode == 1)
        v = mix(v, v * s, lessThan(v, afpvec4(0.f)));
    else
        v = v * s + b;
    buffer_st4(top_blob_data, gi, v);
#else
    afp v = buffer_ld1(bottom_blob_data, gi);
    if (mode == 1)
        v = v < afp(0.f) ? v * scale_at(group) : v;
    else
        v = v * scale_at(group) + bias_at(group);
    buffer_st1(top_blob_data, gi, v);
#endif
}
