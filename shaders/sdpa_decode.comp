// variants: WRITE=0,1 QKNORM=0,1 SUBGROUP=0,1
// vulkan1.0: SUBGROUP=0
#version 450
#extension GL_EXT_control_flow_attributes : require
#if SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

// SDPA for a few query rows (a decode step) in one dispatch: scores, softmax and P x V.
// The three-step path (sdpa_qk, sdpa_softmax, sdpa_pv_split) puts two barriers between them,
// and at one query row the work of each step is a few microseconds: the waits cost more
// than the arithmetic.
//
// The keys of each (head, query row) are split into `splits` runs of `span` keys, a
// workgroup each, so that a step's few heads still spread over the whole GPU (with one
// workgroup per head, 14 heads kept 14 cores busy, each walking every key). A workgroup
// scores its keys into shared memory in chunks of CHUNK, keeps a streaming softmax's maximum
// and sum (rescaled chunk by chunk) and sums the value rows with the weights: an invocation
// owns four output columns and every (L / (dv / 4))-th key. With one split it writes the
// output; else it leaves its maximum, sum and column sums in `work`, and the workgroup that
// finishes last for its (head, row) (an atomic count in `work`, zeroed by the host before the
// dispatch) merges the splits, rescaling each by exp(its max - the overall max).
//
// The host ensures: d % 4 == 0, d <= MAX_D, dv % 4 == 0, dv / 4 <= L (the workgroup size, a
// power of two), every split holds at least one key; the shape constants, where given, equal
// the push constants (SCORE_STEPS >= span / L and PV_STEPS >= span / (L / dv4), rounded up). Scores, softmax and sums are fp32. A
// row whose scores hold a NaN or +inf comes out NaN, as the three-step path gives it.
//
// WRITE: k and v are a KV cache kept on the device (dst rows of capacity), and this step's
// rows (cur_k, cur_v: cur rows of each kv head, whose heads the cache may hold `repeat`
// times) go into it at the row the position buffer names, in this same dispatch (no cache
// write and barrier before it). The first split's workgroup of one query head per cache head
// writes them; every workgroup reads the step's rows from cur_k and cur_v, never from the
// cache rows being written.
//
// SUBGROUP: the workgroup's maxima and sums meet by subgroup shuffles, then once in shared
// memory (the host's choice where the device has them, with at most 64 subgroups a
// workgroup); else in a shared-memory tree of log2(L) + 2 barriers.
//
// QKNORM (with WRITE): q and the step's key row arrive as the products gave them, and each
// workgroup applies the decoder's per-head RMSNorms (gamma q_gamma / k_gamma, over d) and,
// with QK_ROPE, the one-token RoPE after them, to its q row and to the new key row in shared
// memory (k_new): the writer stores k_new in the cache, and the new key is scored from it. The
// norms' dispatch and barrier before the attention go (Qwen3, Hunyuan). One query row and one
// new key row only (cur 1).

