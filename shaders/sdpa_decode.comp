// variants: WRITE=0,1
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
//
// WRITE: k and v are a KV cache kept on the device (dst rows of capacity), and this step's
// rows (cur_k, cur_v: cur rows of each kv head, whose heads the cache may hold `repeat`
// times) go into it at the row the position buffer names, in this same dispatch (no cache
// write and barrier before it). One workgroup per cache head writes them; every workgroup
// reads the step's rows from cur_k and cur_v, never from the cache rows being written.

layout (constant_id = 0) const int has_mask = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer q_blob { sfpvec4 q_data[]; };
#if WRITE
layout (binding = 1) buffer k_blob { sfpvec4 k_data[]; };
layout (binding = 2) buffer v_blob { sfp v_data[]; };
#else
layout (binding = 1) readonly buffer k_blob { sfpvec4 k_data[]; };
layout (binding = 2) readonly buffer v_blob { sfp v_data[]; };
#endif
layout (binding = 3) readonly buffer mask_blob { sfp mask_data[]; };
layout (binding = 4) writeonly buffer top_blob { sfp top_blob_data[]; };
#if WRITE
layout (binding = 5) readonly buffer cur_k_blob { sfpvec4 cur_k_data[]; };
layout (binding = 6) readonly buffer cur_v_blob { sfp cur_v_data[]; };
layout (binding = 7) readonly buffer position_blob { int position_data[]; };
#endif

layout (push_constant) uniform parameter
{
    int src;         // query rows
    int dst;         // key rows
    int d;           // q / k width
    int dv;          // v width
    int per_group;   // query heads per key head
    int mask_cstep;  // 0: one mask for all heads, else src * dst
    float scale;
    int cur;         // WRITE: the step's rows per kv head
    int repeat_k;    // WRITE: cache heads per head of cur_k
    int repeat_v;    // WRITE: and of cur_v
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

// where key row j of kv head kh is read: the cache, or (WRITE) this step's rows
int k_index(int kh, int j, int first_new, int d4)
{
#if WRITE
    if (j >= first_new && j < first_new + p.cur)
        return ((kh / p.repeat_k) * p.cur + j - first_new) * d4;
#endif
    return (kh * p.dst + j) * d4;
}

float v_value(int kh, int j, int e, int first_new)
{
#if WRITE
    if (j >= first_new && j < first_new + p.cur)
        return float(buffer_ld1(cur_v_data, ((kh / p.repeat_v) * p.cur + j - first_new) * p.dv + e));
#endif
    return float(buffer_ld1(v_data, (kh * p.dst + j) * p.dv + e));
}

void main()
{
    const int L = int(gl_WorkGroupSize.x);
    const int tx = int(gl_LocalInvocationID.x);
    const int head = int(gl_WorkGroupID.x);
    const int i = int(gl_WorkGroupID.y);
    const int kh = head / p.per_group;
    const int d4 = p.d / 4;

#if WRITE
    const int first_new = position_data[0];
    if (i == 0 && head % p.per_group == 0)  // one writer per cache head
    {
        for (int x = tx; x < p.cur * d4; x += L)
        {
            const int r = x / d4;
            if (first_new + r < p.dst)
                buffer_cp4(k_data, (kh * p.dst + first_new + r) * d4 + x % d4,
                           cur_k_data, ((kh / p.repeat_k) * p.cur + r) * d4 + x % d4);
        }
        for (int x = tx; x < p.cur * p.dv; x += L)
        {
            const int r = x / p.dv;
            if (first_new + r < p.dst)
                buffer_cp1(v_data, (kh * p.dst + first_new + r) * p.dv + x % p.dv,
                           cur_v_data, ((kh / p.repeat_v) * p.cur + r) * p.dv + x % p.dv);
        }
    }
#else
    const int first_new = 0;
#endif

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
            const int krow = k_index(kh, c0 + j, first_new, d4);
            vec4 dot4 = vec4(0.f);
#if WRITE
            if (c0 + j >= first_new && c0 + j < first_new + p.cur)
            {
                for (int t = 0; t < d4; t++)
                    dot4 += q_row[t] * vec4(buffer_ld4(cur_k_data, krow + t));
            }
            else
#endif
            {
                for (int t = 0; t < d4; t++)
                    dot4 += q_row[t] * vec4(buffer_ld4(k_data, krow + t));
            }
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
            for (int j = lane; j < n; j += lanes)
                acc += weights[j] * v_value(kh, c0 + j, e, first_new);
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
