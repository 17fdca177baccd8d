// variants: SUBGROUP=0,1
// vulkan1.0: SUBGROUP=0
#version 450

// The row reducer behind Reduction, Softmax and the normalisation layers.
//
// Every row g of the input (layout in include/reduction_rows.h) is folded into a small
// state (a vec4, fp32 whatever the storage) by one of these operations (spec constant op):
//     0 sum   1 sum |x|   2 sum x^2   3 max   4 min   5 product   6 sum exp(x)
//     7 moments: (count, mean, M2) merged as Chan et al.'s parallel variance
//     8 softmax: (max, sum exp(x - max)) merged online
// and the final state becomes (spec constant fin):
//     0 the raw state, as a partial of a row split in segments (partial_out[g * S + s])
//     1 a Reduction result: post-op (1 log, 2 sqrt with FLT_MIN flush), times coeff, into
//       the sfp output tensor at scalar address g
//     2 (a, b) = (1 / sqrt(var + eps), -mean * a): y = x * a + b normalises
//     3 (a, 0) with a = 1 / sqrt(sum x^2 / K + eps), K passed as coeff (RMSNorm)
//     4 (a, 0) with a = 1 / ||x|| with eps placed per eps_mode      (Normalize)
//     5 the raw state (Softmax reads (max, sum))
//
// Two shapes of work (spec constant per_thread):
//     per_thread = 1: one invocation per row (short rows, many of them);
//     per_thread = 0: one workgroup per row segment, the group's states merged through
//                     subgroup shuffles (SUBGROUP=1) or a shared-memory tree (SUBGROUP=0).
// Long rows with few of them run in two passes: segments write partial states
// (fin 0), then a second dispatch (source 1) merges each row's S partials.
//
// NaN and infinity give what numpy's reductions give: max and min keep a NaN (GLSL's may
// drop it), and a softmax row holding a NaN or +inf (numpy's exp(x - max) is then inf - inf
// at that element) has a NaN sum, so that the whole row comes out NaN.

#if SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

layout (constant_id = 0) const int op = 0;
layout (constant_id = 1) const int fin = 0;
layout (constant_id = 2) const int post = 0;
layout (constant_id = 3) const int eps_mode = 0;
layout (constant_id = 4) const int source = 0;      // 0 tensor elements, 1 partial states
layout (constant_id = 5) const int per_thread = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

// after the local size: functions there see the real gl_WorkGroupSize
#include "reduction_rows.h"
#include "nonfinite.comp"

#define LOCAL_MAX 256

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) readonly buffer partial_in { vec4 partial_in_data[]; };
layout (binding = 2) writeonly buffer state_out { vec4 state_out_data[]; };
layout (binding = 3) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int G;          // rows
    int K;          // elements per row (partials per row when source = 1)
    int S;          // segments per row
    int seglen;     // elements per segment
    int ks0; int ks1; int ks2;      // kept axes: sizes
    int kt0; int kt1; int kt2;      //            address strides
    int rs0; int rs1; int rs2;      // reduced axes: sizes
    int rt0; int rt1; int rt2;      //               address strides
    float eps;
    float coeff;
} p;

const float FLT_MAX = 3.402823466e+38;
const float FLT_MIN = 1.175494351e-38;

vec4 identity()
{
    if (op == 3) return vec4(-FLT_MAX, 0.f, 0.f, 0.f);
    if (op == 4) return vec4(FLT_MAX, 0.f, 0.f, 0.f);
    if (op == 5) return vec4(1.f, 0.f, 0.f, 0.f);
    if (op == 8) return vec4(-FLT_MAX, 0.f, 0.f, 0.f);
    return vec4(0.f);
}

// fold one element into a state
vec4 accumulate(vec4 s, float x)
{
    if (op == 0) s.x += x;
    else if (op == 1) s.x += abs(x);
    else if (op == 2) s.x += x * x;
    else if (op == 3) s.x = max_nan(s.x, x);
    else if (op == 4) s.x = min_nan(s.x, x);
    else if (op == 5) s.x *= x;
    else if (op == 6) s.x += exp(x);
    else if (op == 7)
    {
        // Welford: count, mean, sum of squared deviations
        s.x += 1.f;
        const float d = x - s.y;
        s.y += d / s.x;
        s.z += d * (x - s.y);
    }
    else
    {
        // online softmax: rescale the running sum when a new maximum arrives. A NaN or +inf
        // poisons the sum instead (the maximum stays finite: merges subtract it)
        if (isnan(x) || is_pos_inf(x))
        {
            s.y = nan_value();
        }
        else if (x > s.x)
        {
            s.y = s.y * exp(s.x - x) + 1.f;
            s.x = x;
        }
        else
        {
            s.y += exp(x - s.x);
        }
    }
    return s;
}

