// variants: F=2,4 CHANNELS_LAST=0,1
// vulkan1.0: CHANNELS_LAST=0
// (the channels-last layout runs with fp16 storage on tensor-core devices only)
#version 450

// Winograd F(FxF, 3x3), step 3 of 3: the output transform. Step 2 left, per tile and
// output channel item o, T*T products M (T = F + 2; frequency f = T i + j in item
// f * O4 + o, at position ty * tiles_w + tx); the FxF block of outputs is
//
//     Y = A^T M A,   F(2, 3): A^T = [ 1  1  1  0 ]     F(4, 3): A^T = [ 1  1    1     1     1    0 ]
//                                   [ 0  1 -1 -1 ]                    [ 0  r/2 -r/2   r    -r    0 ]
//                                                                     [ 0  1/2  1/2   2     2    0 ]
//                                                                     [ 0  r/4 -r/4  2r   -2r    1 ]
//
// (r = sqrt 2: the points 0, +-sqrt 2, +-1/sqrt 2, infinity, as winograd_input.comp)
// then bias, the residual (a blob of the output's shape folded in by the planner) and the
// activation, as every convolution epilogue. Rows/columns past the output (sizes that are
// not multiples of F) are dropped. Pack4 in and out, one invocation per (tile, output item).
// CHANNELS_LAST=1 (after winograd_products.comp): frequency f of tile p is read from item
// (f * in_cstep + p) * O4 + o, in_cstep being the padded tile count; the output item is
// then the fastest invocation axis, so that a subgroup's loads are contiguous.

layout (constant_id = 0) const int bias_term = 0;
layout (constant_id = 1) const int activation_type = 0;
layout (constant_id = 2) const float activation_param_0 = 0;
layout (constant_id = 3) const float activation_param_1 = 0;
layout (constant_id = 4) const int tiles_w = 1;
layout (constant_id = 5) const int tiles_h = 1;
layout (constant_id = 6) const int in_cstep = 1;     // positions per item of the T*T planes (CHANNELS_LAST: tiles, padded)
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

#ifndef F
#define F 2
#endif
#define T (F + 2)

#if CHANNELS_LAST
#define P_INDEX(fq, o, p) (((fq) * in_cstep + (p)) * O4 + (o))
#else
#define P_INDEX(fq, o, p) (((fq) * O4 + (o)) * in_cstep + (p))
#endif

// y = A^T m for one column (or row) of T values, the zeros of A^T left out
void transform(in vec4 m[T], out vec4 y[F])
{
#if F == 2
    y[0] = m[0] + m[1] + m[2];
    y[1] = m[1] - m[2] - m[3];
#else
    const float r2 = 1.41421356237f;
    const vec4 sum12 = m[1] + m[2], dif12 = m[1] - m[2];
    const vec4 sum34 = m[3] + m[4], dif34 = m[3] - m[4];
    y[0] = m[0] + sum12 + sum34;
    y[1] = r2 * (0.5f * dif12 + dif34);
    y[2] = 0.5f * sum12 + 2.f * sum34;
    y[3] = r2 * (0.25f * dif12 + 2.f * dif34) + m[5];
#endif
}

void main()
{
#if CHANNELS_LAST
    const int o = int(gl_GlobalInvocationID.x);
    const int tx = int(gl_GlobalInvocationID.y);
    const int ty = int(gl_GlobalInvocationID.z);
#else
    const int tx = int(gl_GlobalInvocationID.x);
    const int ty = int(gl_GlobalInvocationID.y);
    const int o = int(gl_GlobalInvocationID.z);
#endif
    if (tx >= tiles_w || ty >= tiles_h || o >= O4)
        return;

    const int p = ty * tiles_w + tx;
    // s = A^T M, column by column: F x T
    vec4 s[F][T];
    for (int j = 0; j < T; j++)
    {
        vec4 column[T];
        for (int i = 0; i < T; i++)
            column[i] = vec4(buffer_ld4(bottom_blob_data, P_INDEX(T * i + j, o, p)));
        vec4 y[F];
        transform(column, y);
        for (int i = 0; i < F; i++)
            s[i][j] = y[i];
    }

    const vec4 bias = bias_term == 1 ? vec4(buffer_ld4(bias_data, o)) : vec4(0.f);
    for (int i = 0; i < F; i++)
    {
        const int y = F * ty + i;
        if (y >= outh)
            break;
        vec4 row[F];  // Y = s A
        transform(s[i], row);
        for (int j = 0; j < F; j++)
        {
            const int x = F * tx + j;
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
