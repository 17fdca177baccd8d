// variants: PACK4=0,1
// alias: pooling_pack4 PACK4=1
#version 450

// 2-D max / average pooling of each channel plane (ncnn's Pooling, windowed or adaptive).
// One invocation computes one output item (a scalar, or 4 channels in PACK4) at
// (x, y, channel item z). The host resolved ncnn's padding rules (cpu_fallback/pooling.py):
// the window of output (oy, ox) starts at padded (oy*stride_h, ox*stride_w), and padded
// (py, px) is input (py - pad_top, px - pad_left), a pad value outside the input.
// Average with exclude_pad counts, and sums, only the taps inside the padded-coordinate box
// [row_lo, row_hi) x [col_lo, col_hi) that ncnn considers real.
// Adaptive: PyTorch's bins [floor(i*h/out), ceil((i+1)*h/out)), the mean as sum / rows / cols.
// Max keeps a nan of its window (numpy's maximum does; GLSL's max may drop it).

layout (constant_id = 0) const int pooling_type = 0;  // 0 max, 1 average

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

#if PACK4
#define T afpvec4
#define LOAD(i) buffer_ld4(bottom_blob_data, i)
#define STORE(i, v) buffer_st4(top_blob_data, i, v)
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
#else
#define T afp
#define LOAD(i) buffer_ld1(bottom_blob_data, i)
#define STORE(i, v) buffer_st1(top_blob_data, i, v)
layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
#endif

layout (push_constant) uniform parameter
{
    int w;
    int h;
    int cstep;          // input items per channel (a 4-D input is read on its first depth slice)
    int outw;
    int outh;
    int outcstep;
    int channels;       // channel items
    int kernel_w;
    int kernel_h;
    int stride_w;
    int stride_h;
    int pad_left;
    int pad_top;
    int exclude_pad;    // average: count only the taps inside the box below
    int row_lo;
    int row_hi;
    int col_lo;
    int col_hi;
    int adaptive;
} p;

const float FLT_MAX = 3.402823466e+38;

#include "nonfinite.comp"

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);

    if (gx >= p.outw || gy >= p.outh || gz >= p.channels)
        return;

    const int base = gz * p.cstep;
    T res;

    if (p.adaptive == 1)
    {
        const int y0 = gy * p.h / p.outh;
        const int y1 = ((gy + 1) * p.h + p.outh - 1) / p.outh;
        const int x0 = gx * p.w / p.outw;
        const int x1 = ((gx + 1) * p.w + p.outw - 1) / p.outw;
        res = pooling_type == 0 ? T(-FLT_MAX) : T(0.f);
        bool first = true;
        for (int y = y0; y < y1; y++)
        {
            for (int x = x0; x < x1; x++)
            {
                const T v = LOAD(base + y * p.w + x);
                if (pooling_type == 0)
                    res = first ? v : max_nan(res, v);
                else
                    res += v;
                first = false;
            }
        }
        if (pooling_type == 1)
            res = res / afp(y1 - y0) / afp(x1 - x0);
    }
    else
    {
        const int py0 = gy * p.stride_h;
        const int px0 = gx * p.stride_w;
        res = pooling_type == 0 ? T(-FLT_MAX) : T(0.f);
        int area = 0;
        bool first = true;
        for (int ky = 0; ky < p.kernel_h; ky++)
        {
            const int py = py0 + ky;
            const int iy = py - p.pad_top;
            const bool row_in = iy >= 0 && iy < p.h;
            const bool row_counted = py >= p.row_lo && py < p.row_hi;
            for (int kx = 0; kx < p.kernel_w; kx++)
            {
                const int px = px0 + kx;
                const int ix = px - p.pad_left;
                const bool inside = row_in && ix >= 0 && ix < p.w;
                if (pooling_type == 0)
                {
                    const T v = inside ? LOAD(base + iy * p.w + ix) : T(-FLT_MAX);
                    res = first ? v : max_nan(res, v);
                    first = false;
                }
                else
                {
                    if (p.exclude_pad == 1 && !(row_counted && px >= p.col_lo && px < p.col_hi))
                        continue;
                    area += 1;
                    if (inside)
                        res += LOAD(base + iy * p.w + ix);
                }
            }
        }
        if (pooling_type == 1)
            res = res / afp(p.exclude_pad == 1 ? area : p.kernel_h * p.kernel_w);
    }

    STORE(gz * p.outcstep + gy * p.outw + gx, res);
}