layout (constant_id = 0) const int has_mask = 0;
// The shapes, when the host knows them as it makes the pipeline (0: read from the push
// constants, loops of a runtime length). Known, every loop below has a constant trip count
// and unrolls, so that an invocation issues all its loads of a key row, or of its value
// rows, before the first of them returns: a runtime-length loop walked them one round trip
// to memory at a time, which was most of this dispatch's time at a few hundred keys.
layout (constant_id = 1) const int D4 = 0;           // d / 4
layout (constant_id = 2) const int DV4 = 0;          // dv / 4
layout (constant_id = 3) const int SCORE_STEPS = 0;  // keys an invocation scores, at most (per chunk)
layout (constant_id = 4) const int PV_STEPS = 0;     // keys a summing invocation takes, at most (per chunk)
layout (constant_id = 5) const int SPLITS = 0;       // workgroups per (head, row)
layout (constant_id = 6) const int QK_ROPE = 0;      // QKNORM: 1 rotates pairs (j, j + d/2)
layout (constant_id = 7) const float QK_EPS_Q = 0;   // QKNORM: the norms' eps
layout (constant_id = 8) const float QK_EPS_K = 0;
// 1: the product reading the output merges the splits (innerproduct_gemv.comp's MERGE):
// every workgroup, one split's too, leaves its record in `work` and is done; no count, no
// merge here, and nothing for the host to zero first
layout (constant_id = 9) const int MERGE_BY_READER = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer q_blob { sfpvec4 q_data[]; };
#if WRITE
layout (binding = 1) buffer k_blob { sfpvec4 k_data[]; };
layout (binding = 2) buffer v_blob { sfpvec4 v_data[]; };
#else
layout (binding = 1) readonly buffer k_blob { sfpvec4 k_data[]; };
layout (binding = 2) readonly buffer v_blob { sfpvec4 v_data[]; };
#endif
layout (binding = 3) readonly buffer mask_blob { sfp mask_data[]; };
layout (binding = 4) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
// splits > 1 (or MERGE_BY_READER): heads * src counters, then per (row, head, split) its max,
// sum, NaN flag and dv column sums, as float bits (vkncnn/gpu/ops/split_records.py)
layout (binding = 5) coherent buffer work_blob { uint work_data[]; };
#if WRITE
layout (binding = 6) readonly buffer cur_k_blob { sfpvec4 cur_k_data[]; };
layout (binding = 7) readonly buffer cur_v_blob { sfpvec4 cur_v_data[]; };
layout (binding = 8) readonly buffer position_blob { int position_data[]; };
#endif
#if QKNORM
layout (binding = 9) readonly buffer q_gamma_blob { sfp q_gamma_data[]; };
layout (binding = 10) readonly buffer k_gamma_blob { sfp k_gamma_data[]; };
layout (binding = 11) readonly buffer cos_blob { sfp cos_data[]; };
layout (binding = 12) readonly buffer sin_blob { sfp sin_data[]; };
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
    int splits;      // workgroups per (head, row)
    int span;        // keys per split
} p;

#define MAX_D 256
#define CHUNK 1024

const float FLT_MAX = 3.402823466e+38;

#include "nonfinite.comp"

shared vec4 q_row[MAX_D / 4];
shared float weights[CHUNK];
shared float partial[256];
shared vec4 partial4[256];
shared bool poisoned;
shared bool merges;
#if QKNORM
shared vec4 k_new[MAX_D / 4];
// the norms' gammas and the RoPE's angles, loaded with the rows: one wait on memory for all
shared float q_gamma[MAX_D];
shared float k_gamma[MAX_D];
shared float rope_cos[MAX_D / 2];
shared float rope_sin[MAX_D / 2];
#endif

// the workgroup's maximum (op 0) or sum (op 1) of one value per invocation
float workgroup_reduce(float x, int op)
{
#if SUBGROUP
    for (uint offset = gl_SubgroupSize / 2; offset > 0; offset /= 2)
    {
        const float y = subgroupShuffleXor(x, offset);
        x = op == 0 ? max(x, y) : x + y;
    }
    // each op its own half of partial: a reduction's reads end before the next of its op
    // writes, with the other op's barrier between them
    const int at = op * 128;
    if (gl_SubgroupInvocationID == 0)
        partial[at + gl_SubgroupID] = x;
    barrier();
    float r = partial[at];
    for (int g = 1; g < int(gl_NumSubgroups); g++)
        r = op == 0 ? max(r, partial[at + g]) : r + partial[at + g];
    return r;
#else
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
#endif
}

