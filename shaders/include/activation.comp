// ncnn's fused activation (activation_type 0-6), as Convolution, InnerProduct, Gemm and
// friends apply it to their output before storing it. Include it and call
//
//     v = activation_afp(v, activation_type, activation_param_0, activation_param_1);
//     v4 = activation_afpvec4(v4, activation_type, activation_param_0, activation_param_1);
//
// with the three values usually coming from specialization constants, so that the
// driver folds the switch away.
//
//   0 none   1 ReLU   2 LeakyReLU(p0 = slope)   3 Clip(p0 = min, p1 = max)
//   4 Sigmoid   5 Mish   6 HardSwish(p0 = alpha, p1 = beta): x * clamp(alpha x + beta, 0, 1)
//
// The math is in afp (fp32 here). Every formula is written to stay finite where numpy's is:
// softplus and tanh are evaluated in their overflow-free forms, clip is min(max()) (GLSL's
// clamp is undefined when min > max; ncnn's two compares let max win).
// NaN and infinity follow the numpy reference (docs/semantics.md): every activation keeps a
// NaN (GLSL's max would drop it), a LeakyReLU of slope 0 is ReLU (-inf gives 0, not
// -inf * 0), and a zero HardSwish alpha still turns +-inf into NaN as numpy's inf * 0 does.

#include "nonfinite.comp"

afp activation_afp(afp v, const int activation_type, const float p0, const float p1)
{
    if (activation_type == 0 || isnan(v))
        return v;
    if (activation_type == 1)
    {
        v = max(v, afp(0.f));
    }
    else if (activation_type == 2)
    {
        v = v < afp(0.f) ? (p0 == 0.f ? afp(0.f) : v * afp(p0)) : v;
    }
    else if (activation_type == 3)
    {
        v = min(max(v, afp(p0)), afp(p1));
    }
    else if (activation_type == 4)
    {
        v = afp(1.f) / (afp(1.f) + exp(-v));
    }
    else if (activation_type == 5)
    {
        // mish(x) = x * tanh(softplus(x)); softplus >= 0, so tanh = (1 - e) / (1 + e), e = exp(-2 sp)
        afp sp = max(v, afp(0.f)) + log(afp(1.f) + exp(-abs(v)));
        afp e = exp(afp(-2.f) * sp);
        v = v * (afp(1.f) - e) / (afp(1.f) + e);
    }
    else if (activation_type == 6)
    {
        v = v * clip_nan(mul_spec(v, p0) + afp(p1), afp(0.f), afp(1.f));
    }
    return v;
}

afpvec4 activation_afpvec4(afpvec4 v, const int activation_type, const float p0, const float p1)
{
    if (activation_type == 0)
        return v;
    afpvec4 r;
    if (activation_type == 1)
    {
        r = max(v, afpvec4(0.f));
    }
    else if (activation_type == 2)
    {
        r = mix(v, p0 == 0.f ? afpvec4(0.f) : v * afp(p0), lessThan(v, afpvec4(0.f)));
    }
    else if (activation_type == 3)
    {
        r = min(max(v, afpvec4(p0)), afpvec4(p1));
    }
    else if (activation_type == 4)
    {
        r = afpvec4(1.f) / (afpvec4(1.f) + exp(-v));
    }
    else if (activation_type == 5)
    {
        afpvec4 sp = max(v, afpvec4(0.f)) + log(afpvec4(1.f) + exp(-abs(v)));
        afpvec4 e = exp(afpvec4(-2.f) * sp);
        r = v * (afpvec4(1.f) - e) / (afpvec4(1.f) + e);
    }
    else
    {
        r = v * clip_nan(mul_spec(v, p0) + afp(p1), afpvec4(0.f), afpvec4(1.f));
    }
    return mix(r, v, isnan(v));
}
