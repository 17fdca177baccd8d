#version 450

// SDPA for a few query rows (a decode step) in one dispatch: scores, softmax and P x V.
// The three-step path (sdpa_qk, sdpa_softmax, sdpa_pv_split) puts two barriers between them,
// and at one query row the work of each step is a few microseconds: the waits cost more
// than the arithmetic. Here one workgroup owns one (head, query row) and walks the keys in
// chunks of CHUNK: its invocations score the chunk's keys into shared memory, the running
// maximum and sum of the softmax are rescaled chunk by chunk (as a streaming softmax does),
// and the value rows are summed with the chunk's weights. Each invocation owns one output
// column e = tx % dv and every (L / dv)-th key of a chunk; the partial sums meet at the end.
//
// The host ensures: d % 4 == 0, d <= MAX_D, dv <= L (the workgroup size, a power of two).
// Scores, softmax and sums are fp32. A row whose scores hold a NaN or +inf comes out NaN,
// as the three-step path gives it.

layout (constant_id = 0) const int has_mask = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer q_blob { sfpvec4 q_data[]; };
layout (binding = 1) readonly buffer k_blob { sfpvec4 k_data[]; };
layout (binding = 2) readonly buffer v_blob { sfp v_data[]; };
layout (binding = 3) readonly buffer mask_blob { sfp mask_data[]; };
layout (binding = 4) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int src;         // query rows
    int dst;         // key rows
    int d;           // q / k width
    int dv;          // v width
    int per_group;   // query heads per key head
    int mask_cstep;  // 0: one mask for all heads, else src * dst
    float scale;
} p;

#define MAX_D 256
#define CHUNK 1024

const float FLT_MAX = 3.402823466e+38;

#include "nonfinite.comp"

shared vec4 q_row[MAX_D / 4];
shared float weights[CHUNK];
shared float partial[256];
shared bool poisoned;

// the workgroup's maximum (op 0) or sum (op 1) of one value per invocation
float workgroup_reduce(float x, int op)
{
    const int L = int(gl_WorkGroupSize.x);
    const int tx = int(gl_LocalInvocationID.x);
    partial[tx] = x;
    barrier();
    for (int s = L / 2; s > 0; s /= 2)
    {
        if (tx < s)
            partial[tx] = op == 0 ? max(partial[tx], partial[tx + s]) : partial[tx] + partial[tx + s];
        barrier();
    }
    const float r = partial[0];
    barrier();  // partial is reused by the next reduction
    return r;
}

void main()
{
    const int L = int(gl_WorkGroupSize.x);
    const int tx = int(gl_LocalInvocationID.x);
    const int head = int(gl_WorkGroupID.x);
    const int i = int(gl_WorkGroupID.y);
    const int kh = head / p.per_group;
    const int d4 = p.d / 4;

    for (int t = tx; t < d4; t += L)
        q_row[t] = vec4(buffer_ld4(q_data, (head * p.src + i) * d4 + t));
    if (tx == 0)
        poisoned = false;
    barrier();

    const int lanes = L / p.dv;      // invocations summing the same output column
    const int e = tx % p.dv;
    const int lane = tx / p.dv;
    const bool sums = lane < lanes;  // the last partial lane (L % dv invocations) sits out

    float running_max = -FLT_MAX;
    float running_sum = 0.f;
    float acc = 0.f;
    for (int c0 = 0; c0 < p.dst; c0 += CHUNK)
    {
        const int n = min(CHUNK, p.dst - c0);

        float chunk_max = -FLT_MAX;
        for (int j = tx; j < n; j += L)
        {
            const int krow = (kh * p.dst + c0 + j) * d4;
            vec4 dot4 = vec4(0.f);
            for (int t = 0; t < d4; t++)
                dot4 += q_row[t] * vec4(buffer_ld4(k_data, krow + t));
            float s = (dot4.x + dot4.y + dot4.z + dot4.w) * p.scale;
            if (has_mask == 1)
                s += float(buffer_ld1(mask_data, head * p.mask_cstep + i * p.dst + c0 + j));
            if (isnan(s) || is_pos_inf(s))
                poisoned = true;
            weights[j] = s;
            chunk_max = max(chunk_max, s);
        }
        const float new_max = max(running_max, workgroup_reduce(chunk_max, 0));

        float chunk_sum = 0.f;
        for (int j = tx; j < n; j += L)
        {
            const float w = exp(weights[j] - new_max);
            weights[j] = w;
            chunk_sum += w;
        }
        const float rescale = exp(running_max - new_max);
        running_sum = running_sum * rescale + workgroup_reduce(chunk_sum, 1);  // its barriers publish weights
        running_max = new_max;
        acc *= rescale;

        if (sums)
        {
            const int vbase = (kh * p.dst + c0) * p.dv + e;
            for (int j = lane; j < n; j += lanes)
                acc += weights[j] * float(buffer_ld1(v_data, vbase + j * p.dv));
        }
        barrier();  // the next chunk overwrites weights
    }

    partial[tx] = acc;
    barrier();
    if (lane == 0)
    {
        float total = 0.f;
        for (int l = 0; l < lanes; l++)
            total += partial[l * p.dv + e];
        const float o = poisoned ? nan_value() : total / running_sum;
        buffer_st1(top_blob_data, (head * p.src + i) * p.dv + e, afp(o));
    }
}
