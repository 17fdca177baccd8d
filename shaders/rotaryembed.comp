#version 450

// RotaryEmbed: rotate pairs of x (..., seqlen, dim) by per-position angles (cos/sin caches
// (..., seqlen, dim/2) or full width (..., seqlen, dim)). Pairs are (2j, 2j+1) when
// interleaved, else (j, j + dim/2); a full-width cache gives the second half its own
// angles (cos[half + j]). One invocation per output scalar; every tensor may be pack1 or
// pack4 along its own packing axis, and the caches broadcast over x's leading axes.
// A trailing odd element (odd dim) is copied through.

layout (constant_id = 0) const int interleaved = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

// after the local size: functions there see the real gl_WorkGroupSize
#include "reduction_layout.h"
#include "reduction_rows.h"

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) readonly buffer cos_blob { sfp cos_data[]; };
layout (binding = 2) readonly buffer sin_blob { sfp sin_data[]; };
layout (binding = 3) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int total;
    int a0; int a1; int a2; int a3;  // x: unpacked shape padded with ones
    int ndim;                         // x's dims (2..4)
    int ep;                           // x's elempack (and the output's)
    int c0; int c1; int c2; int c3;  // cos/sin: unpacked shape padded with ones
    int cdim;                         // their dims
    int cep;                          // their elempack
} p;

// address of cache[..., s, j]: its leading axes follow x's where they are not 1
int cache_addr(ivec4 xc, int s, int j)
{
    const ivec4 cs = ivec4(p.c0, p.c1, p.c2, p.c3);
    const int shift = p.ndim - p.cdim;
    ivec4 cc = ivec4(0);
    for (int i = 0; i < p.cdim - 2; i++)
        cc[i] = cs[i] == 1 ? 0 : xc[i + shift];
    cc[p.cdim - 2] = s;
    cc[p.cdim - 1] = j;
    return layout_addr(cc, cs, p.cep);
}

void main()
{
    const int i = rows_flat_invocation();
    if (i >= p.total)
        return;

    const ivec4 xs = ivec4(p.a0, p.a1, p.a2, p.a3);
    ivec4 xc = layout_coords(i, xs, p.ep);
    const int dim = xs[p.ndim - 1];
    const int half_dim = dim / 2;
    const int d = xc[p.ndim - 1];
    const int s = xc[p.ndim - 2];

    float v;
    if (d >= 2 * half_dim)
    {
        v = float(buffer_ld1(bottom_blob_data, i));
    }
    else if (interleaved == 1)
    {
        const int j = d / 2;
        xc[p.ndim - 1] = 2 * j;
        const float x0 = float(buffer_ld1(bottom_blob_data, layout_addr(xc, xs, p.ep)));
        xc[p.ndim - 1] = 2 * j + 1;
        const float x1 = float(buffer_ld1(bottom_blob_data, layout_addr(xc, xs, p.ep)));
        const int ca = cache_addr(xc, s, j);
        const float c = float(buffer_ld1(cos_data, ca));
        const float sn = float(buffer_ld1(sin_data, ca));
        v = (d % 2 == 0) ? x0 * c - x1 * sn : x0 * sn + x1 * c;
    }
    else
    {
        const int j = d < half_dim ? d : d - half_dim;
        xc[p.ndim - 1] = j;
        const float x0 = float(buffer_ld1(bottom_blob_data, layout_addr(xc, xs, p.ep)));
        xc[p.ndim - 1] = j + half_dim;
        const float x1 = float(buffer_ld1(bottom_blob_data, layout_addr(xc, xs, p.ep)));
        const int cache_w = ivec4(p.c0, p.c1, p.c2, p.c3)[p.cdim - 1];
        const int cw = (d >= half_dim && cache_w == dim) ? half_dim : 0;  // full-width cache
        const int ca = cache_addr(xc, s, j + cw);
        const float c = float(buffer_ld1(cos_data, ca));
        const float sn = float(buffer_ld1(sin_data, ca));
        v = d < half_dim ? x0 * c - x1 * sn : x0 * sn + x1 * c;
    }
    buffer_st1(top_blob_data, i, afp(v));
}
