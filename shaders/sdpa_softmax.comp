#version 450

// SDPA step 2: softmax over each row of the fp32 scores, in place.
//     per_thread = 1: one invocation per row (short rows: the common prefill case);
//     per_thread = 0: one workgroup per row (rows past 65535 continue along z): every
//                     invocation folds its strided share into (max, sum exp(x - max)),
//                     a shared-memory tree merges them, then the row is rewritten.
// A row holding a NaN or +inf comes out all NaN, as numpy's exp(x - max) / sum does (inf - inf
// at that element): the element poisons the sum instead of becoming the maximum.

layout (constant_id = 0) const int per_thread = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) buffer scores_blob { float scores_data[]; };

layout (push_constant) uniform parameter
{
    int rows;
    int n;  // row length
} p;

const float FLT_MAX = 3.402823466e+38;

#include "nonfinite.comp"

shared vec2 partial[256];

vec2 merge(vec2 a, vec2 b)
{
    const float m = max(a.x, b.x);
    return vec2(m, a.y * exp(a.x - m) + b.y * exp(b.x - m));
}

// online (max, sum exp(x - max)) over elements first, first + step, ... of a row
vec2 fold(int base, int first, int step)
{
    vec2 s = vec2(-FLT_MAX, 0.f);
    for (int j = first; j < p.n; j += step)
    {
        const float x = scores_data[base + j];
        if (isnan(x) || is_pos_inf(x))
            s.y = nan_value();
        else if (x > s.x)
            s = vec2(x, s.y * exp(s.x - x) + 1.f);
        else
            s.y += exp(x - s.x);
    }
    return s;
}

void rewrite(int base, int first, int step, vec2 total)
{
    for (int j = first; j < p.n; j += step)
        scores_data[base + j] = exp(scores_data[base + j] - total.x) / total.y;
}

void main()
{
    if (per_thread == 1)
    {
        const uint width = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
        const int row = int(gl_GlobalInvocationID.y * width + gl_GlobalInvocationID.x);
        if (row >= p.rows)
            return;
        rewrite(row * p.n, 0, 1, fold(row * p.n, 0, 1));
        return;
    }

    const int row = int(gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y);
    if (row >= p.rows)
        return;  // uniform in the workgroup
    const int lid = int(gl_LocalInvocationID.x);
    const int L = int(gl_WorkGroupSize.x);
    const int base = row * p.n;

    partial[lid] = fold(base, lid, L);
    barrier();
    for (int h = L / 2; h > 0; h /= 2)
    {
        if (lid < h)
            partial[lid] = merge(partial[lid], partial[lid + h]);
        barrier();
    }
    rewrite(base, lid, L, partial[0]);
}
