#version 450

// Winograd F(2x2, 3x3), step 1 of 3: the input transform. A 3x3 stride-1 convolution's
// outputs are computed in 2x2 blocks ("tiles"); tile (ty, tx) reads the 4x4 input patch
// whose corner is (2 ty - pad_top, 2 tx - pad_left) (pad_value outside the input) and
// turns it into 16 "frequencies"
//
//     V = B^T d B,   B^T = [ 1  0 -1  0 ]
//                          [ 0  1  1  0 ]
//                          [ 0 -1  1  0 ]
//                          [ 0  1  0 -1 ]
//
// Frequency f = 4 i + j of input channel item c lands in item f * C4 + c of the output,
// at position ty * tiles_w + tx: 16 planes of C channels, so step 2 is 16 independent
// matrix products (a grouped 1x1 convolution, groups = frequencies) and step 3
// (winograd23_output.comp) folds the products back into 2x2 blocks. Pack4 in and out:
// one invocation per (tile, channel item) moves whole vec4 items.

layout (constant_id = 0) const int w = 1;            // input width, height
layout (constant_id = 1) const int h = 1;
layout (constant_id = 2) const int in_cstep = 1;     // positions per input channel item
layout (constant_id = 3) const int C4 = 1;           // input channel items
layout (constant_id = 4) const int tiles_w = 1;
layout (constant_id = 5) const int tiles_h = 1;
layout (constant_id = 6) const int out_cstep = 1;    // positions per item of the 16 planes
layout (constant_id = 7) const int pad_top = 0;
layout (constant_id = 8) const int pad_left = 0;
layout (constant_id = 9) const float pad_value = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };

void main()
{
    const int tx = int(gl_GlobalInvocationID.x);
    const int ty = int(gl_GlobalInvocationID.y);
    const int c = int(gl_GlobalInvocationID.z);
    if (tx >= tiles_w || ty >= tiles_h || c >= C4)
        return;

    const int y0 = 2 * ty - pad_top;
    const int x0 = 2 * tx - pad_left;
    const int base = c * in_cstep;
    vec4 d[4][4];
    for (int i = 0; i < 4; i++)
    {
        for (int j = 0; j < 4; j++)
        {
            const int y = y0 + i;
            const int x = x0 + j;
            d[i][j] = (y >= 0 && x >= 0 && y < h && x < w) ? vec4(buffer_ld4(bottom_blob_data, base + y * w + x))
                                                         : vec4(pad_value);
        }
    }
    // t = B^T d (rows), then V = t B (columns)
    vec4 t[4][4];
    for (int j = 0; j < 4; j++)
    {
        t[0][j] = d[0][j] - d[2][j];
        t[1][j] = d[1][j] + d[2][j];
        t[2][j] = d[2][j] - d[1][j];
        t[3][j] = d[1][j] - d[3][j];
    }
    const int o = ty * tiles_w + tx;
    for (int i = 0; i < 4; i++)
    {
        const vec4 v0 = t[i][0] - t[i][2];
        const vec4 v1 = t[i][1] + t[i][2];
        const vec4 v2 = t[i][2] - t[i][1];
        const vec4 v3 = t[i][1] - t[i][3];
        buffer_st4(top_blob_data, ((4 * i + 0) * C4 + c) * out_cstep + o, afpvec4(v0));
        buffer_st4(top_blob_data, ((4 * i + 1) * C4 + c) * out_cstep + o, afpvec4(v1));
        buffer_st4(top_blob_data, ((4 * i + 2) * C4 + c) * out_cstep + o, afpvec4(v2));
        buffer_st4(top_blob_data, ((4 * i + 3) * C4 + c) * out_cstep + o, afpvec4(v3));
    }
}
