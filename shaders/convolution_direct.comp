// variants: PX=1,2,4 BINDINGS=5,4
// fp16a: all
#version 450

// Convolution of a pack4 input into a pack4 output, computed directly: no tiles, no
// shared-memory staging, no barriers in the K loop. It is the kernel for the many small
// layers of mobile and residual nets (a 1x1 convolution of 64 -> 384 channels on a 14x14
// image is 5 M multiply-adds): there a tiled matrix product is bound by latency, each K
// chunk paying a trip to memory and two workgroup barriers, and this kernel, with one
// invocation per (output item, PX pixels) and the caches doing the reuse, has many more
// invocations in flight and only one trip to memory per loop step.
//
// Invocation (tx, o4, tz) of workgroup (wx, o4, g):
//   output channel item o4 (4 channels) of group g, for pixels
//       n_j = (wx * PX + j) * lx + tx,   j < PX       (neighbouring invocations: neighbouring pixels)
//   and every lz-th step of the K loop, starting at tz (in-workgroup split-K, lz = local z):
//   step `it` is tap it / IC4 and input channel item it % IC4, i.e. 16 multiply-adds per
//   pixel: the 4x4 weight block times the input item, as one vec4 x mat4 product.
// With lz > 1 the partial sums meet in shared memory and invocation tz == 0 finishes.
//
// Weights are convolution.comp's layout, [group][outc_g][ky][kx][inc_g] (k contiguous):
// row r of the block is weight item r * K/4 + it, four consecutive scalars of one output
// channel. Needs inc_g and outc_g divisible by 4 (whole items per group).
// residual_term: a blob of the output's shape is added before the activation (a residual
// connection folded in by the planner: conv -> Eltwise sum -> ReLU in one dispatch).
// BINDINGS=4, for devices with 4 storage buffers per stage, leaves the residual out
// (residual_term must be 0).
// With fp16 arithmetic the 4x4 blocks multiply in fp16, summed in fp16 over 4 loop steps (16
// products per value) and then into the fp32 sums; the epilogue is fp32 either way.
//
// Not adopted (docs/perf-notes.md, "Direct convolution kernel: unrolling"): unrolling the K
// loop with its loads issued first (the loop is not bound by one trip to memory after
// another) and [[unroll]] on the loops over the PX pixels (the driver unrolls them already,
// unlike cooperative-matrix arrays: convolution_coopmat.comp).

layout (constant_id = 0) const int kernel_w = 1;
layout (constant_id = 1) const int kernel_h = 1;
layout (constant_id = 2) const int dilation_w = 1;
layout (constant_id = 3) const int dilation_h = 1;
layout (constant_id = 4) const int stride_w = 1;
layout (constant_id = 5) const int stride_h = 1;
layout (constant_id = 6) const int bias_term = 0;
layout (constant_id = 7) const int activation_type = 0;
layout (constant_id = 8) const float activation_param_0 = 0;
layout (constant_id = 9) const float activation_param_1 = 0;
layout (constant_id = 10) const int w = 1;              // input width, height
layout (constant_id = 11) const int h = 1;
layout (constant_id = 12) const int in_cstep = 1;       // positions per input channel item
layout (constant_id = 13) const int outw = 1;
layout (constant_id = 14) const int outh = 1;
layout (constant_id = 15) const int out_cstep = 1;
layout (constant_id = 16) const int inc_g = 4;          // input / output channels per group
layout (constant_id = 17) const int outc_g = 4;
layout (constant_id = 18) const int pad_top = 0;
layout (constant_id = 19) const int pad_left = 0;
layout (constant_id = 20) const float pad_value = 0;
layout (constant_id = 21) const int residual_term = 0;  // add a same-shape blob before the activation

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfpvec4 weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfpvec4 bias_data[]; };
#if BINDINGS > 4
layout (binding = 4) readonly buffer residual_blob { sfpvec4 residual_data[]; };
#endif

#include "activation.comp"

#ifndef PX
#define PX 4
#endif

// the split-K partial sums of a workgroup (at most 256 invocations)
shared vec4 partial[256 * PX];

