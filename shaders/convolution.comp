// variants: DECONV=0,1
// alias: deconvolution DECONV=1
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
// Tile: a workgroup of lx x ly invocations computes 4*ly output channels x 4*lx pixels;
// invocation (tx, ty) owns channels ty*4..ty*4+3 (one pack4 item) and pixels tx + lx*j.

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

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfp weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfp bias_data[]; };

#include "activation.comp"

#define BK 16
// tile capacity: 4*ly <= 64 channels, 4*lx <= 128 pixels (the host keeps lx*ly <= 256)
shared afp sA[BK * 64];
shared afp sB[BK * 128];

const int M = outc_g;
const int N = outw * outh;
const int K = kernel_w * kernel_h * inc_g;

// one element of the implicit im2col matrix: input channel c_base + ic under tap (ky, kx)
afp gather(int k, int oy, int ox, int c_base)
{
    const int tap = k / inc_g;
    const int ic = k % inc_g;
    const int ky = tap / kernel_w;
    const int kx = tap % kernel_w;
#if DECONV
    const int sy = oy + pad_top - ky * dilation_h;
    const int sx = ox + pad_left - kx * dilation_w;
    if (sy < 0 || sx < 0 || sy % stride_h != 0 || sx % stride_w != 0)
        return afp(0.f);
    const int iy = sy / stride_h;
    const int ix = sx / stride_w;
    if (iy >= h || ix >= w)
        return afp(0.f);
#else
    const int iy = oy * stride_h + ky * dilation_h - pad_top;
    const int ix = ox * stride_w + kx * dilation_w - pad_left;
    if (iy < 0 || ix < 0 || iy >= h || ix >= w)
        return afp(pad_value);
#endif
    const int c = c_base + ic;
    const int i = (c / in_elempack) * in_cstep * in_elempack + (iy * w + ix) * in_elempack + c % in_elempack;
    return buffer_ld1(bottom_blob_data, i);
}

void main()
{
    const int lx = int(gl_WorkGroupSize.x);
    const int ly = int(gl_WorkGroupSize.y);
    const int tx = int(gl_LocalInvocationID.x);
    const int ty = int(gl_LocalInvocationID.y);
    const int tid = ty * lx + tx;
    const int nthreads = lx * ly;
    const int BM = ly * 4;
    const int BN = lx * 4;
    const int m0 = int(gl_WorkGroupID.y) * BM;
    const int n0 = int(gl_WorkGroupID.x) * BN;
    const int g = int(gl_WorkGroupID.z);
    const int w_base = g * M * K;

    afpvec4 sum[4];
    for (int j = 0; j < 4; j++)
        sum[j] = afpvec4(0.f);

    for (int k0 = 0; k0 < K; k0 += BK)
    {
        // weights: consecutive invocations read consecutive k of one row
        for (int e = tid; e < BM * BK; e += nthreads)
        {
            const int kk = e % BK;
            const int mm = e / BK;
            const int m = m0 + mm;
            const int k = k0 + kk;
            afp v = afp(0.f);
            if (m < M && k < K)
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
            if (n < N && k < K)
                v = gather(k, n / outw, n % outw, g * inc_g);
            sB[kk * BN + nn] = v;
        }
        barrier();

        for (int kk = 0; kk < BK; kk++)
        {
            const int ai = kk * BM + ty * 4;
            const afpvec4 a = afpvec4(sA[ai], sA[ai + 1], sA[ai + 2], sA[ai + 3]);
            const int bi = kk * BN + tx;
            sum[0] += a * sB[bi];
            sum[1] += a * sB[bi + lx];
            sum[2] += a * sB[bi + lx * 2];
            sum[3] += a * sB[bi + lx * 3];
        }
        barrier();
    }

    for (int i = 0; i < 4; i++)
    {
        const int m = m0 + ty * 4 + i;
        if (m >= M)
            continue;
        const int oc = g * M + m;
        const afp b = bias_term == 1 ? buffer_ld1(bias_data, oc) : afp(0.f);
        const int o_base = (oc / out_elempack) * out_cstep * out_elempack + oc % out_elempack;
        for (int j = 0; j < 4; j++)
        {
            const int n = n0 + tx + lx * j;
            if (n < N)
            {
                afp v = activation_afp(sum[j][i] + b, activation_type, activation_param_0, activation_param_1);
                buffer_st1(top_blob_data, o_base + n * out_elempack, v);
            }
        }
    }
}
