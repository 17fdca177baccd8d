// variants: DECONV=0,1 TM=4,8 BINDINGS=6,4
// alias: deconvolution DECONV=1
// fp16a: all
#version 450

// Convolution (and, with DECONV=1, transposed convolution) as a tiled matrix product with
// implicit im2col: per group g,
//
//     out[g*outc_g + m][n] = act(bias + sum_k W[g][m][k] * col(k, n))
//
//   m  output channel within the group          (M = outc_g)
//   n  output pixel, n = oy * outw + ox          (N = outw * outh)
//   k  kernel tap and input channel, k = (ky * kernel_w + kx) * inc_g + ic   (K = maxk * inc_g)
//
// col(k, n) is never stored: the workgroup gathers its BK x BN slice straight from the
// input into shared memory. Convolution reads input pixel
//     (iy, ix) = (oy * stride_h + ky * dilation_h - pad_top, ox * stride_w + kx * dilation_w - pad_left)
// and pad_value outside the input (a negative pad, ncnn's SAME quirk, simply crops).
// Transposed convolution gathers the inverse way: output pixel (oy + pad_top, ox + pad_left)
// of the full, uncut output receives input pixel ((oy + pad_top - ky * dilation_h) / stride_h, ...)
// when that division is exact and in range, so pad_top / pad_left are the rows and columns
// cut away, and the output_pad strip gets no taps (bias only).
//
// Weights are laid out on the host as [group][outc_g][ky][kx][inc_g] (k contiguous).
// Tensors are addressed by scalar, whatever their elempack (a spec constant): channel c at
// position i is (c / ep) * cstep * ep + i * ep + c % ep, so pack1 and pack4 inputs and outputs
// (and groups that straddle a pack of 4) all work, and the driver folds the arithmetic.
//
// Split-K (k_slices > 1, for products with too few tiles to fill a GPU): workgroup z =
// group * k_slices + slice sums only its slice of K and writes the raw partial sums to an
// fp32 workspace; convolution_reduce.comp then adds the slices and applies the epilogue.
//
// BINDINGS=4 is the variant for devices with 4 storage buffers per shader stage (the Android
// baselines): bottom, top, weight and bias only, so no split-K (k_slices must be 1) and no
// residual (residual_term must be 0).
//
// Tile: a workgroup of lx x ly invocations computes TM*ly output channels x 4*lx pixels;
// invocation (tx, ty) owns channels ty*TM..ty*TM+TM-1 (whole pack4 items) and pixels tx + lx*j.
//
// Precision: with fp16 arithmetic the tiles (shared memory) and the multiply-adds are fp16,
// but each BK chunk's 16 products are summed in fp16 and the chunks in fp32, so a long K
// (4608 for a 3x3 layer of 512 channels) adds no more error than a short one; the epilogue
// (bias, residual, activation) is fp32 either way.

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
layout (constant_id = 13) const int in_elempack = 1;
layout (constant_id = 14) const int outw = 1;
layout (constant_id = 15) const int outh = 1;
layout (constant_id = 16) const int out_cstep = 1;
layout (constant_id = 17) const int out_elempack = 1;
layout (constant_id = 18) const int inc_g = 1;          // input / output channels per group
layout (constant_id = 19) const int outc_g = 1;
layout (constant_id = 20) const int pad_top = 0;
layout (constant_id = 21) const int pad_left = 0;
layout (constant_id = 22) const float pad_value = 0;
layout (constant_id = 23) const int k_slices = 1;       // split-K: partial sums to the workspace
layout (constant_id = 24) const int residual_term = 0;  // add a same-shape blob before the activation

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfp weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfp bias_data[]; };
#if BINDINGS > 4
// split-K partial sums, fp32 whatever the storage: [slice][group * outc_g][N]
layout (binding = 4) writeonly buffer workspace_blob { float workspace_data[]; };
layout (binding = 5) readonly buffer residual_blob { sfp residual_data[]; };
#endif

#include "activation.comp"

#define BK 16
#define PF 8   // most values of each tile one invocation prefetches into registers
// Rows (output channels) per invocation: TM = 4 or 8, in groups of 4 (a pack4 item each).
#ifndef TM
#define TM 4
#endif
// tile capacity: TM*ly <= 64 channels, 4*lx <= 128 pixels (the host keeps lx*ly <= 256)
shared afp sA[BK * 64];
shared afp sB[BK * 128];

const int M = outc_g;
const int N = outw * outh;
const int K = kernel_w * kernel_h * inc_g;
// each of the k_slices workgroups along z (per group) sums a run of whole BK chunks
const int K_SLICE = (K + k_slices * BK - 1) / (k_slices * BK) * BK;