#if NCNN_fp16_arithmetic
#define afpmat4 f16mat4
#define CHUNK 4     // loop steps summed in fp16 before they join the fp32 sums
#else
#define afpmat4 mat4
#endif

const int IC4 = inc_g / 4;
const int TAPS = kernel_w * kernel_h;
const int STEPS = TAPS * IC4;
const int K4 = STEPS;  // weight items per output channel
const int N = outw * outh;

void main()
{
    const int lx = int(gl_WorkGroupSize.x);
    const int lz = int(gl_WorkGroupSize.z);
    const int tx = int(gl_LocalInvocationID.x);
    const int tz = int(gl_LocalInvocationID.z);
    const int o4 = int(gl_WorkGroupID.y);   // the whole workgroup shares one output item
    const int g = int(gl_WorkGroupID.z);
    const int out_item = g * (outc_g / 4) + o4;
    const int row = out_item * 4;           // first weight row (output channel) of the block
    const int in_item0 = g * IC4;

    ivec2 corner[PX];
    for (int j = 0; j < PX; j++)
    {
        const int n = (int(gl_WorkGroupID.x) * PX + j) * lx + tx;
        corner[j] = ivec2(n / outw * stride_h - pad_top, n % outw * stride_w - pad_left);
    }

    vec4 sum[PX];
    for (int j = 0; j < PX; j++)
        sum[j] = vec4(0.f);
#if NCNN_fp16_arithmetic
    afpvec4 part[PX];
    for (int j = 0; j < PX; j++)
        part[j] = afpvec4(0.f);
    int pending = 0;
#define ACC part
#else
#define ACC sum
#endif

    for (int it = tz; it < STEPS; it += lz)
    {
        const int tap = it / IC4;
        const int ky = tap / kernel_w;
        const int kx = tap % kernel_w;
        const int in_base = (in_item0 + it % IC4) * in_cstep;
        // mat4 columns are the output channels' weight rows: v * W = (dot(v, row_0), ..., dot(v, row_3))
        const afpmat4 wt = afpmat4(buffer_ld4(weight_data, row * K4 + it),
                                   buffer_ld4(weight_data, (row + 1) * K4 + it),
                                   buffer_ld4(weight_data, (row + 2) * K4 + it),
                                   buffer_ld4(weight_data, (row + 3) * K4 + it));
        for (int j = 0; j < PX; j++)
        {
            const int iy = corner[j].x + ky * dilation_h;
            const int ix = corner[j].y + kx * dilation_w;
            afpvec4 v = afpvec4(pad_value);
            if (iy >= 0 && ix >= 0 && iy < h && ix < w)
                v = buffer_ld4(bottom_blob_data, in_base + iy * w + ix);
            ACC[j] += v * wt;
        }
#if NCNN_fp16_arithmetic
        if (++pending == CHUNK)
        {
            for (int j = 0; j < PX; j++)
            {
                sum[j] += vec4(part[j]);
                part[j] = afpvec4(0.f);
            }
            pending = 0;
        }
#endif
    }
#if NCNN_fp16_arithmetic
    for (int j = 0; j < PX; j++)
        sum[j] += vec4(part[j]);
#endif
#undef ACC

    if (lz > 1)
    {
        const int slot = (tz * lx + tx) * PX;
        for (int j = 0; j < PX; j++)
            partial[slot + j] = sum[j];
        barrier();
        if (tz != 0)
            return;
        for (int z = 1; z < lz; z++)
            for (int j = 0; j < PX; j++)
                sum[j] += partial[(z * lx + tx) * PX + j];
    }

    const vec4 bias = bias_term == 1 ? vec4(buffer_ld4(bias_data, out_item)) : vec4(0.f);
    for (int j = 0; j < PX; j++)
    {
        const int n = (int(gl_WorkGroupID.x) * PX + j) * lx + tx;
        if (n < N)
        {
            const int o = out_item * out_cstep + n;
            vec4 r = sum[j] + bias;
#if BINDINGS > 4
            if (residual_term == 1)
                r += vec4(buffer_ld4(residual_data, o));
#endif
            buffer_st4(top_blob_data, o, activation_vec4(r, activation_type, activation_param_0, activation_param_1));
        }
    }
}
