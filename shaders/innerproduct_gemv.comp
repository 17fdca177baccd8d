// variants: BINDINGS=4,7,9 SUBGROUP=0,1
// alias: innerproduct_gemv_merge MERGE=1
// alias: innerproduct_gemv_merge_subgroup MERGE=1 SUBGROUP=1
// vulkan1.0: SUBGROUP=0
#version 450
#extension GL_EXT_control_flow_attributes : require
#if SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

// InnerProduct of one input vector: y[n] = act(dot(W[n], x) + bias[n]), W stored as rows
// of K contiguous scalars. Such a layer reads every weight exactly once (VGG's fc6: 103 M
// of them), so it runs at the speed of memory or not at all: each row is read by lx
// invocations side by side, one vec4 each per step (a whole subgroup reads one contiguous
// run of the row), and the lx partial sums meet: by subgroup shuffles (SUBGROUP=1, the host's
// choice where the device has them: no barrier when a row's invocations are one subgroup or
// fewer, one when they are several) or in a shared-memory tree (log2(lx) + 1 barriers).
// ly rows per workgroup.
// The host sizes lx to the row, so that each invocation makes a few steps, all of whose
// loads can be in flight at once: a long serial walk waits on memory at every step.
// (gemm.comp's matrix-vector mode reads scalars and serves any strides; this one needs
// K % 4 == 0 and a contiguous input, as every flattened blob is.)
//
// prenorm folds an RMSNorm of the input row into the product (a decoder's norm before its
// q, k, v and gate/up products): dot(W[n], x * gamma) / rms(x) is dot(W[n], rmsnorm(x)), and
// each row's invocations find rms(x) themselves, instead of a dispatch of its own and a
// barrier before the product. Together they load every input once in the product's own loop,
// so the squares are summed there and reduced with the dot products: no pass over x before
// the first weight load, which would put a round trip to memory and a reduction in front of
// every load of the weights.
//
// gated multiplies two products of the row: y[n] = act(dot(W[n], x)) * dot(U[n], x_up) (a
// decoder's gate and up projections and the product of the two), in place of two dispatches,
// a barrier and the multiply's dispatch. With prenorm, x_up is x.
//
// rope rotates pairs of outputs by a one-token RotaryEmbed (a decoder's q and k products,
// whose output row, seen as heads of rope_dim, is what the RoPE reads): rows (j, j + dim/2)
// of each head (rope 1) or (2j, 2j + 1) (rope 2) are computed side by side in one workgroup,
// and each takes its partner's sum from shared memory: y[first] = a cos - b sin,
// y[second] = b cos + a sin, with cos/sin[j] of the token (dim/2 values each).
//
// out_scale multiplies the product before the bias: a BinaryOp scaling the product by a
// constant, between it and a residual sum standing in for the bias (a decoder that scales
// each block's output before adding it, as MiniCPM does), takes no dispatch of its own.
//
// MERGE: the input is a decode step's attention, still split: per head and split of its keys,
// the split's softmax maximum, sum, NaN flag and dv column sums (sdpa_decode.comp's
// MERGE_BY_READER; vkncnn/gpu/ops/split_records.py). The workgroup issues its weight loads
// first, merges the splits into the input row in shared memory while they are in flight, then
// multiplies: the attention ends without counting its workgroups and merging them itself.

#ifndef MERGE
#define MERGE 0
#endif
#define MERGE_MAX_K4 512    // the merged input row, vec4s (the host keeps to it)
#define MERGE_MAX_STEPS 16  // weight loads an invocation holds (the host keeps to it)
#define MERGE_MAX_SPLITS 16 // splits per head (the host keeps to it)

