// variants: F=2,4 CHANNELS_LAST=0,1
// vulkan1.0: CHANNELS_LAST=0
// (the channels-last layout runs with fp16 storage on tensor-core devices only)
#version 450

// Winograd F(FxF, 3x3), step 1 of 3: the input transform (F = 2 or 4, gpu/ops/winograd_convolution.py
// picks). A 3x3 stride-1 convolution's outputs are computed in FxF blocks ("tiles"); tile
// (ty, tx) reads the TxT input patch (T = F + 2) whose corner is (F ty - pad_top,
// F tx - pad_left) (pad_value outside the input) and turns it into T*T "frequencies"
//
//     V = B^T d B,   F(2, 3): B^T = [ 1  0 -1  0 ]     F(4, 3): B^T = [ 1   0    -5/2  0    1  0 ]
//                                   [ 0  1  1  0 ]                    [ 0  -r    -2    r/2  1  0 ]
//                                   [ 0 -1  1  0 ]                    [ 0   r    -2   -r/2  1  0 ]
//                                   [ 0  1  0 -1 ]                    [ 0  -r/2  -1/2  r    1  0 ]
//                                                                     [ 0   r/2  -1/2 -r    1  0 ]
//                                                                     [ 0   1     0   -5/2  0  1 ]
//
// (r = sqrt 2; Lavin & Gray's points 0, +-1, infinity for F(2, 3); for F(4, 3) the points
// 0, +-sqrt 2, +-1/sqrt 2, infinity that ncnn's Vulkan winograd43 takes, whose transforms'
// coefficients stay within 5/2 and 2 sqrt 2: fewer bits lost to fp16 storage of V and of
// the products than with +-1, +-2 and their coefficients of 5 and 8). Frequency f = T i + j
// of input channel item c lands in item f * C4 + c of the output, at position
// ty * tiles_w + tx: T*T planes of C channels, so step 2 is T*T independent matrix
// products (a grouped 1x1 convolution, groups = frequencies) and step 3
// (winograd_output.comp) folds the products back into FxF blocks. Pack4 in and out: one
// invocation per (tile, channel item) moves whole vec4 items.

layout (constant_id = 0) const int w = 1;            // input width, height
layout (constant_id = 1) const int h = 1;
layout (constant_id = 2) const int in_cstep = 1;     // positions per input channel item
layout (constant_id = 3) const int C4 = 1;           // input channel items
layout (constant_id = 4) const int tiles_w = 1;
layout (constant_id = 5) const int tiles_h = 1;
layout (constant_id = 6) const int out_cstep = 1;    // positions per item of the T*T planes (CHANNELS_LAST: tiles, padded)
layout (constant_id = 7) const int pad_top = 0;
layout (constant_id = 8) const int pad_left = 0;
layout (constant_id = 9) const float pad_value = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };

#ifndef F
#define F 2
#endif
#define T (F + 2)

#if CHANNELS_LAST
#define V_INDEX(fq, c, o) (((fq) * out_cstep + (o)) * C4 + (c))
#else
#define V_INDEX(fq, c, o) (((fq) * C4 + (c)) * out_cstep + (o))
#endif

// r = B^T d for one column (or row) of T values, the zeros of B^T left out
void transform(in vec4 d[T], out vec4 r[T])
{
#if F == 2
    r[0] = d[0] - d[2];
    r[1] = d[1] + d[2];
    r[2] = d[2] - d[1];
    r[3] = d[1] - d[3];
#else
    const float r2 = 1.41421356237f;
    const vec4 even1 = d[4] - 2.f * d[2], odd1 = r2 * (0.5f * d[3] - d[1]);
    const vec4 even3 = d[4] - 0.5f * d[2], odd3 = r2 * (d[3] - 0.5f * d[1]);
    r[0] = d[0] - 2.5f * d[2] + d[4];
    r[1] = even1 + odd1;
    r[2] = even1 - odd1;
    r[3] = even3 + odd3;
    r[4] = even3 - odd3;
    r[5] = d[1] - 2.5f * d[3] + d[5];
#endif
}

void main()
{
#if CHANNELS_LAST
    const int c = int(gl_GlobalInvocationID.x);
    const int tx = int(gl_GlobalInvocationID.y);
    const int ty = int(gl_GlobalInvocationID.z);
#else
    const int tx = int(gl_GlobalInvocationID.x);
    const int ty = int(gl_GlobalInvocationID.y);
    const int c = int(gl_GlobalInvocationID.z);
#endif
    if (tx >= tiles_w || ty >= tiles_h || c >= C4)
        return;

    const int y0 = F * ty - pad_top;
    const int x0 = F * tx - pad_left;
    const int base = c * in_cstep;
    // t = B^T d, column by column
    vec4 t[T][T];
    for (int j = 0; j < T; j++)
    {
        vec4 column[T];
        for (int i = 0; i < T; i++)
        {
            const int y = y0 + i;
            const int x = x0 + j;
            column[i] = (y >= 0 && x >= 0 && y < h && x < w) ? vec4(buffer_ld4(bottom_blob_data, base + y * w + x))
                                                             : vec4(pad_value);
        }
        vec4 r[T];
        transform(column, r);
        for (int i = 0; i < T; i++)
            t[i][j] = r[i];
    }
    // V = t B, row by row
    const int o = ty * tiles_w + tx;
    for (int i = 0; i < T; i++)
    {
        vec4 v[T];
        transform(t[i], v);
        for (int j = 0; j < T; j++)
            buffer_st4(top_blob_data, V_INDEX(T * i + j, c, o), afpvec4(v[j]));
    }
}
