// variants: PACK4=0,1
// alias: interp_pack4 PACK4=1
#version 450

// Resize of each channel plane by separable tap tables (ncnn's Interp: nearest, bilinear,
// bicubic). The host builds, per axis, the first source index and the weights of each
// output position's taps with ncnn's exact arithmetic (cpu_fallback/resize.py), so one
// shader serves every mode, align_corner and scale/size rule:
//
//     out(y, x) = sum_ky wh[y][ky] * (sum_kx ww[x][kx] * in(hofs[y] + ky, wofs[x] + kx))
//
// horizontal taps first, as ncnn's row buffers do. Indices are clamped to the plane:
// a tap ncnn would read outside it always has weight 0 (see resize.py).
// The table is one int buffer: offsets, then weights as float bits (exact fp32 weights
// whatever the storage precision). Each invocation writes one item (4 channels in PACK4).

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
layout (binding = 2) readonly buffer table_blob { int table_data[]; };

layout (push_constant) uniform parameter
{
    int w;
    int h;
    int cstep;
    int outw;
    int outh;
    int outcstep;
    int channels;   // channel items
    int taps_w;     // taps per output column (1 nearest/identity, 2 bilinear, 4 bicubic)
    int taps_h;
    int wofs_at;    // where each part of the table starts
    int wwt_at;
    int hofs_at;
    int hwt_at;
} p;

void main()
{
    const int gx = int(gl_GlobalInvocationID.x);
    const int gy = int(gl_GlobalInvocationID.y);
    const int gz = int(gl_GlobalInvocationID.z);

    if (gx >= p.outw || gy >= p.outh || gz >= p.channels)
        return;

    const int base = gz * p.cstep;
    const int x0 = table_data[p.wofs_at + gx];
    const int y0 = table_data[p.hofs_at + gy];

    T res = T(0.f);
    for (int ky = 0; ky < p.taps_h; ky++)
    {
        const int sy = clamp(y0 + ky, 0, p.h - 1);
        T row = T(0.f);
        for (int kx = 0; kx < p.taps_w; kx++)
        {
            const int sx = clamp(x0 + kx, 0, p.w - 1);
            const afp wx = afp(intBitsToFloat(table_data[p.wwt_at + gx * p.taps_w + kx]));
            row += LOAD(base + sy * p.w + sx) * wx;
        }
        const afp wy = afp(intBitsToFloat(table_data[p.hwt_at + gy * p.taps_h + ky]));
        res += row * wy;
    }

    STORE(gz * p.outcstep + gy * p.outw + gx, res);
}