#if QKNORM
// both sums of one value pair per invocation over the workgroup (partial4's first two lanes)
vec2 workgroup_sum2(vec2 x)
{
#if SUBGROUP
    for (uint offset = gl_SubgroupSize / 2; offset > 0; offset /= 2)
        x += subgroupShuffleXor(x, offset);
    if (gl_SubgroupInvocationID == 0)
        partial4[gl_SubgroupID].xy = x;
    barrier();
    vec2 r = partial4[0].xy;
    for (int g = 1; g < int(gl_NumSubgroups); g++)
        r += partial4[g].xy;
    barrier();  // partial4 is reused by the P x V sums
    return r;
#else
    const int L = int(gl_WorkGroupSize.x);
    const int tx = int(gl_LocalInvocationID.x);
    partial4[tx].xy = x;
    barrier();
    for (int s = L / 2; s > 0; s /= 2)
    {
        if (tx < s)
            partial4[tx].xy += partial4[tx + s].xy;
        barrier();
    }
    const vec2 r = partial4[0].xy;
    barrier();  // partial4 is reused by the P x V sums
    return r;
#endif
}

// q_row = rope(q / rms(q) * q_gamma) and (WRITE) k_new = rope(k / rms(k) * k_gamma): the
// decoder's per-head norms and RoPE of the step's q row and new key row in shared memory,
// both at once (one reduction), by the whole workgroup. Each invocation owns a pair of
// elements (j, j + d/2) with the RoPE, one element without: it reads and writes only its own,
// in place. Shared arrays are named here, not passed: a GLSL array parameter is a private copy.
void norm_rope_rows(int d4)
{
    const int L = int(gl_WorkGroupSize.x);
    const int tx = int(gl_LocalInvocationID.x);
    vec2 squares = vec2(0.f);
    for (int t = tx; t < d4; t += L)
    {
        squares.x += dot(q_row[t], q_row[t]);
#if WRITE
        squares.y += dot(k_new[t], k_new[t]);
#endif
    }
    const int d = d4 * 4;
    const vec2 inv_rms = 1.f / sqrt(workgroup_sum2(squares) / float(d) + vec2(QK_EPS_Q, QK_EPS_K));
    const int half_d = d / 2;
    for (int e = tx; e < (QK_ROPE != 0 ? half_d : d); e += L)
    {
        const float q0 = q_row[e / 4][e % 4] * inv_rms.x * q_gamma[e];
#if WRITE
        const float k0 = k_new[e / 4][e % 4] * inv_rms.y * k_gamma[e];
#endif
        if (QK_ROPE == 0)
        {
            q_row[e / 4][e % 4] = q0;
#if WRITE
            k_new[e / 4][e % 4] = k0;
#endif
            continue;
        }
        const int e2 = e + half_d;
        const float c = rope_cos[e];
        const float s = rope_sin[e];
        const float q1 = q_row[e2 / 4][e2 % 4] * inv_rms.x * q_gamma[e2];
        q_row[e / 4][e % 4] = q0 * c - q1 * s;
        q_row[e2 / 4][e2 % 4] = q1 * c + q0 * s;
#if WRITE
        const float k1 = k_new[e2 / 4][e2 % 4] * inv_rms.y * k_gamma[e2];
        k_new[e / 4][e % 4] = k0 * c - k1 * s;
        k_new[e2 / 4][e2 % 4] = k1 * c + k0 * s;
#endif
    }
    barrier();
}
#endif

// where key row j of kv head kh is read: the cache, or (WRITE) this step's rows
bool is_new(int j, int first_new)
{
#if WRITE
    return j >= first_new && j < first_new + p.cur;
#else
    return false;
#endif
}

vec4 v_quad(int kh, int j, int e4, int first_new, int dv4)
{
#if WRITE
    if (is_new(j, first_new))
        return vec4(buffer_ld4(cur_v_data, ((kh / p.repeat_v) * p.cur + j - first_new) * dv4 + e4));
#endif
    return vec4(buffer_ld4(v_data, (kh * p.dst + j) * dv4 + e4));
}

