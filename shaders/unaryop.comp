// variants: PACK4=0,1
// alias: unaryop_pack4 PACK4=1
// fp16a: all
#version 450

// y = f(x) for every scalar: the activations (ReLU .. SELU), UnaryOp's 28 functions,
// Power / Exp / Log / Threshold and Cast's rounding, one shader for all of them.
// The function is the specialization constant `op` (codes in vkncnn/gpu/ops/elementwise.py),
// its parameters p0..p2; the driver folds the switch away when it builds the pipeline.
//
// An elementwise op does not care how a tensor is packed, so the buffer is read flat:
// PACK4=0 walks n scalars, PACK4=1 walks n vec4 (any tensor whose scalar count divides
// by 4, pack1 or pack4 alike). Out of place: bottom -> top. Math in fp32; with fp16
// arithmetic the functions that round once run in fp16 (IN_FP16 below).
//
// Edge values follow the CPU half (cpu_fallback/activation.py), which follows ncnn's
// vectorised x86 kernels: exp clamps its argument at 88.376, log(x <= 0) is nan, ...

layout (constant_id = 0) const int op = 0;
layout (constant_id = 1) const float p0 = 0;
layout (constant_id = 2) const float p1 = 0;
layout (constant_id = 3) const float p2 = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

#if PACK4
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
#else
layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
#endif

layout (push_constant) uniform parameter
{
    int n;  // scalars (PACK4=0) or vec4 items (PACK4=1)
} p;

// ---- op codes (mirror vkncnn/gpu/ops/elementwise.py) ----
const int OP_RELU = 0;          // p0 slope
const int OP_SIGMOID = 1;
const int OP_SWISH = 2;
const int OP_GELU = 3;          // erf form
const int OP_GELU_FAST = 4;     // tanh approximation
const int OP_HARDSWISH = 5;     // p0 alpha, p1 beta
const int OP_HARDSIGMOID = 6;   // p0 alpha, p1 beta
const int OP_CLIP = 7;          // p0 min, p1 max
const int OP_TANH = 8;
const int OP_ELU = 9;           // p0 alpha
const int OP_MISH = 10;
const int OP_POWER = 11;        // p0 power, p1 scale, p2 shift
const int OP_EXP = 12;          // p0 base (-1: e), p1 scale, p2 shift
const int OP_LOG = 13;          // p0 base (-1: e), p1 scale, p2 shift
const int OP_THRESHOLD = 14;    // p0 threshold
const int OP_SELU = 15;         // p0 alpha, p1 lambda
const int OP_SOFTPLUS = 16;
const int OP_COPY = 17;         // Cast to the same values (int8 -> fp32, type to itself)
const int OP_ROUND_FP16 = 18;   // Cast through fp16
const int OP_ROUND_BF16 = 19;   // Cast through bf16
const int OP_ERF = 20;
const int OP_CELU = 21;         // p0 alpha
const int OP_SHRINK = 22;       // p0 bias, p1 lambd
const int OP_BNLL = 23;
const int OP_UNARY = 32;        // + UnaryOp op_type 0..27

const float FLT_MAX = 3.402823466e+38;
const float FLT_MIN = 1.175494351e-38;
const float EXP_ARG_MAX = 88.3762626647949;   // where ncnn's exp_ps saturates
const float LN2 = 0.69314718055994531;

#include "nonfinite.comp"
#include "divide.comp"

// ncnn's exp_ps / log_ps edges: exp(+inf) = 2.4e38, log(x <= 0) = nan, log argument clamped
float exp_ps(float x) { return exp(min(x, EXP_ARG_MAX)); }
float log_ps(float x) { return x > 0.f ? log(clamp(x, FLT_MIN, FLT_MAX)) : nan_value(); }

// log(1 + x) without losing a tiny x (Goldberg's trick)
float log1p_(float x)
{
    float u = 1.f + x;
    return u == 1.f ? x : log(u) * (x / (u - 1.f));
}

