// variants: PACK4=0,1
// fp16a: all
#version 450

// BinaryOp: top = op(a, b) for op_type 0..18 (add sub mul div max min pow rsub rdiv rpow
// atan2 ratan2 fmod rfmod logaddexp floor_divide rfloor_divide remainder rremainder).
//
//   mode 0  broadcast: a and b are read through ncnn's broadcasting (worked out on the host,
//           vkncnn/gpu/ops/elementwise.py), one invocation per output scalar. PACK4=0 only.
//   mode 1  same shape and layout: all three buffers walked flat.
//   mode 2  with_scalar: b is the specialization constant b_scalar (binding 1 unused).
// Flat modes: PACK4=0 walks n scalars, PACK4=1 n vec4.
//
// Broadcast addressing. The output has 4 logical axes (o0 = the packing axis, then the
// inner axes, trailing ones padded with size 1). An operand of elempack P with `inner`
// positions per item holds the scalar of packing index n0 and inner flat index r at
//     (n0 / P) * inner * P + r * P + n0 % P.
// `axis` names the output axis that indexes the operand's packing axis (-1: it has size 1),
// r1..r3 what each inner output axis adds to r (0 where the operand broadcasts).
//
// Edge values follow the CPU half (cpu_fallback/binary.py): division is nan by 0, subnormals
// and inf; pow is ncnn's exp(y * log(x)), saturating at 2.4e38 for x <= 0.

layout (constant_id = 0) const int op_type = 0;
layout (constant_id = 1) const int mode = 0;
layout (constant_id = 2) const float b_scalar = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

