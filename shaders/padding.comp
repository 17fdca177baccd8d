// variants: VEC4=0,1
// alias: padding_vec4 VEC4=1
#version 450

// Border padding (ncnn's Padding): constant, replicate (edge) or reflect, on every axis.
// Both tensors are seen as logical 4-D (c, d, h, w) blobs (leading extents 1 for fewer
// dims); output coordinate o on an axis reads input coordinate o - before, mapped back
// inside by the mode, or, in constant mode, gives the pad value (per channel from a table
// of float bits when per_channel = 1). One invocation writes one output scalar.
//
// VEC4=0: coordinates are logical scalars, and each side's packed address is computed
//         from its own elempack (as in gather.comp), so a channel pad that shifts channels
//         across the lanes of an item is handled.
// VEC4=1: both tensors are elempack 4 and the packing axis is padded by whole items (or not
//         at all): extents and pads on that axis count items, and whole vec4s move.

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

#if VEC4
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
#else
layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
#endif
layout (binding = 2) readonly buffer per_channel_blob { int per_channel_data[]; };

layout (push_constant) uniform parameter
{
    int total;
    int outc; int outd; int outh; int outw;
    int c; int d; int h; int w;
    int front_c; int front_d; int top; int left;
    int type;           // 0 constant, 1 replicate, 2 reflect
    float value;
    int per_channel;    // constant value of channel q = per_channel_data[q] (as float bits)
    int src_inner;
    int dst_inner;
    int src_elempack;
    int dst_elempack;
} p;

int packed_address(int index, int inner, int elempack)
{
    if (elempack == 1)
        return index;
    const int n = index / inner;
    const int i = index - n * inner;
    return ((n >> 2) * inner + i) * 4 + (n & 3);
}

// source coordinate of output coordinate o, or -1 for "pad value" (constant mode)
int source(int o, int before, int n)
{
    int i = o - before;
    if (p.type == 1)
        return clamp(i, 0, n - 1);
    if (p.type == 2)
    {
        i = abs(i);
        return (n - 1) - abs(i - (n - 1));
    }
    return (i < 0 || i >= n) ? -1 : i;
}

afp pad_value(int q)
{
    return p.per_channel == 1 ? afp(intBitsToFloat(per_channel_data[q])) : afp(p.value);
}

void main()
{
    const uint row = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int gi = int(gl_GlobalInvocationID.y * row + gl_GlobalInvocationID.x);

    if (gi >= p.total)
        return;

    const int ow = gi % p.outw;
    int f = gi / p.outw;
    const int oh = f % p.outh;
    f /= p.outh;
    const int od = f % p.outd;
    const int oc = f / p.outd;

    const int sc = source(oc, p.front_c, p.c);
    const int sd = source(od, p.front_d, p.d);
    const int sh = source(oh, p.top, p.h);
    const int sw = source(ow, p.left, p.w);
    const bool inside = sc >= 0 && sd >= 0 && sh >= 0 && sw >= 0;
    const int src = ((sc * p.d + sd) * p.h + sh) * p.w + sw;

#if VEC4
    if (inside)
    {
        buffer_cp4(top_blob_data, gi, bottom_blob_data, src);
    }
    else
    {
        const int q = oc * 4;
        buffer_st4(top_blob_data, gi, afpvec4(pad_value(q), pad_value(q + 1), pad_value(q + 2), pad_value(q + 3)));
    }
#else
    const int di = packed_address(gi, p.dst_inner, p.dst_elempack);
    if (inside)
    {
        buffer_cp1(top_blob_data, di, bottom_blob_data, packed_address(src, p.src_inner, p.src_elempack));
    }
    else
    {
        buffer_st1(top_blob_data, di, pad_value(oc));
    }
#endif
}
