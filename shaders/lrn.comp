#version 450

// LRN: y = x * (bias + alpha / n * sum of x^2 over a window)^-beta, one invocation per
// scalar, pack1 or pack4. The window starts local_size / 2 before the element and spans
// local_size, clipped to the tensor (zero padding): across channels (region 0) it runs over
// channels at one position; within a channel (region 1) it is a local_size x local_size
// square of the (h, w) plane. A 1-D or 2-D blob is one channel of (1, w) or (h, w).
// NaN and infinity as numpy has them: a NaN in the window makes the result NaN, an infinite
// sum makes the factor 0 (and x * 0 is NaN for x = +-inf).

layout (constant_id = 0) const int region_type = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

// after the local size: functions there see the real gl_WorkGroupSize
#include "reduction_layout.h"
#include "reduction_rows.h"
#include "nonfinite.comp"

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int total;
    int a0; int a1; int a2;  // unpacked numpy shape, padded with ones (dims <= 3)
    int dims;
    int ep;
    int local_size;
    float alpha_div_n;
    float beta;
    float bias;
} p;

// numpy coordinates of (channel, y, x) in the LRN view of a dims-d blob
ivec4 numpy_coords(int q, int y, int x)
{
    if (p.dims == 3) return ivec4(q, y, x, 0);
    if (p.dims == 2) return ivec4(y, x, 0, 0);
    return ivec4(x, 0, 0, 0);
}

float square_at(ivec4 shape, int q, int y, int x)
{
    const float v = float(buffer_ld1(bottom_blob_data, layout_addr(numpy_coords(q, y, x), shape, p.ep)));
    return v * v;
}

// x^e as C's pow (numpy's power) has it where GLSL's pow is undefined: x <= 0, +inf, NaN
float pow_c(float x, float e)
{
    if (e == 0.f)
        return 1.f;
    if (isnan(x))
        return x;
    const float ax = abs(x);
    float r;
    if (ax == 0.f)
        r = e < 0.f ? inf_value() : 0.f;
    else if (isinf(ax))
        r = e < 0.f ? 0.f : inf_value();
    else
        r = pow(ax, e);
    if (x < 0.f)
    {
        if (floor(e) != e)
            return nan_value();
        if (mod(e, 2.f) == 1.f)
            r = -r;
    }
    return r;
}

void main()
{
    const int i = rows_flat_invocation();
    if (i >= p.total)
        return;

    const ivec4 shape = ivec4(p.a0, p.a1, p.a2, 1);
    const ivec4 c = layout_coords(i, shape, p.ep);
    // the LRN view (channels, h, w)
    int q, y, x, C, H, W;
    if (p.dims == 3) { q = c.x; y = c.y; x = c.z; C = p.a0; H = p.a1; W = p.a2; }
    else if (p.dims == 2) { q = 0; y = c.x; x = c.y; C = 1; H = p.a0; W = p.a1; }
    else { q = 0; y = 0; x = c.x; C = 1; H = 1; W = p.a0; }

    const int before = p.local_size / 2;
    float ssum = 0.f;
    if (region_type == 0)
    {
        const int q0 = max(q - before, 0);
        const int q1 = min(q - before + p.local_size, C);
        for (int qq = q0; qq < q1; qq++)
            ssum += square_at(shape, qq, y, x);
    }
    else
    {
        const int y0 = max(y - before, 0);
        const int y1 = min(y - before + p.local_size, H);
        const int x0 = max(x - before, 0);
        const int x1 = min(x - before + p.local_size, W);
        for (int yy = y0; yy < y1; yy++)
            for (int xx = x0; xx < x1; xx++)
                ssum += square_at(shape, q, yy, xx);
    }
    const float v = float(buffer_ld1(bottom_blob_data, i));
    buffer_st1(top_blob_data, i, afp(v * pow_c(p.bias + p.alpha_div_n * ssum, -p.beta)));
}
