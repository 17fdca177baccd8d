// ncnn's fused activation (activation_type 0-6, and 7 for a folded Swish layer), as
// Convolution, InnerProduct, Gemm and
// friends apply it to their output before storing it. Include it and call
//
//     v = activation_afp(v, activation_type, activation_param_0, activation_param_1);
//     v4 = activation_afpvec4(v4, activation_type, activation_param_0, activation_param_1);
//
// (or activation_f32 / activation_vec4 on fp32 values, e.g. a sum kept in fp32) with the
// three values usually coming from specialization constants, so that the driver folds the
// switch away.
//
//   0 none   1 ReLU   2 LeakyReLU(p0 = slope)   3 Clip(p0 = min, p1 = max)
//   4 Sigmoid   5 Mish   6 HardSwish(p0 = alpha, p1 = beta): x * clamp(alpha x + beta, 0, 1)
//   7 Swish: x / (1 + exp(-x)), exp's argument capped where ncnn's exp_ps saturates, as the
//     Swish layer's own shader computes it (ncnn has no such type: the GPU planner folds a
//     Swish layer into the dispatch before it with this one)
//
// The math is fp32, and in afp with fp16 arithmetic: there ReLU, LeakyReLU and Clip compute
// in fp16 (one rounding, the slope kept fp32: the fp16 result is fp32's rounded) and
// Sigmoid, Mish and HardSwish go through fp32 (a chain of fp16 roundings, or Mish's
// log(1 + e) losing small values; either way one call per output).
// Every formula is written to stay finite where numpy's is: softplus and tanh are evaluated
// in their overflow-free forms, clip is min(max()) (GLSL's clamp is undefined when
// min > max; ncnn's two compares let max win).
// NaN and infinity follow the numpy reference (docs/semantics.md): every activation keeps a
// NaN (GLSL's max would drop it), a LeakyReLU of slope 0 is ReLU (-inf gives 0, not
// -inf * 0), and a zero HardSwish alpha still turns +-inf into NaN as numpy's inf * 0 does.

#include "nonfinite.comp"
#include "divide.comp"

float swish_f32(float v)
{
    return divide(v, 1.f + exp(min(-v, 88.3762626647949)));
}

float activation_f32(float v, const int activation_type, const float p0, const float p1)
{
    if (activation_type == 0 || isnan(v))
        return v;
    if (activation_type == 1)
    {
        v = max(v, 0.f);
    }
    else if (activation_type == 2)
    {
        v = v < 0.f ? (p0 == 0.f ? 0.f : v * p0) : v;
    }
    else if (activation_type == 3)
    {
        v = min(max(v, p0), p1);
    }
    else if (activation_type == 4)
    {
        v = 1.f / (1.f + exp(-v));
    }
    else if (activation_type == 5)
    {
        // mish(x) = x * tanh(softplus(x)); softplus >= 0, so tanh = (1 - e) / (1 + e), e = exp(-2 sp)
        float sp = max(v, 0.f) + log(1.f + exp(-abs(v)));
        float e = exp(-2.f * sp);
        v = v * (1.f - e) / (1.f + e);
    }
    else if (activation_type == 6)
    {
        v = v * clip_nan(mul_spec(v, p0) + p1, 0.f, 1.f);
    }
    else if (activation_type == 7)
    {
        v = swish_f32(v);
    }
    return v;
}

vec4 activation_vec4(vec4 v, const int activation_type, const float p0, const float p1)
{
    if (activation_type == 0)
        return v;
    vec4 r;
    if (activation_type == 1)
    {
        r = max(v, vec4(0.f));
    }
    else if (activation_type == 2)
    {
        r = mix(v, p0 == 0.f ? vec4(0.f) : v * p0, lessThan(v, vec4(0.f)));
    }
    else if (activation_type == 3)
    {
        r = min(max(v, vec4(p0)), vec4(p1));
    }
    else if (activation_type == 4)
    {
        r = vec4(1.f) / (vec4(1.f) + exp(-v));
    }
    else if (activation_type == 5)
    {
        vec4 sp = max(v, vec4(0.f)) + log(vec4(1.f) + exp(-abs(v)));
        vec4 e = exp(vec4(-2.f) * sp);
        r = v * (vec4(1.f) - e) / (vec4(1.f) + e);
    }
    else if (activation_type == 6)
    {
        r = v * clip_nan(mul_spec(v, p0) + p1, vec4(0.f), vec4(1.f));
    }
    else
    {
        r = vec4(swish_f32(v.x), swish_f32(v.y), swish_f32(v.z), swish_f32(v.w));
    }
    return mix(r, v, isnan(v));
}

#if NCNN_fp16_arithmetic
afp activation_afp(afp v, const int activation_type, const float p0, const float p1)
{
    if (activation_type >= 4)
        return afp(activation_f32(float(v), activation_type, p0, p1));
    if (activation_type == 0 || isnan(v))
        return v;
    if (activation_type == 1)
        return max(v, afp(0.f));
    if (activation_type == 2)
        return v < afp(0.f) ? (p0 == 0.f ? afp(0.f) : afp(float(v) * p0)) : v;
    return min(max(v, afp(p0)), afp(p1));
}

afpvec4 activation_afpvec4(afpvec4 v, const int activation_type, const float p0, const float p1)
{
    if (activation_type >= 4)
        return afpvec4(activation_vec4(vec4(v), activation_type, p0, p1));
    if (activation_type == 0)
        return v;
    afpvec4 r;
    if (activation_type == 1)
        r = max(v, afpvec4(0.f));
    else if (activation_type == 2)
        r = mix(v, p0 == 0.f ? afpvec4(0.f) : afpvec4(vec4(v) * p0), lessThan(v, afpvec4(0.f)));
    else
        r = min(max(v, afpvec4(p0)), afpvec4(p1));
    return mix(r, v, isnan(v));
}
#else
#define activation_afp activation_f32
#define activation_afpvec4 activation_vec4
#endif
