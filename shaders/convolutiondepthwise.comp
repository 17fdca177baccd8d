// variants: PACK4=0,1 DECONV=0,1 GROUPED=0,1
// alias: deconvolutiondepthwise DECONV=1
// fp16a: all
#version 450

// Depthwise convolution (group == channels == num_output): every channel is filtered by
// its own kernel, so there is no reduction across channels and no matrix product; one
// invocation computes one output pixel of one channel item (4 channels at once with
// PACK4, as vec4 arithmetic).
//
// DECONV=1 is the transposed (depthwise deconvolution) form, written as a gather: output
// pixel (oy + pad_top, ox + pad_left) of the full output takes input pixel
// ((oy + pad_top - ky * dilation_h) / stride_h, ...) where that division is exact and in
// range; pad_top / pad_left are then the rows and columns cut away.
//
// Weights are laid out on the host as [ky][kx][channel] (channel contiguous), so a pack4
// item reads its 4 taps as one vec4 and pack1 neighbours read neighbouring scalars.
//
// GROUPED=1 is the same direct loop for groups of a few channels (inc_g inputs and outc_g
// outputs per group, e.g. a channel multiplier, or 2 -> 1 channel upsampling), where a matrix
// product would waste most of its tile: one invocation per output scalar sums inc_g channels
// x taps. Weights [oc][ic][tap]; tensors addressed by scalar in either elempack.
//
// Precision: the products of one kernel row are summed in afp (fp16 with fp16 arithmetic),
// the rows in fp32; bias and activation are fp32.

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
layout (constant_id = 10) const int w = 1;
layout (constant_id = 11) const int h = 1;
layout (constant_id = 12) const int in_cstep = 1;
layout (constant_id = 13) const int outw = 1;
layout (constant_id = 14) const int outh = 1;
layout (constant_id = 15) const int out_cstep = 1;
layout (constant_id = 16) const int channels = 1;       // channel items (channels / 4 with PACK4)
layout (constant_id = 17) const int pad_top = 0;
layout (constant_id = 18) const int pad_left = 0;
layout (constant_id = 19) const float pad_value = 0;
layout (constant_id = 20) const int inc_g = 1;          // GROUPED: channels per group
layout (constant_id = 21) const int outc_g = 1;
layout (constant_id = 22) const int in_elempack = 1;
layout (constant_id = 23) const int out_elempack = 1;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

#if PACK4 && !GROUPED
#define sfpT sfpvec4
#define afpT afpvec4
#define buffer_ldT buffer_ld4
#define buffer_stT buffer_st4
#define activation_T activation_vec4
#define fpT vec4
#else
#define sfpT sfp
#define afpT afp
#define buffer_ldT buffer_ld1
#define buffer_stT buffer_st1
#define activation_T activation_f32
#define fpT float
#endif

layout (binding = 0) readonly buffer bottom_blob { sfpT bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpT top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfpT weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfpT bias_data[]; };

#include "activation.comp"

#if GROUPED
// input scalar of channel c at position pos, whatever the elempack
int in_index(int c, int pos)
{
    return (c / in_elempack) * in_cstep * in_elempack + pos * in_elempack + c % in_elempack;
}

void main()
{
    const int ox = int(gl_GlobalInvocationID.x);
    const int oy = int(gl_GlobalInvocationID.y);
    const int oc = int(gl_GlobalInvocationID.z);
    if (ox >= outw || oy >= outh || oc >= channels)
        return;

    const int c_base = (oc / outc_g) * inc_g;
    const int maxk = kernel_w * kernel_h;
    float sum = 0.f;

    for (int ky = 0; ky < kernel_h; ky++)
    {
        afp row = afp(0.f);
#if DECONV
        const int sy = oy + pad_top - ky * dilation_h;
        if (sy < 0 || sy % stride_h != 0)
            continue;
        const int iy = sy / stride_h;
        if (iy >= h)
            continue;
        const bool row_in = true;
#else
        const int iy = oy * stride_h + ky * dilation_h - pad_top;
        const bool row_in = iy >= 0 && iy < h;
#endif
        for (int kx = 0; kx < kernel_w; kx++)
        {
#if DECONV
            const int sx = ox + pad_left - kx * dilation_w;
            if (sx < 0 || sx % stride_w != 0)
                continue;
            const int ix = sx / stride_w;
            if (ix >= w)
                continue;
            const bool inside = true;
#else
            const int ix = ox * stride_w + kx * dilation_w - pad_left;
            const bool inside = row_in && ix >= 0 && ix < w;
#endif
            const int tap = ky * kernel_w + kx;
            for (int ic = 0; ic < inc_g; ic++)
            {
                const afp k = buffer_ld1(weight_data, (oc * inc_g + ic) * maxk + tap);
                const afp v = inside ? buffer_ld1(bottom_blob_data, in_index(c_base + ic, iy * w + ix)) : afp(pad_value);
                row += v * k;
            }
        }
        sum += float(row);
    }

    if (bias_term == 1)
        sum += float(buffer_ld1(bias_data, oc));
    sum = activation_f32(sum, activation_type, activation_param_0, activation_param_1);
    buffer_st1(top_blob_data, (oc / out_elempack) * out_cstep * out_elempack + (oy * outw + ox) * out_elempack
               + oc % out_elempack, sum);
}

#else

void main()
{
    const int ox = int(gl_GlobalInvocationID.x);
    const int oy = int(gl_GlobalInvocationID.y);
    const int c = int(gl_GlobalInvocationID.z);
    if (ox >= outw || oy >= outh || c >= channels)
        return;

    fpT sum = fpT(0.f);
    const int in_base = c * in_cstep;

    for (int ky = 0; ky < kernel_h; ky++)
    {
        afpT row = afpT(0.f);
#if DECONV
        const int sy = oy + pad_top - ky * dilation_h;
        if (sy < 0 || sy % stride_h != 0)
            continue;
        const int iy = sy / stride_h;
        if (iy >= h)
            continue;
#else
        const int iy = oy * stride_h + ky * dilation_h - pad_top;
        const bool row_in = iy >= 0 && iy < h;
#endif
        for (int kx = 0; kx < kernel_w; kx++)
        {
            const afpT k = buffer_ldT(weight_data, (ky * kernel_w + kx) * channels + c);
#if DECONV
            const int sx = ox + pad_left - kx * dilation_w;
            if (sx < 0 || sx % stride_w != 0)
                continue;
            const int ix = sx / stride_w;
            if (ix >= w)
                continue;
            row += buffer_ldT(bottom_blob_data, in_base + iy * w + ix) * k;
#else
            const int ix = ox * stride_w + kx * dilation_w - pad_left;
            afpT v = afpT(pad_value);
            if (row_in && ix >= 0 && ix < w)
                v = buffer_ldT(bottom_blob_data, in_base + iy * w + ix);
            row += v * k;
#endif
        }
        sum += fpT(row);
    }

    if (bias_term == 1)
        sum += fpT(buffer_ldT(bias_data, c));
    sum = activation_T(sum, activation_type, activation_param_0, activation_param_1);
    buffer_stT(top_blob_data, c * out_cstep + oy * outw + ox, sum);
}

#endif