// one element of the implicit im2col matrix: input channel c_base + ic under tap (ky, kx)
// for the output pixel whose top-left input corner is (y0, x0)
afp gather(int k, int y0, int x0, int c_base)
{
    const int tap = k / inc_g;
    const int ic = k % inc_g;
    const int ky = tap / kernel_w;
    const int kx = tap % kernel_w;
#if DECONV
    const int sy = y0 - ky * dilation_h;
    const int sx = x0 - kx * dilation_w;
    if (sy < 0 || sx < 0 || sy % stride_h != 0 || sx % stride_w != 0)
        return afp(0.f);
    const int iy = sy / stride_h;
    const int ix = sx / stride_w;
    if (iy >= h || ix >= w)
        return afp(0.f);
#else
    const int iy = y0 + ky * dilation_h;
    const int ix = x0 + kx * dilation_w;
    if (iy < 0 || ix < 0 || iy >= h || ix >= w)
        return afp(pad_value);
#endif
    const int c = c_base + ic;
    const int i = (c / in_elempack) * in_cstep * in_elempack + (iy * w + ix) * in_elempack + c % in_elempack;
    return buffer_ld1(bottom_blob_data, i);
}

// the input corner of output pixel n (convolution), or its position in the uncut output (deconv)
ivec2 corner(int n)
{
    const int oy = n / outw;
    const int ox = n % outw;
#if DECONV
    return ivec2(oy + pad_top, ox + pad_left);
#else
    return ivec2(oy * stride_h - pad_top, ox * stride_w - pad_left);
#endif
}

// the global loads of one K chunk into registers (the prefetch path: each invocation
// always loads the same pixel my_nn and A values tid + i * nthreads of the tile)
afp ra[PF];     // this invocation's prefetched values of the next chunk
afp rb[PF];
vec4 sum[TM];   // sum[r/4 * 4 + j]: rows ty*TM + (r/4)*4 .. +3, column tx + lx*j

void load_chunk(int k0, int k_end, int m0, int w_base, int tid, int nthreads,
                int BM, int BN, int my_nn, ivec2 my_corner, bool my_n_ok, int c_base)
{
    for (int i = 0; i < BM * BK / nthreads; i++)
    {
        const int e = tid + i * nthreads;
        const int m = m0 + e / BK;
        const int k = k0 + e % BK;
        ra[i] = (m < M && k < k_end) ? buffer_ld1(weight_data, w_base + m * K + k) : afp(0.f);
    }
    for (int i = 0; i < BK * BN / nthreads; i++)
    {
        const int k = k0 + tid / BN + i * (nthreads / BN);
        rb[i] = (my_n_ok && k < k_end) ? gather(k, my_corner.x, my_corner.y, c_base) : afp(0.f);
    }
}

// the multiply-adds of one K chunk out of shared memory (in afp, added to the fp32 sums once)
void multiply_chunk(int tx, int ty, int lx, int BM, int BN)
{
#if NCNN_fp16_arithmetic
    afpvec4 part[TM];
    for (int i = 0; i < TM; i++)
        part[i] = afpvec4(0.f);
#define ACC part
#else
#define ACC sum
#endif
    for (int kk = 0; kk < BK; kk++)
    {
        const int bi = kk * BN + tx;
        const afp b0 = sB[bi];
        const afp b1 = sB[bi + lx];
        const afp b2 = sB[bi + lx * 2];
        const afp b3 = sB[bi + lx * 3];
        for (int r = 0; r < TM; r += 4)
        {
            const int ai = kk * BM + ty * TM + r;
            const afpvec4 a = afpvec4(sA[ai], sA[ai + 1], sA[ai + 2], sA[ai + 3]);
            ACC[r] += a * b0;
            ACC[r + 1] += a * b1;
            ACC[r + 2] += a * b2;
            ACC[r + 3] += a * b3;
        }
    }
#if NCNN_fp16_arithmetic
    for (int i = 0; i < TM; i++)
        sum[i] += vec4(part[i]);
#endif
#undef ACC
}

