// variants: PACK4=0,1
// fp16a: all
#version 450

// Eltwise, two operands at a time: top = a*coeff_a (op) b*coeff_b, with op_type
// 0 prod (a * b), 1 sum (a*coeff_a + b*coeff_b), 2 max. N inputs are folded left by the
// layer: (((x0 op x1) op x2) ...), passing coeff_a = 1 after the first step.
// The operands share one shape and layout, so the buffers are walked flat:
// PACK4=0 over n scalars, PACK4=1 over n vec4. An activation (a ReLU right after the
// Eltwise, fused by the planner) applies to the result of the last fold.
// With fp16 arithmetic the product, the max and a sum with unit coefficients run in fp16
// (one rounding: fp32's result rounded to fp16); a weighted sum stays fp32, its coefficients
// unrounded.

layout (constant_id = 0) const int op_type = 1;
layout (constant_id = 1) const int activation_type = 0;
layout (constant_id = 2) const float activation_param_0 = 0;
layout (constant_id = 3) const float activation_param_1 = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

#if PACK4
layout (binding = 0) readonly buffer a_blob { sfpvec4 a_blob_data[]; };
layout (binding = 1) readonly buffer b_blob { sfpvec4 b_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
#define afpT afpvec4
#define fpT vec4
#define load(buf, i) buffer_ld4(buf, i)
#define store(buf, i, v) buffer_st4(buf, i, v)
#define activation_T activation_afpvec4
#else
layout (binding = 0) readonly buffer a_blob { sfp a_blob_data[]; };
layout (binding = 1) readonly buffer b_blob { sfp b_blob_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };
#define afpT afp
#define fpT float
#define load(buf, i) buffer_ld1(buf, i)
#define store(buf, i, v) buffer_st1(buf, i, v)
#define activation_T activation_afp
#endif

#include "activation.comp"

layout (push_constant) uniform parameter
{
    int n;
    float coeff_a;
    float coeff_b;
} p;

void main()
{
    const uint row = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int gi = int(gl_GlobalInvocationID.y * row + gl_GlobalInvocationID.x);
    if (gi >= p.n)
        return;

    afpT a = load(a_blob_data, gi);
    afpT b = load(b_blob_data, gi);
    afpT y;
    if (op_type == 0)
        y = a * b;
    else if (op_type == 1)
#if NCNN_fp16_arithmetic
        y = p.coeff_a == 1.f && p.coeff_b == 1.f ? a + b : afpT(fpT(a) * p.coeff_a + fpT(b) * p.coeff_b);
#else
        y = a * p.coeff_a + b * p.coeff_b;
#endif
    else
        y = max_nan(a, b);  // numpy's maximum: a nan operand gives nan
    store(top_blob_data, gi, activation_T(y, activation_type, activation_param_0, activation_param_1));
}