// tan with its own range reduction: the builtin (on NVIDIA sin / cos, each within ~4e-7)
// is off by 4e-4 relative where cos(x) is 1e-3, near the poles. Here x = k * pi/2 + r with
// |r| <= pi/4, r in three exact steps (Cody-Waite: k * 1.5703125 is exact for |k| < 2^15),
// tan(r) is cephes' tanf polynomial, and tan(x) = -1 / tan(r) for odd k. Beyond |x| = 8192
// the builtin, like the edge cases.
float tan_(float x)
{
    if (!(abs(x) <= 8192.f))
        return tan(x);
    const float k = round(x * 0.63661977236758134f);
    const float r = ((x - k * 1.5703125f) - k * 4.837512969970703125e-4f) - k * 7.54978995489188216e-8f;
    const float z = r * r;
    float t = (((((9.38540185543e-3f * z + 3.11992232697e-3f) * z + 2.44301354525e-2f) * z
                + 5.34112807005e-2f) * z + 1.33387994085e-1f) * z + 3.33331568548e-1f) * z * r + r;
    if ((int(k) & 1) != 0)
        t = -1.f / t;
    return t;
}

// Abramowitz & Stegun 7.1.26, |error| < 1.5e-7 (the CPU half uses the same formula)
float erf_(float x)
{
    float z = abs(x);
    float t = 1.f / (1.f + 0.3275911f * z);
    float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f
             + t * (-1.453152027f + t * 1.061405429f))));
    float y = 1.f - poly * exp(-z * z);
    return sign(x) * y;
}

// C pow(): defined for negative bases with integer exponents, and at 0 / inf,
// where GLSL's pow (exp2(y * log2(x))) is not
float c_pow(float x, float y)
{
    if (y == 0.f || x == 1.f)
        return 1.f;
    if (isnan(x) || isnan(y))
        return nan_value();
    float ax = abs(x);
    if (isinf(y))
    {
        if (ax == 1.f)
            return 1.f;
        return (ax > 1.f) == (y > 0.f) ? inf_value() : 0.f;
    }
    bool y_int = floor(y) == y;
    bool y_odd = y_int && abs(y) < 16777216.f && mod(abs(y), 2.f) == 1.f;
    bool x_neg = (floatBitsToUint(x) & 0x80000000u) != 0u;  // -0 counts: pow(-0, -1) = -inf
    if (x == 0.f || isinf(x))
    {
        bool big = (x == 0.f) == (y < 0.f);   // 0^-y and inf^+y are inf
        float r = big ? inf_value() : 0.f;
        return (x_neg && y_odd) ? -r : r;
    }
    if (x < 0.f && !y_int)
        return nan_value();
    float r = pow(ax, y);
    return (x < 0.f && y_odd) ? -r : r;
}

// Round to the nearest fp16 value (ties to even, overflow to inf), kept as fp32
float round_fp16(float x)
{
    uint u = floatBitsToUint(x);
    uint s = u & 0x80000000u;
    uint a = u & 0x7fffffffu;
    if (a >= 0x7f800000u)               // inf, nan
        return x;
    if (a >= 0x477ff000u)               // >= 65520: rounds past 65504
        return uintBitsToFloat(s | 0x7f800000u);
    if (a >= 0x38800000u)               // fp16 normal range: keep 10 mantissa bits
    {
        uint r = (a + 0x0fffu + ((a >> 13) & 1u)) & ~0x1fffu;
        return uintBitsToFloat(s | r);
    }
    // fp16 subnormals are multiples of 2^-24: scale, round half to even, scale back (exact)
    float m = roundEven(uintBitsToFloat(a) * 16777216.f) * (1.f / 16777216.f);
    return uintBitsToFloat(s | floatBitsToUint(m));
}

// Round to the nearest bf16 value (ties to even, subnormals to zero, nan stays a quiet nan)
float round_bf16(float x)
{
    uint u = floatBitsToUint(x);
    uint a = u & 0x7fffffffu;
    if (a > 0x7f800000u)
        return uintBitsToFloat((u & 0xffff0000u) | 0x00400000u);
    if (a < 0x00800000u)
        return uintBitsToFloat(u & 0x80000000u);
    uint r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    return uintBitsToFloat(r);
}

