// variants: PACK4=0,1
// alias: pooling_global_pack4 PACK4=1
#version 450

// Global max / average pooling: one value per channel item (4 channels in PACK4).
// One workgroup of 64 invocations reduces one channel: each invocation folds a strided
// share of the `size` positions, then a tree in shared memory folds the 64 partial results.
// The mean is accumulated in fp32 (ncnn accumulates in fp32 too) and divided once.

layout (constant_id = 0) const int pooling_type = 0;  // 0 max, 1 average

#define LOCAL 64
layout (local_size_x = LOCAL, local_size_y = 1, local_size_z = 1) in;

#if PACK4
#define T afpvec4
#define LOAD(i) buffer_ld4(bottom_blob_data, i)
#define STORE(i, v) buffer_st4(top_blob_data, i, v)
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
#else
#define T afp
#define LOAD(i) buffer_ld1(bottom_blob_data, i)
#define STORE(i, v) buffer_st1(top_blob_data, i, v)
layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
#endif

layout (push_constant) uniform parameter
{
    int size;       // positions reduced per channel item
    int cstep;      // items between channels
    int channels;   // channel items
} p;

shared T partial[LOCAL];

#include "nonfinite.comp"

// max keeps a nan (numpy's max does; GLSL's may drop it)
T fold(T a, T b)
{
    return pooling_type == 0 ? max_nan(a, b) : a + b;
}

void main()
{
    const int lx = int(gl_LocalInvocationID.x);
    const int q = int(gl_WorkGroupID.y);

    // -inf is the identity of max for every non-NaN input
    T acc = pooling_type == 0 ? T(uintBitsToFloat(0xff800000u)) : T(0.f);
    if (q < p.channels)
    {
        const int base = q * p.cstep;
        for (int i = lx; i < p.size; i += LOCAL)
            acc = fold(acc, LOAD(base + i));
    }
    partial[lx] = acc;
    barrier();

    for (int stride = LOCAL / 2; stride > 0; stride /= 2)
    {
        if (lx < stride)
            partial[lx] = fold(partial[lx], partial[lx + stride]);
        barrier();
    }

    if (lx == 0 && q < p.channels)
    {
        T res = partial[0];
        if (pooling_type == 1)
            res = res / afp(p.size);
        STORE(q, res);
    }
}