float key_score(int kh, int j, int first_new, int d4)
{
    vec4 dot4 = vec4(0.f);
#if WRITE && QKNORM
    if (is_new(j, first_new))
    {
        for (int t = 0; t < d4; t++)
            dot4 += q_row[t] * k_new[t];
        return dot4.x + dot4.y + dot4.z + dot4.w;
    }
#elif WRITE
    if (is_new(j, first_new))
    {
        const int row = ((kh / p.repeat_k) * p.cur + j - first_new) * d4;
        for (int t = 0; t < d4; t++)
            dot4 += q_row[t] * vec4(buffer_ld4(cur_k_data, row + t));
        return dot4.x + dot4.y + dot4.z + dot4.w;
    }
#endif
    const int row = (kh * p.dst + j) * d4;
    [[unroll]] for (int t = 0; t < d4; t++)  // d4 is D4 where known
        dot4 += q_row[t] * vec4(buffer_ld4(k_data, row + t));
    return dot4.x + dot4.y + dot4.z + dot4.w;
}

void main()
{
    const int L = int(gl_WorkGroupSize.x);
    const int tx = int(gl_LocalInvocationID.x);
    const int splits = SPLITS > 0 ? SPLITS : p.splits;
    const int head = int(gl_WorkGroupID.x) / splits;
    const int split = int(gl_WorkGroupID.x) % splits;
    const int heads = int(gl_NumWorkGroups.x) / splits;
    const int i = int(gl_WorkGroupID.y);
    const int kh = head / p.per_group;
    const int d4 = D4 > 0 ? D4 : p.d / 4;
    const int dv4 = DV4 > 0 ? DV4 : p.dv / 4;

#if WRITE
    const int first_new = position_data[0];
#else
    const int first_new = 0;
#endif

    for (int t = tx; t < d4; t += L)
    {
        q_row[t] = vec4(buffer_ld4(q_data, (head * p.src + i) * d4 + t));
#if QKNORM && WRITE
        k_new[t] = vec4(buffer_ld4(cur_k_data, (kh / p.repeat_k) * d4 + t));
#endif
    }
#if QKNORM
    for (int e = tx; e < d4 * 4; e += L)
    {
        q_gamma[e] = float(buffer_ld1(q_gamma_data, e));
#if WRITE
        k_gamma[e] = float(buffer_ld1(k_gamma_data, e));
#endif
        if (QK_ROPE != 0 && e < d4 * 2)
        {
            rope_cos[e] = float(buffer_ld1(cos_data, e));
            rope_sin[e] = float(buffer_ld1(sin_data, e));
        }
    }
#endif
    if (tx == 0)
        poisoned = false;
    barrier();
#if QKNORM
    // the step's q row and new key row normed and rotated before anything reads them
    norm_rope_rows(d4);
#endif

#if WRITE
    if (i == 0 && split == 0 && head % p.per_group == 0)  // one writer per cache head
    {
#if QKNORM
        for (int t = tx; t < d4; t += L)
            if (first_new < p.dst)
                buffer_st4(k_data, (kh * p.dst + first_new) * d4 + t, afpvec4(k_new[t]));
#else
        for (int x = tx; x < p.cur * d4; x += L)
        {
            const int r = x / d4;
            if (first_new + r < p.dst)
                buffer_cp4(k_data, (kh * p.dst + first_new + r) * d4 + x % d4,
                           cur_k_data, ((kh / p.repeat_k) * p.cur + r) * d4 + x % d4);
        }
#endif
        for (int x = tx; x < p.cur * dv4; x += L)
        {
            const int r = x / dv4;
            if (first_new + r < p.dst)
                buffer_cp4(v_data, (kh * p.dst + first_new + r) * dv4 + x % dv4,
                           cur_v_data, ((kh / p.repeat_v) * p.cur + r) * dv4 + x % dv4);
        }
    }
#endif

    const int lanes = L / dv4;       // invocations summing the same four output columns
    const int e4 = tx % dv4;
    const int lane = tx / dv4;
    const bool sums = lane < lanes;  // the last partial lane (L % dv4 invocations) sits out

    const int k0 = split * p.span;
    const int k1 = min(p.dst, k0 + p.span);
    float running_max = -FLT_MAX;
    float running_sum = 0.f;
    vec4 acc = vec4(0.f);
    for (int c0 = k0; c0 < k1; c0 += CHUNK)
    {
        const int n = min(CHUNK, k1 - c0);

        float chunk_max = -FLT_MAX;
        const int score_steps = SCORE_STEPS > 0 ? SCORE_STEPS : (n + L - 1) / L;
        [[unroll]] for (int step = 0; step < score_steps; step++)
        {
            const int j = tx + step * L;
            if (j < n)  // a guard, not a break: the unrolled steps' loads can all be in flight
            {
                float s = key_score(kh, c0 + j, first_new, d4) * p.scale;
                if (has_mask == 1)
                    s += float(buffer_ld1(mask_data, head * p.mask_cstep + i * p.dst + c0 + j));
                if (isnan(s) || is_pos_inf(s))
                    poisoned = true;
                weights[j] = s;
                chunk_max = max(chunk_max, s);
            }
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
            const int pv_steps = PV_STEPS > 0 ? PV_STEPS : (n + lanes - 1) / lanes;
            [[unroll]] for (int step = 0; step < pv_steps; step++)
            {
                const int j = lane + step * lanes;
                if (j < n)
                    acc += weights[j] * v_quad(kh, c0 + j, e4, first_new, dv4);
            }
        }
        barrier();  // the next chunk overwrites weights
    }

    partial4[tx] = acc;
    barrier();
    vec4 total = vec4(0.f);
    if (lane == 0)
    {
        for (int l = 0; l < lanes; l++)
            total += partial4[l * dv4 + e4];
    }
    const int out_at = (head * p.src + i) * dv4 + e4;
    if (splits == 1 && MERGE_BY_READER == 0)
    {
        if (lane == 0)
            buffer_st4(top_blob_data, out_at, afpvec4(poisoned ? vec4(nan_value()) : total / running_sum));
        return;
    }

    // this split's record: max, sum, NaN flag, then the dv column sums
    const int record = p.dv + 3;
    const int counter = i * heads + head;
    const int base = heads * p.src + (counter * splits + split) * record;
    if (tx == 0)
    {
        work_data[base] = floatBitsToUint(running_max);
        work_data[base + 1] = floatBitsToUint(running_sum);
        work_data[base + 2] = poisoned ? 1u : 0u;
    }
    if (lane == 0)
    {
        for (int c = 0; c < 4; c++)
            work_data[base + 3 + e4 * 4 + c] = floatBitsToUint(total[c]);
    }
    if (MERGE_BY_READER != 0)
        return;
    memoryBarrierBuffer();
    barrier();
    if (tx == 0)
        merges = atomicAdd(work_data[counter], 1u) == uint(splits - 1);
    barrier();
    if (!merges)
        return;
    memoryBarrierBuffer();

    // the last of the (head, row)'s workgroups: every split's record is written
    if (lane != 0)
        return;
    const int first = heads * p.src + counter * splits * record;
    float top = -FLT_MAX;
    bool nan_seen = false;
    [[unroll]] for (int s = 0; s < splits; s++)
    {
        top = max(top, uintBitsToFloat(work_data[first + s * record]));
        nan_seen = nan_seen || work_data[first + s * record + 2] != 0u;
    }
    float sum = 0.f;
    vec4 merged = vec4(0.f);
    [[unroll]] for (int s = 0; s < splits; s++)
    {
        const int at = first + s * record;
        const float f = exp(uintBitsToFloat(work_data[at]) - top);
        sum += uintBitsToFloat(work_data[at + 1]) * f;
        for (int c = 0; c < 4; c++)
            merged[c] += uintBitsToFloat(work_data[at + 3 + e4 * 4 + c]) * f;
    }
    buffer_st4(top_blob_data, out_at, afpvec4(nan_seen ? vec4(nan_value()) : merged / sum));
}