#if PACK4
layout (binding = 0) readonly buffer a_blob { sfpvec4 a_blob_data[]; };
layout (binding = 1) readonly buffer b_blob { sfpvec4 b_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
#else
layout (binding = 0) readonly buffer a_blob { sfp a_blob_data[]; };
layout (binding = 1) readonly buffer b_blob { sfp b_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };
#endif

layout (push_constant) uniform parameter
{
    int n;                      // output scalars (mode 0, flat PACK4=0) or vec4 (PACK4=1)
    int o1, o2, o3;             // output sizes of the inner axes
    int out_pack;
    int a_pack, a_inner, a_axis, a_r1, a_r2, a_r3;
    int b_pack, b_inner, b_axis, b_r1, b_r2, b_r3;
} p;

const float FLT_MAX = 3.402823466e+38;
const float FLT_MIN = 1.175494351e-38;
const float EXP_MAX = 2.4061436e+38;   // ncnn's exp_ps(88.376): where its pow saturates
const float LN2 = 0.69314718055994531;
const float PI = 3.14159265358979324;

#include "nonfinite.comp"
#include "divide.comp"

float div_(float x, float y)
{
    return (abs(y) < FLT_MIN || isinf(y)) ? nan_value() : divide(x, y);
}

// floor(x / y); a quotient too small for a normal float may come out 0 (GPUs that flush
// subnormals: NVIDIA), and its floor is still -1 when the signs differ
float floor_div_(float x, float y)
{
    const float q = div_(x, y);
    if (q == 0.f && x != 0.f && (x < 0.f) != (y < 0.f))
        return -1.f;
    return floor(q);
}

float pow_(float x, float y)
{
    float xc = clamp(x, FLT_MIN, FLT_MAX);
    float t = y * log(xc);
    if (!(x > 0.f) || isnan(t))
        return EXP_MAX;
    return min(pow(xc, y), EXP_MAX);
}

// atan2 with ncnn's value at the origin: 0 or pi by the sign bit of x alone
float atan2_(float y, float x)
{
    if (isnan(x) || isnan(y))
        return nan_value();
    if (y == 0.f && x == 0.f)
        return (floatBitsToUint(x) & 0x80000000u) != 0u ? PI : 0.f;
    return atan(y, x);
}

// |x| mod |y| exactly, for finite x and finite nonzero y: subtract y * 2^k from the top
// k down (each subtraction is exact, Sterbenz), no division whose rounding could pick the
// wrong quotient, no fma (which GLSL may split). odd = the quotient's lowest bit.
float abs_mod(float ax, float ay, out bool odd)
{
    odd = false;
    if (ax < ay)
        return ax;
    if (ay < FLT_MIN)
        return 0.f;  // a subnormal divisor (many GPUs flush it): the result is within it of 0
    int ex, ey;
    frexp(ax, ex);
    frexp(ay, ey);
    float t = ldexp(ay, ex - ey);  // ay * 2^k with the exponent of ax
    if (t > ax)
        t *= 0.5f;
    float r = ax;
    for (int i = 0; i < 300; i++)  // at most 278 steps (the float exponent range)
    {
        odd = r >= t;
        if (odd)
            r -= t;
        if (t <= ay)
            break;
        t *= 0.5f;
    }
    return r;
}

// C fmod: the sign of x
float fmod_(float x, float y)
{
    if (y == 0.f || isinf(x) || isnan(x) || isnan(y))
        return nan_value();
    if (isinf(y))
        return x;
    bool odd;
    float r = abs_mod(abs(x), abs(y), odd);
    return x < 0.f ? -r : r;
}

// IEEE remainder: x - n * y with n = x / y rounded half to even
float remainder_(float x, float y)
{
    if (y == 0.f || isinf(x) || isinf(y) || isnan(x) || isnan(y))
        return nan_value();
    bool odd;
    float ay = abs(y);
    float r = abs_mod(abs(x), ay, odd);
    if (r > 0.5f * ay || (r == 0.5f * ay && odd))
        r -= ay;
    return x < 0.f ? -r : r;
}

float log1p_(float x)
{
    float u = 1.f + x;
    return u == 1.f ? x : log(u) * (x / (u - 1.f));
}

// numpy's logaddexp: max + log1p(exp(-|x - y|)), exact at x == y
float logaddexp_(float x, float y)
{
    if (x == y)
        return x + float(LN2);
    float d = x - y;
    if (isnan(d))
        return nan_value();
    return d > 0.f ? x + log1p_(exp(-d)) : y + log1p_(exp(d));
}

float binary_op_f32(float x, float y)
{
    if (op_type == 0) return x + y;
    if (op_type == 1) return x - y;
    if (op_type == 2) return mode == 2 ? mul_spec(x, b_scalar) : x * y;  // a constant 0 would fold
    if (op_type == 3) return div_(x, y);
    if (op_type == 4) return (isnan(x) || isnan(y)) ? nan_value() : max(x, y);
    if (op_type == 5) return (isnan(x) || isnan(y)) ? nan_value() : min(x, y);
    if (op_type == 6) return pow_(x, y);
    if (op_type == 7) return y - x;
    if (op_type == 8) return div_(y, x);
    if (op_type == 9) return pow_(y, x);
    if (op_type == 10) return atan2_(x, y);
    if (op_type == 11) return atan2_(y, x);
    if (op_type == 12) return fmod_(x, y);
    if (op_type == 13) return fmod_(y, x);
    if (op_type == 14) return logaddexp_(x, y);
    if (op_type == 15) return floor_div_(x, y);
    if (op_type == 16) return floor_div_(y, x);
    if (op_type == 17) return remainder_(x, y);
    return remainder_(y, x);
}

#if NCNN_fp16_arithmetic
// fp16 arithmetic: the ops that round once (add, subtract, multiply, max, min: the fp16 result
// equals fp32's rounded to fp16) run in fp16; the others keep the fp32 forms above and their
// edge values, and so does the scalar form, whose constant may lie beyond fp16's range
afp binary_op(afp x, afp y)
{
    if (mode != 2)
    {
        if (op_type == 0) return x + y;
        if (op_type == 1) return x - y;
        if (op_type == 2) return x * y;
        if (op_type == 4) return (isnan(x) || isnan(y)) ? afp(nan_value()) : max(x, y);
        if (op_type == 5) return (isnan(x) || isnan(y)) ? afp(nan_value()) : min(x, y);
        if (op_type == 7) return y - x;
    }
    return afp(binary_op_f32(float(x), mode == 2 ? b_scalar : float(y)));
}
#else
#define binary_op binary_op_f32
#endif

// scalar offset of an operand's element at output position (o0, o1, o2, o3)
int operand_offset(ivec4 o, int pack, int inner, int axis, int r1, int r2, int r3)
{
    int n0 = axis < 0 ? 0 : o[axis];
    int r = o.y * r1 + o.z * r2 + o.w * r3;
    return (n0 / pack) * inner * pack + r * pack + n0 % pack;
}

void main()
{
    const uint row = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int gi = int(gl_GlobalInvocationID.y * row + gl_GlobalInvocationID.x);
    if (gi >= p.n)
        return;

#if PACK4
    afpvec4 a = buffer_ld4(a_blob_data, gi);
    afpvec4 b = mode == 2 ? afpvec4(b_scalar) : buffer_ld4(b_blob_data, gi);
    afpvec4 y = afpvec4(binary_op(a.r, b.r), binary_op(a.g, b.g), binary_op(a.b, b.b), binary_op(a.a, b.a));
    buffer_st4(top_blob_data, gi, y);
#else
    if (mode == 0)
    {
        // gi walks the output in storage order: item, then lane
        const int item = gi / p.out_pack;
        const int out_inner = p.o1 * p.o2 * p.o3;
        const int r = item % out_inner;
        ivec4 o;
        o.x = (item / out_inner) * p.out_pack + gi % p.out_pack;
        o.w = r % p.o3;
        o.z = (r / p.o3) % p.o2;
        o.y = r / (p.o3 * p.o2);
        int ai = operand_offset(o, p.a_pack, p.a_inner, p.a_axis, p.a_r1, p.a_r2, p.a_r3);
        int bi = operand_offset(o, p.b_pack, p.b_inner, p.b_axis, p.b_r1, p.b_r2, p.b_r3);
        buffer_st1(top_blob_data, gi, binary_op(buffer_ld1(a_blob_data, ai), buffer_ld1(b_blob_data, bi)));
        return;
    }
    afp a = buffer_ld1(a_blob_data, gi);
    afp b = mode == 2 ? afp(b_scalar) : buffer_ld1(b_blob_data, gi);
    buffer_st1(top_blob_data, gi, binary_op(a, b));
#endif
}