// UnaryOp op_type 0..27
float unary(int k, float x)
{
    if (k == 0) return abs(x);
    if (k == 1) return -x;
    if (k == 2) return floor(x);
    if (k == 3) return ceil(x);
    if (k == 4) return x * x;
    if (k == 5) return x < 0.f ? nan_value() : sqrt(x);
    if (k == 6)  // rsqrt: ncnn's estimate + Newton step is nan at 0 and +inf
        return (x <= 0.f || isinf(x)) ? nan_value() : 1.f / sqrt(x);
    if (k == 7) return exp_ps(x);
    if (k == 8) return log_ps(x);
    if (k == 9) return sin(x);
    if (k == 10) return cos(x);
    if (k == 11) return tan_(x);
    if (k == 12 || k == 13)  // asin, acos through atan: the builtins are only ~4e-4 accurate here
    {
        if (abs(x) > 1.f)
            return nan_value();
        float c = sqrt(max((1.f - x) * (1.f + x), 0.f));
        return k == 12 ? atan(x, c) : atan(c, x);
    }
    if (k == 14) return isinf(x) ? nan_value() : atan(x);
    if (k == 15)  // reciprocal: nan for 0, subnormals and inf, as ncnn's estimate gives
        return (abs(x) < FLT_MIN || isinf(x)) ? nan_value() : 1.f / x;
    if (k == 16) return tanh(x);
    if (k == 17) return log_ps(x) * 0.4342944819032518;
    if (k == 18) return roundEven(x);
    if (k == 19) return trunc(x);
    if (k == 20) return sign(x);
    if (k == 21) return exp(min(x, EXP_ARG_MAX)) - 1.f;
    if (k == 22) return sinh(clamp(x, -EXP_ARG_MAX, EXP_ARG_MAX));
    if (k == 23)  // asinh; log(2|x|) for huge |x| where x*x would overflow
    {
        float ax = min(abs(x), FLT_MAX);
        float r = ax > 1e10f ? log(ax) + LN2 : log(ax + sqrt(ax * ax + 1.f));
        return x < 0.f ? -r : r;
    }
    if (k == 24) return cosh(clamp(x, -EXP_ARG_MAX, EXP_ARG_MAX));
    if (k == 25)  // acosh; below 1 ncnn's log_ps of a nan gives log(FLT_MIN)
    {
        if (x < 1.f)
            return -87.33654475f;
        float v = min(x, FLT_MAX);
        return v > 1e10f ? log(v) + LN2 : log(v + sqrt((v - 1.f) * (v + 1.f)));
    }
    if (k == 26) return abs(x) >= 1.f ? nan_value() : atanh(x);
    if (k == 27) return x <= -1.f ? nan_value() : log1p_(min(x, FLT_MAX));
    return x;
}

// shift + x * scale (Power, Exp, Log) with IEEE's sign of zero: a zero sum is +0 unless
// shift itself is -0. Compilers fold 0 + x into x, turning +0 into -0 for x = -0, and
// pow(+-0, negative) tells the two apart; the fix-up is integer work they cannot fold.
float shift_scale(float x)
{
    float t = p2 + mul_spec(x, p1);
    if (t == 0.f && floatBitsToUint(p2) != 0x80000000u)
        t = (uintBitsToFloat(floatBitsToUint(t) & 0x7fffffffu));
    return t;
}

float activation_f32(float x)
{
    // GLSL's min/max/clamp may drop a nan; the CPU half keeps it (but x > t is simply false,
    // Shrink's two compares fail to 0, and pow(1, nan) / pow(nan, 0) are 1)
    if (isnan(x) && op != OP_THRESHOLD && op != OP_SHRINK && op != OP_POWER && op != OP_EXP)
        return x;
    // a parameter times x goes through mul_spec: the driver would fold x * 0 into 0 where
    // numpy has nan for x = +-inf; a ReLU of slope 0 is max(x, 0) on the CPU half (-inf -> 0)
    if (op == OP_RELU) return x < 0.f ? (p0 == 0.f ? 0.f : x * p0) : x;
    if (op == OP_SIGMOID) return 1.f / (1.f + exp(-x));
    if (op == OP_SWISH) return divide(x, 1.f + exp_ps(-x));  // exp_ps(88.4) is 2.4e38
    if (op == OP_GELU) return 0.5f * x * (1.f + erf_(x * 0.70710678f));
    if (op == OP_GELU_FAST)
        return 0.5f * x * (1.f + tanh(0.79788452f * (x + 0.044715f * x * x * x)));
    if (op == OP_HARDSWISH) return x * clip_nan(mul_spec(x, p0) + p1, 0.f, 1.f);
    if (op == OP_HARDSIGMOID) return clip_nan(mul_spec(x, p0) + p1, 0.f, 1.f);
    if (op == OP_CLIP) return min(max(x, p0), p1);
    if (op == OP_TANH) return tanh(x);
    if (op == OP_ELU) return x < 0.f ? p0 * (exp(x) - 1.f) : x;
    if (op == OP_MISH) return x * tanh(log(1.f + exp(x)));
    if (op == OP_POWER)
        return c_pow(shift_scale(x), p0);
    if (op == OP_EXP)
    {
        float t = shift_scale(x);
        return p0 == -1.f ? exp(t) : c_pow(p0, t);
    }
    if (op == OP_LOG)
    {
        float t = shift_scale(x);
        float y = t < 0.f ? nan_value() : t == 0.f ? -inf_value() : log(t);
        return p0 == -1.f ? y : y / log(p0);
    }
    if (op == OP_THRESHOLD) return x > p0 ? 1.f : 0.f;
    if (op == OP_SELU)
        return x < 0.f ? (exp(x) - 1.f) * p0 * p1 : mul_spec(x, p1);
    if (op == OP_SOFTPLUS) return log(1.f + exp(x));
    if (op == OP_ERF) return erf_(x);
    if (op == OP_CELU) return x < 0.f ? p0 * (exp(x / p0) - 1.f) : x;
    if (op == OP_SHRINK)
        return x < -p1 ? x + p0 : x > p1 ? x - p0 : 0.f;
    if (op == OP_BNLL) return max(x, 0.f) + log1p_(exp(-abs(x)));
    if (op == OP_ROUND_FP16) return round_fp16(x);
    if (op == OP_ROUND_BF16) return round_bf16(x);
    if (op >= OP_UNARY) return unary(op - OP_UNARY, x);
    return x;  // OP_COPY
}

