// variants: BINDINGS=3,5
#version 450

// RMSNorm of rows that lie contiguous in memory, in one dispatch: a workgroup per row sums
// x^2 over the row (a shared-memory tree, no subgroup operations), then writes
//     y = x / sqrt(sum x^2 / K + eps)   (* gamma[k] when affine)
// The general path (reduction_rows.comp, then normalize_rows.comp) takes two dispatches and
// a barrier between them; a decoder's one-token step normalises one row twice per block,
// so there the barrier costs more than the work.
//
// rope rotates each row as a one-token RotaryEmbed after the norm would (a decoder's per-head
// q or k norm, whose rows are heads of K values): pairs (j, j + K/2) (rope 1) or (2j, 2j + 1)
// (rope 2), y[first] = a cos[j] - b sin[j], y[second] = b cos[j] + a sin[j], with a and b
// normalised. The pair's two values are in the row, which one workgroup holds: no dispatch and
// barrier for the RoPE, and no rounding to the storage type between the two.

layout (constant_id = 0) const int affine = 0;
layout (constant_id = 1) const int rope = 0;  // 1: pairs (j, j + K/2), 2: (2j, 2j + 1)

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) readonly buffer gamma_blob { sfp gamma_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };
#if BINDINGS > 3
// the RoPE's angles, K/2 of each (a variant of its own: the plain norm binds 3 storage buffers)
layout (binding = 3) readonly buffer cos_blob { sfp cos_data[]; };
layout (binding = 4) readonly buffer sin_blob { sfp sin_data[]; };
#endif

layout (push_constant) uniform parameter
{
    int G;        // rows
    int K;        // elements per row
    int rows_y;   // rows per grid column: row = group.z * rows_y + group.y
    float eps;
} p;

#define LOCAL_MAX 256
shared float sums[LOCAL_MAX];

void main()
{
    const int g = int(gl_WorkGroupID.z) * p.rows_y + int(gl_WorkGroupID.y);
    if (g >= p.G)
        return;  // the whole workgroup: g is the same for all its invocations
    const int l = int(gl_LocalInvocationID.x);
    const int n = int(gl_WorkGroupSize.x);
    const int base = g * p.K;

    float s = 0.f;
    for (int k = l; k < p.K; k += n)
    {
        const float x = float(buffer_ld1(bottom_blob_data, base + k));
        s += x * x;
    }
    sums[l] = s;
    barrier();
    for (int half_n = n / 2; half_n > 0; half_n /= 2)
    {
        if (l < half_n)
            sums[l] += sums[l + half_n];
        barrier();
    }
    const float a = 1.f / sqrt(sums[0] / float(p.K) + p.eps);

#if BINDINGS > 3
    if (rope != 0)
    {
        const int half_k = p.K / 2;
        for (int j = l; j < half_k; j += n)
        {
            const int first = rope == 1 ? j : 2 * j;
            const int second = rope == 1 ? j + half_k : 2 * j + 1;
            float va = float(buffer_ld1(bottom_blob_data, base + first)) * a;
            float vb = float(buffer_ld1(bottom_blob_data, base + second)) * a;
            if (affine == 1)
            {
                va *= float(buffer_ld1(gamma_data, first));
                vb *= float(buffer_ld1(gamma_data, second));
            }
            const float c = float(buffer_ld1(cos_data, j));
            const float s = float(buffer_ld1(sin_data, j));
            buffer_st1(top_blob_data, base + first, afp(va * c - vb * s));
            buffer_st1(top_blob_data, base + second, afp(vb * c + va * s));
        }
        return;
    }
#endif
    for (int k = l; k < p.K; k += n)
    {
        float v = float(buffer_ld1(bottom_blob_data, base + k)) * a;
        if (affine == 1)
            v = v * float(buffer_ld1(gamma_data, k));
        buffer_st1(top_blob_data, base + k, afp(v));
    }
}
