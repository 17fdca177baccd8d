// variants: PACK4=0,1
// alias: relu_pack4 PACK4=1
#version 450

// ReLU / leaky ReLU in place: x < 0 ? x * slope : x.
// The ReLU *layer* runs through unaryop.comp (out of place, one pass: a layer never writes
// its input); this in-place form is the runtime's own built-in example (tests/gpu).
// PACK4=0: the buffer holds n scalars; PACK4=1: n vec4 items (elempack 4).
// Storage is fp32 or fp16 as the preamble says; the math runs in afp (fp32).
// A NaN stays NaN, as on the numpy path (GLSL's max may return the other operand).

layout (constant_id = 0) const float slope = 0;
// Optional shape hint: 0 = not known when the pipeline was made, take the push constant.
layout (constant_id = 1) const int n = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

#if PACK4
layout (binding = 0) buffer bottom_top_blob { sfpvec4 bottom_top_blob_data[]; };
#else
layout (binding = 0) buffer bottom_top_blob { sfp bottom_top_blob_data[]; };
#endif

layout (push_constant) uniform parameter
{
    int n;
} p;

#include "nonfinite.comp"

void main()
{
    // A 2-D grid lets a dispatcher cover more than 65535 workgroups along x for big blobs;
    // a plain (n, 1, 1) dispatch has y = 0 and reads as a flat index.
    const uint row = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int gi = int(gl_GlobalInvocationID.y * row + gl_GlobalInvocationID.x);

    if (gi >= psc(n))
        return;

#if PACK4
    afpvec4 v = buffer_ld4(bottom_top_blob_data, gi);
    if (slope == 0)
        v = max_nan(v, afpvec4(0.f));
    else
        v = mix(v, v * afp(slope), lessThan(v, afpvec4(0.f)));
    buffer_st4(bottom_top_blob_data, gi, v);
#else
    afp v = buffer_ld1(bottom_top_blob_data, gi);
    if (slope == 0)
        v = max_nan(v, afp(0.f));
    else
        v = v < afp(0.f) ? v * afp(slope) : v;
    buffer_st1(bottom_top_blob_data, gi, v);
#endif
}