layout (constant_id = 0) const int activation_type = 0;
layout (constant_id = 1) const float activation_param_0 = 0;
layout (constant_id = 2) const float activation_param_1 = 0;
layout (constant_id = 3) const int bias_term = 0;
layout (constant_id = 4) const int K4 = 1;          // input length / 4
layout (constant_id = 5) const int rows = 1;        // rows of this weight slice
layout (constant_id = 6) const int row_offset = 0;  // the slice's first output (bias and output index)
layout (constant_id = 7) const int prenorm = 0;     // 1: x / rms(x) is the input, 2: x / rms(x) * gamma
layout (constant_id = 8) const float prenorm_eps = 0;
layout (constant_id = 9) const int gated = 0;       // 1: times dot(U[n], x_up)
layout (constant_id = 10) const int rope = 0;       // 1: pairs (j, j + dim/2), 2: (2j, 2j + 1)
layout (constant_id = 11) const int rope_dim = 2;   // a head's width
layout (constant_id = 12) const float out_scale = 1.f;  // times the product, before the bias
layout (constant_id = 13) const int merge_splits = 1;   // MERGE: splits per head
layout (constant_id = 14) const int merge_dv4 = 1;      // MERGE: a head's width / 4

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

#if MERGE
layout (binding = 0) readonly buffer records_blob { uint records_data[]; };
#else
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
#endif
layout (binding = 1) readonly buffer weight_blob { sfpvec4 weight_data[]; };
layout (binding = 2) readonly buffer bias_blob { sfp bias_data[]; };
layout (binding = 3) writeonly buffer top_blob { sfp top_blob_data[]; };
#if BINDINGS > 4
// prenorm's gamma and the gated product's operands: a variant of their own, so that the plain
// product binds 4 storage buffers (all that the Android baselines guarantee)
layout (binding = 4) readonly buffer gamma_blob { sfpvec4 gamma_data[]; };
layout (binding = 5) readonly buffer up_weight_blob { sfpvec4 up_weight_data[]; };
layout (binding = 6) readonly buffer up_bottom_blob { sfpvec4 up_bottom_data[]; };
#endif
#if BINDINGS > 7
layout (binding = 7) readonly buffer cos_blob { sfp cos_data[]; };
layout (binding = 8) readonly buffer sin_blob { sfp sin_data[]; };
#endif

#include "activation.comp"

shared float partial[256];
shared float partial_up[256];
shared float partial_squares[256];

// The row's lx partial sums (each invocation's v), added up: the total is valid in the row's
// first invocation (tx == 0). Rows are lx consecutive invocations (lx a power of two), and
// subgroups are runs of consecutive invocations, so a butterfly over offsets below
// min(lx, subgroup size) stays within one row.
vec3 row_total(vec3 v, int slot)
{
    const int lx = int(gl_WorkGroupSize.x);
    const int tx = slot % lx;
#if SUBGROUP
    const int width = min(lx, int(gl_SubgroupSize));
    for (int offset = width / 2; offset > 0; offset /= 2)
    {
        v.x += subgroupShuffleXor(v.x, uint(offset));
        if (gated == 1)
            v.y += subgroupShuffleXor(v.y, uint(offset));
        if (prenorm != 0)
            v.z += subgroupShuffleXor(v.z, uint(offset));
    }
    if (lx > width)  // several subgroups a row: their totals meet in shared memory
    {
        const int first = slot / width;  // the row's first subgroup's place, for tx == 0
        if (tx % width == 0)
        {
            partial[first] = v.x;
            partial_up[first] = v.y;
            partial_squares[first] = v.z;
        }
        barrier();
        if (tx == 0)
        {
            for (int i = 1; i < lx / width; i++)
                v += vec3(partial[first + i], partial_up[first + i], partial_squares[first + i]);
        }
        if (rope != 0)
            barrier();  // its epilogue writes partial_up again
    }
    return v;
#else
    partial[slot] = v.x;
    if (gated == 1)
        partial_up[slot] = v.y;
    if (prenorm != 0)
        partial_squares[slot] = v.z;
    barrier();
    for (int s = lx / 2; s > 0; s /= 2)
    {
        if (tx < s)
        {
            partial[slot] += partial[slot + s];
            if (gated == 1)
                partial_up[slot] += partial_up[slot + s];
            if (prenorm != 0)
                partial_squares[slot] += partial_squares[slot + s];
        }
        barrier();
    }
    return vec3(partial[slot], gated == 1 ? partial_up[slot] : 0.f, prenorm != 0 ? partial_squares[slot] : 0.f);
#endif
}