// merge two states (associative; identity() is neutral)
vec4 merge(vec4 a, vec4 b)
{
    if (op == 3) return vec4(max_nan(a.x, b.x), 0.f, 0.f, 0.f);
    if (op == 4) return vec4(min_nan(a.x, b.x), 0.f, 0.f, 0.f);
    if (op == 5) return vec4(a.x * b.x, 0.f, 0.f, 0.f);
    if (op == 7)
    {
        const float n = a.x + b.x;
        if (n == 0.f) return a;
        const float d = b.y - a.y;
        const float wb = b.x / n;
        return vec4(n, a.y + d * wb, a.z + b.z + d * d * a.x * wb, 0.f);
    }
    if (op == 8)
    {
        const float m = max(a.x, b.x);
        return vec4(m, a.y * exp(a.x - m) + b.y * exp(b.x - m), 0.f, 0.f);
    }
    return vec4(a.x + b.x, 0.f, 0.f, 0.f);
}

int row_base(int g)
{
    return rows_linear(g, p.ks0, p.ks1, p.ks2, p.kt0, p.kt1, p.kt2);
}

int elem_offset(int k)
{
    if (p.rs0 == 1 && p.rs1 == 1)
        return k * p.rt2;  // one reduced axis: the common case, no division
    return rows_linear(k, p.rs0, p.rs1, p.rs2, p.rt0, p.rt1, p.rt2);
}

vec4 fold_range(vec4 s, int g, int kbeg, int kend, int kstep)
{
    if (source == 1)
    {
        for (int k = kbeg; k < kend; k += kstep)
            s = merge(s, partial_in_data[g * p.K + k]);
        return s;
    }
    const int base = row_base(g);
    for (int k = kbeg; k < kend; k += kstep)
        s = accumulate(s, float(buffer_ld1(bottom_blob_data, base + elem_offset(k))));
    return s;
}

void finish(int g, int seg, vec4 s)
{
    if (fin == 0)
    {
        state_out_data[g * p.S + seg] = s;
    }
    else if (fin == 1)
    {
        float v = s.x;
        if (post == 1) v = log(v);
        if (post == 2) v = v < FLT_MIN ? 0.f : sqrt(v);
        buffer_st1(top_blob_data, g, afp(v * p.coeff));
    }
    else if (fin == 2)
    {
        const float var = s.z / s.x;
        const float a = 1.f / sqrt(var + p.eps);
        state_out_data[g] = vec4(a, -s.y * a, 0.f, 0.f);
    }
    else if (fin == 3)
    {
        state_out_data[g] = vec4(1.f / sqrt(s.x / p.coeff + p.eps), 0.f, 0.f, 0.f);  // coeff = K
    }
    else if (fin == 4)
    {
        float a;
        if (eps_mode == 0) a = 1.f / sqrt(s.x + p.eps);
        else if (eps_mode == 1) a = 1.f / max_nan(sqrt(s.x), p.eps);
        else a = 1.f / sqrt(max_nan(s.x, p.eps));
        state_out_data[g] = vec4(a, 0.f, 0.f, 0.f);
    }
    else
    {
        state_out_data[g] = s;
    }
}

#if SUBGROUP
shared vec4 wg_states[LOCAL_MAX];  // one per subgroup (at most LOCAL_MAX of them)
#else
shared vec4 wg_states[LOCAL_MAX];  // one per invocation
#endif

// merge the states of the whole workgroup; the result is valid in invocation 0
vec4 workgroup_merge(vec4 s)
{
    const uint lid = gl_LocalInvocationID.x;
#if SUBGROUP
    // butterfly inside each subgroup: after log2(size) steps every lane holds the total
    for (uint offset = gl_SubgroupSize / 2; offset > 0; offset /= 2)
        s = merge(s, subgroupShuffleXor(s, offset));
    if (gl_SubgroupInvocationID == 0)
        wg_states[gl_SubgroupID] = s;
    barrier();
    if (lid == 0)
    {
        for (uint i = 1; i < gl_NumSubgroups; i++)
            s = merge(s, wg_states[i]);
    }
    return s;
#else
    wg_states[lid] = s;
    barrier();
    for (uint half_ = gl_WorkGroupSize.x / 2; half_ > 0; half_ /= 2)
    {
        if (lid < half_)
            wg_states[lid] = merge(wg_states[lid], wg_states[lid + half_]);
        barrier();
    }
    return wg_states[0];
#endif
}

void main()
{
    if (per_thread == 1)
    {
        const int g = rows_flat_invocation();
        if (g >= p.G)
            return;
        finish(g, 0, fold_range(identity(), g, 0, p.K, 1));
        return;
    }

    // one workgroup per (segment, row); rows past 65535 continue along z
    const int seg = int(gl_WorkGroupID.x);
    const int g = int(gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y);
    if (g >= p.G)
        return;  // uniform in the workgroup: no barrier is skipped by part of it

    const int lid = int(gl_LocalInvocationID.x);
    const int kbeg = seg * p.seglen;
    const int kend = min(p.K, kbeg + p.seglen);
    vec4 s = fold_range(identity(), g, kbeg + lid, kend, int(gl_WorkGroupSize.x));
    s = workgroup_merge(s);
    if (lid == 0)
        finish(g, seg, s);
}
