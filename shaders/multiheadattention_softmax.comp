#version 450

// Softmax along the rows of MultiHeadAttention's scores, in place: rows = heads * q_len,
// each of kv_len values (the mask was already added by the product that made them).
// One workgroup per row: the invocations stride over the row for its max, then for the
// sum of exp(x - max), reducing through shared memory, then write exp(x - max) / sum.
// The max keeps a NaN (GLSL's may drop it): a row holding a NaN or +inf comes out all NaN,
// as numpy's softmax does.

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) buffer scores_blob { sfp scores_data[]; };

layout (push_constant) uniform parameter
{
    int rows;
    int len;
} p;

shared afp reduce[256];

#include "nonfinite.comp"

void main()
{
    const int lx = int(gl_WorkGroupSize.x);
    const int tx = int(gl_LocalInvocationID.x);
    // rows over a 2-D grid of workgroups: more than 65535 of them fit
    const int row = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    if (row >= p.rows)
        return;  // the whole workgroup leaves together
    const int base = row * p.len;

    afp m = afp(-3.402823466e+38);
    for (int i = tx; i < p.len; i += lx)
        m = max_nan(m, buffer_ld1(scores_data, base + i));
    reduce[tx] = m;
    barrier();
    for (int s = lx / 2; s > 0; s /= 2)
    {
        if (tx < s)
            reduce[tx] = max_nan(reduce[tx], reduce[tx + s]);
        barrier();
    }
    m = reduce[0];
    barrier();

    afp sum = afp(0.f);
    for (int i = tx; i < p.len; i += lx)
        sum += exp(buffer_ld1(scores_data, base + i) - m);
    reduce[tx] = sum;
    barrier();
    for (int s = lx / 2; s > 0; s /= 2)
    {
        if (tx < s)
            reduce[tx] += reduce[tx + s];
        barrier();
    }
    const afp inv = afp(1.f) / reduce[0];

    for (int i = tx; i < p.len; i += lx)
        buffer_st1(scores_data, base + i, exp(buffer_ld1(scores_data, base + i) - m) * inv);
}
