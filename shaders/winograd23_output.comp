#version 450

// Winograd F(2x2, 3x3), step 3 of 3: the output transform. Step 2 left, per tile and
// output channel item o, 16 products M (frequency f = 4 i + j in item f * O4 + o, at
// position ty * tiles_w + tx); the 2x2 block of outputs is
//
//     Y = A^T M A,   A^T = [ 1  1  1  0 ]
//                          [ 0  1 -1 -1 ]
//
// then bias, the residual (a blob of the output's shape folded in by the planner) and the
// activation, as every convolution epilogue. Rows/columns past the output (odd sizes)
// are dropped. Pack4 in and out, one invocation per (tile, output item).

layout (constant_id = 0) const int bias_term = 0;
layout (constant_id = 1) const int activation_type = 0;
layout (constant_id = 2) const float activation_param_0 = 0;
layout (constant_id = 3) const float activation_param_1 = 0;
layout (constant_id = 4) const int tiles_w = 1;
layout (constant_id = 5) const int tiles_h = 1;
layout (constant_id = 6) const int in_cstep = 1;     // positions per item of the 16 planes
layout (constant_id = 7) const int O4 = 1;           // output channel items
layout (constant_id = 8) const int outw = 1;
layout (constant_id = 9) const int outh = 1;
layout (constant_id = 10) const int out_cstep = 1;
layout (constant_id = 11) const int residual_term = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer bias_blob { sfpvec4 bias_data[]; };
layout (binding = 3) readonly buffer residual_blob { sfpvec4 residual_data[]; };

#include "activation.comp"

void main()
{
    const int tx = int(gl_GlobalInvocationID.x);
    const int ty = int(gl_GlobalInvocationID.y);
    const int o = int(gl_GlobalInvocationID.z);
    if (tx >= tiles_w || ty >= tiles_h || o >= O4)
        return;

    const int p = ty * tiles_w + tx;
    // t = A^T M (rows): 2 x 4
    vec4 t[2][4];
    for (int j = 0; j < 4; j++)
    {
        const vec4 m0 = vec4(buffer_ld4(bottom_blob_data, ((0 + j) * O4 + o) * in_cstep + p));
        const vec4 m1 = vec4(buffer_ld4(bottom_blob_data, ((4 + j) * O4 + o) * in_cstep + p));
        const vec4 m2 = vec4(buffer_ld4(bottom_blob_data, ((8 + j) * O4 + o) * in_cstep + p));
        const vec4 m3 = vec4(buffer_ld4(bottom_blob_data, ((12 + j) * O4 + o) * in_cstep + p));
        t[0][j] = m0 + m1 + m2;
        t[1][j] = m1 - m2 - m3;
    }
    const vec4 bias = bias_term == 1 ? vec4(buffer_ld4(bias_data, o)) : vec4(0.f);
    for (int i = 0; i < 2; i++)
    {
        const int y = 2 * ty + i;
        if (y >= outh)
            break;
        // Y = t A (columns)
        const vec4 row[2] = vec4[2](t[i][0] + t[i][1] + t[i][2], t[i][1] - t[i][2] - t[i][3]);
        for (int j = 0; j < 2; j++)
        {
            const int x = 2 * tx + j;
            if (x >= outw)
                break;
            const int dst = o * out_cstep + y * outw + x;
            vec4 r = row[j] + bias;
            if (residual_term == 1)
                r += vec4(buffer_ld4(residual_data, dst));
            buffer_st4(top_blob_data, dst, activation_afpvec4(afpvec4(r), activation_type,
                                                              activation_param_0, activation_param_1));
        }
    }
}