#if MERGE
#include "nonfinite.comp"

shared vec4 merged_x[MERGE_MAX_K4];

// the input row: each head's splits merged, each scaled by exp(its maximum - the head's),
// by the whole workgroup, a (head, four columns) at a time. Every load of an invocation's
// rounds and splits comes first, unconditionally (an index past the row is clamped, its
// store skipped): with constant trip counts they can all be in flight at once, where a
// round at a time, maxima before sums, waited on memory once per round and phase.
void merge_splits_into_row()
{
    const int n = int(gl_WorkGroupSize.x * gl_WorkGroupSize.y);
    const int rounds = (K4 + n - 1) / n;
    const int heads = K4 / merge_dv4;
    const int record = merge_dv4 * 4 + 3;
    [[unroll]] for (int round = 0; round < rounds; round++)
    {
        const int wanted = int(gl_LocalInvocationIndex) + round * n;
        const int at = min(wanted, K4 - 1);
        const int first = heads + (at / merge_dv4) * merge_splits * record;  // after the (unused) counters
        const int column = 3 + (at % merge_dv4) * 4;
        float maxes[MERGE_MAX_SPLITS];
        float sums[MERGE_MAX_SPLITS];
        vec4 columns[MERGE_MAX_SPLITS];
        bool nan_seen = false;
        [[unroll]] for (int s = 0; s < merge_splits; s++)
        {
            const int r = first + s * record;
            maxes[s] = uintBitsToFloat(records_data[r]);
            sums[s] = uintBitsToFloat(records_data[r + 1]);
            nan_seen = nan_seen || records_data[r + 2] != 0u;
            columns[s] = uintBitsToFloat(uvec4(records_data[r + column], records_data[r + column + 1],
                                               records_data[r + column + 2], records_data[r + column + 3]));
        }
        float top = -3.402823466e+38;
        [[unroll]] for (int s = 0; s < merge_splits; s++)
            top = max(top, maxes[s]);
        float sum = 0.f;
        vec4 merged = vec4(0.f);
        [[unroll]] for (int s = 0; s < merge_splits; s++)
        {
            const float f = exp(maxes[s] - top);
            sum += sums[s] * f;
            merged += columns[s] * f;
        }
        if (wanted < K4)
            merged_x[at] = nan_seen ? vec4(nan_value()) : merged / sum;
    }
    barrier();
}
#endif