void main()
{
    const int lx = int(gl_WorkGroupSize.x);
    const int ly = int(gl_WorkGroupSize.y);
    const int tx = int(gl_LocalInvocationID.x);
    const int ty = int(gl_LocalInvocationID.y);
    const int tid = ty * lx + tx;
    const int nthreads = lx * ly;
    const int BM = ly * TM;
    const int BN = lx * 4;
    const int m0 = int(gl_WorkGroupID.y) * BM;
    const int n0 = int(gl_WorkGroupID.x) * BN;
    const int g = int(gl_WorkGroupID.z) / k_slices;
    const int slice = int(gl_WorkGroupID.z) % k_slices;
    const int k_begin = slice * K_SLICE;
    const int k_end = min(K, k_begin + K_SLICE);
    const int w_base = g * M * K;
    const int c_base = g * inc_g;

    // When the workgroup covers whole rows of the im2col slice (nthreads a multiple of BN, a
    // specialisation-time fact), each invocation always loads the same pixel: its corner
    // is computed once, not per element.
    const bool fixed_pixel = nthreads % BN == 0;
    const int my_nn = tid % BN;
    const ivec2 my_corner = corner(n0 + my_nn);
    const bool my_n_ok = n0 + my_nn < N;

    for (int i = 0; i < TM; i++)
        sum[i] = vec4(0.f);

    // Double buffering through registers: while the multiply-adds of one K chunk run out of
    // shared memory, the global loads of the next chunk are already in flight. Used when each
    // invocation loads a whole number of values of both tiles, at most PF of each.
    // (plain locals, not const: glslang mis-emits this chain as specialization-constant ops;
    // the driver folds it all the same)
    int A_PER = BM * BK / nthreads;
    int B_PER = BK * BN / nthreads;
    bool prefetch = fixed_pixel;
    prefetch = prefetch && (BM * BK) % nthreads == 0 && (BK * BN) % nthreads == 0;
    prefetch = prefetch && A_PER <= PF && B_PER <= PF;
    if (prefetch)
    {
        load_chunk(k_begin, k_end, m0, w_base, tid, nthreads, BM, BN, my_nn, my_corner, my_n_ok, c_base);
        for (int k0 = k_begin; k0 < k_end; k0 += BK)
        {
            for (int i = 0; i < A_PER; i++)
            {
                const int e = tid + i * nthreads;
                sA[(e % BK) * BM + e / BK] = ra[i];
            }
            for (int i = 0; i < B_PER; i++)
                sB[(tid / BN + i * (nthreads / BN)) * BN + my_nn] = rb[i];
            barrier();
            if (k0 + BK < k_end)
                load_chunk(k0 + BK, k_end, m0, w_base, tid, nthreads, BM, BN, my_nn, my_corner, my_n_ok, c_base);
            multiply_chunk(tx, ty, lx, BM, BN);
            barrier();
        }
    }
    else
    {
        for (int k0 = k_begin; k0 < k_end; k0 += BK)
        {
            // weights: consecutive invocations read consecutive k of one row
            for (int e = tid; e < BM * BK; e += nthreads)
            {
                const int kk = e % BK;
                const int mm = e / BK;
                const int m = m0 + mm;
                const int k = k0 + kk;
                afp v = afp(0.f);
                if (m < M && k < k_end)
                    v = buffer_ld1(weight_data, w_base + m * K + k);
                sA[kk * BM + mm] = v;
            }
            // im2col slice: consecutive invocations read consecutive output pixels
            for (int e = tid; e < BK * BN; e += nthreads)
            {
                const int nn = e % BN;
                const int kk = e / BN;
                const int n = n0 + nn;
                const int k = k0 + kk;
                afp v = afp(0.f);
                if (n < N && k < k_end)
                {
                    const ivec2 c = corner(n);
                    v = gather(k, c.x, c.y, c_base);
                }
                sB[kk * BN + nn] = v;
            }
            barrier();
            multiply_chunk(tx, ty, lx, BM, BN);
            barrier();
        }
    }

    for (int r = 0; r < TM; r += 4)
    {
        for (int i = 0; i < 4; i++)
        {
            const int m = m0 + ty * TM + r + i;
            if (m >= M)
                continue;
            const int oc = g * M + m;
#if BINDINGS > 4
            if (k_slices > 1)
            {
                // partial sums: convolution_reduce.comp adds the slices, bias and activation
                const int ws_base = (slice * int(gl_NumWorkGroups.z / k_slices) * M + oc) * N;
                for (int j = 0; j < 4; j++)
                {
                    const int n = n0 + tx + lx * j;
                    if (n < N)
                        workspace_data[ws_base + n] = sum[r + j][i];
                }
                continue;
            }
#endif
            const float b = bias_term == 1 ? float(buffer_ld1(bias_data, oc)) : 0.f;
            const int o_base = (oc / out_elempack) * out_cstep * out_elempack + oc % out_elempack;
            for (int j = 0; j < 4; j++)
            {
                const int n = n0 + tx + lx * j;
                if (n < N)
                {
                    const int o = o_base + n * out_elempack;
                    float v = sum[r + j][i] + b;
#if BINDINGS > 4
                    if (residual_term == 1)
                        v += float(buffer_ld1(residual_data, o));
#endif
                    buffer_st1(top_blob_data, o, activation_f32(v, activation_type, activation_param_0, activation_param_1));
                }
            }
        }
    }
}