#if NCNN_fp16_arithmetic
// fp16 arithmetic: the functions that round once or not at all (ReLU / leaky ReLU, Clip,
// Threshold, abs, neg, floor, ceil, square, round, trunc, sign, copy: their fp16 result is
// fp32's rounded to fp16) run in fp16. Every other one keeps its fp32 form above: a chain of
// fp16 roundings (HardSwish rounds alpha, the product, the sum and the clip's product) biased
// a whole net's output by up to 2x more than the fp16 storage alone, and the exp/log forms
// keep their edge values. (All of it is one load and one store per value.)
const bool IN_FP16 = op == OP_RELU || op == OP_CLIP || op == OP_THRESHOLD || op == OP_COPY
    || op == OP_UNARY + 0 || op == OP_UNARY + 1 || op == OP_UNARY + 2 || op == OP_UNARY + 3
    || op == OP_UNARY + 4 || op == OP_UNARY + 18 || op == OP_UNARY + 19 || op == OP_UNARY + 20;

afp activation_fp16(afp x)
{
    if (isnan(x) && op != OP_THRESHOLD)
        return x;
    // the slope and the threshold stay fp32 (fp16 would round them: a second rounding); a
    // clip bound rounded to fp16 is what fp32's clip rounds to
    if (op == OP_RELU) return x < afp(0.f) ? (p0 == 0.f ? afp(0.f) : afp(float(x) * p0)) : x;
    if (op == OP_CLIP) return min(max(x, afp(p0)), afp(p1));
    if (op == OP_THRESHOLD) return float(x) > p0 ? afp(1.f) : afp(0.f);
    const int k = op - OP_UNARY;
    if (k == 0) return abs(x);
    if (k == 1) return -x;
    if (k == 2) return floor(x);
    if (k == 3) return ceil(x);
    if (k == 4) return x * x;
    if (k == 18) return roundEven(x);
    if (k == 19) return trunc(x);
    if (k == 20) return sign(x);
    return x;  // OP_COPY
}

afp activation(afp x)
{
    return IN_FP16 ? activation_fp16(x) : afp(activation_f32(float(x)));
}
#else
#define activation activation_f32
#endif

void main()
{
    // a 2-D grid covers more than 65535 workgroups for big blobs; (n, 1, 1) reads as flat
    const uint row = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int gi = int(gl_GlobalInvocationID.y * row + gl_GlobalInvocationID.x);
    if (gi >= p.n)
        return;

#if PACK4
    afpvec4 v = buffer_ld4(bottom_blob_data, gi);
    afpvec4 y = afpvec4(activation(v.r), activation(v.g), activation(v.b), activation(v.a));
    buffer_st4(top_blob_data, gi, y);
#else
    afp v = buffer_ld1(bottom_blob_data, gi);
    buffer_st1(top_blob_data, gi, activation(v));
#endif
}