void main()
{
    const int lx = int(gl_WorkGroupSize.x);
    const int tx = int(gl_LocalInvocationID.x);
    const int ty = int(gl_LocalInvocationID.y);
    // rows over a 2-D grid of workgroups: more than 65535 of them fit
    const int group = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    int row = group * int(gl_WorkGroupSize.y) + ty;
    int pair_j = 0;  // rope: the pair's index within its head
    if (rope == 1)
    {
        // slots 2q and 2q + 1 hold pair q: rows (j, j + dim/2) of head h
        const int half_dim = rope_dim / 2;
        const int q = group * (int(gl_WorkGroupSize.y) / 2) + ty / 2;
        pair_j = q % half_dim;
        row = (q / half_dim) * rope_dim + pair_j + (ty % 2) * half_dim;
    }
    else if (rope == 2)
    {
        pair_j = (row % rope_dim) / 2;
    }

    const int slot = ty * lx + tx;

    // the epilogue's operands (the bias, or the residual standing in for it, and the RoPE's
    // angle) are loaded with the weights, by the invocation that writes the row: after the
    // reduction they would add a wait on memory to the end of every such product
    float bias_value = 0.f;
    float rope_cos = 1.f;
    float rope_sin = 0.f;
    if (tx == 0 && row < rows)
    {
        if (bias_term == 1)
            bias_value = float(buffer_ld1(bias_data, row_offset + row));
#if BINDINGS > 7
        if (rope != 0)
        {
            rope_cos = float(buffer_ld1(cos_data, pair_j));
            rope_sin = float(buffer_ld1(sin_data, pair_j));
        }
#endif
    }

    vec4 acc = vec4(0.f);
    vec4 acc_up = vec4(0.f);
    float squares = 0.f;  // prenorm: of the inputs this invocation loads
#if MERGE
    const int merge_steps = (K4 + lx - 1) / lx;
    vec4 w[MERGE_MAX_STEPS];
    [[unroll]] for (int step = 0; step < merge_steps; step++)
    {
        const int k4 = tx + step * lx;
        if (row < rows && k4 < K4)
            w[step] = vec4(buffer_ld4(weight_data, row * K4 + k4));
    }
    merge_splits_into_row();
    [[unroll]] for (int step = 0; step < merge_steps; step++)
    {
        const int k4 = tx + step * lx;
        if (row < rows && k4 < K4)
            acc += w[step] * merged_x[k4];
    }
#else
    if (row < rows)
    {
        const int base = row * K4;
        // a constant trip count (K4 and lx are specialization constants): the driver can
        // issue every step's loads before the first add
        const int steps = (K4 + lx - 1) / lx;
        [[unroll]] for (int step = 0; step < steps; step++)
        {
            const int k4 = tx + step * lx;
            if (k4 >= K4)
                continue;  // the last step's tail
            vec4 x = vec4(buffer_ld4(bottom_blob_data, k4));
            if (prenorm != 0)
                squares += dot(x, x);
#if BINDINGS > 4
            if (prenorm == 2)
                x *= vec4(buffer_ld4(gamma_data, k4));
#endif
            acc += vec4(buffer_ld4(weight_data, base + k4)) * x;
#if BINDINGS > 4
            if (gated == 1)
            {
                const vec4 x_up = prenorm != 0 ? x : vec4(buffer_ld4(up_bottom_data, k4));
                acc_up += vec4(buffer_ld4(up_weight_data, base + k4)) * x_up;
            }
#endif
        }
    }
#endif
    // (dot product, gated product, squares) of the row: valid in the row's invocation tx == 0
    const vec3 total = row_total(vec3(acc.x + acc.y + acc.z + acc.w, acc_up.x + acc_up.y + acc_up.z + acc_up.w,
                                      squares), slot);
    // the row's invocations loaded each input once: their squares are all of x's
    const float inv_rms = prenorm != 0 ? 1.f / sqrt(total.z / float(K4 * 4) + prenorm_eps) : 1.f;
#if BINDINGS > 7
    if (rope != 0)
    {
        // each pair's two sums, biased, side by side in partial_up: then both rotate
        const int partner = slot ^ lx;  // slot of the other row of the pair (ty ^ 1)
        const int partner_row = rope == 1 ? row + (ty % 2 == 0 ? 1 : -1) * (rope_dim / 2) : row ^ 1;
        if (tx == 0 && row < rows)
        {
            partial_up[slot] = total.x * inv_rms + bias_value;
        }
        barrier();
        if (tx == 0 && row < rows && partner_row < rows)
        {
            const float a = partial_up[ty % 2 == 0 ? slot : partner];
            const float b = partial_up[ty % 2 == 0 ? partner : slot];
            const float c = rope_cos;
            const float s = rope_sin;
            buffer_st1(top_blob_data, row_offset + row, afp(ty % 2 == 0 ? a * c - b * s : b * c + a * s));
        }
        return;
    }
#endif
    if (tx == 0 && row < rows)
    {
        const int n = row_offset + row;
        afp v = afp(total.x * inv_rms * out_scale);
        if (bias_term == 1)
            v += afp(bias_value);
        v = activation_afp(v, activation_type, activation_param_0, activation_param_1);
        if (gated == 1)
            v *= afp(total.y * inv_rms);
        buffer_st1(top_blob_data, n, v);
    }
}
