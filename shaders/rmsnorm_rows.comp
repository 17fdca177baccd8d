#version 450

// RMSNorm of rows that lie contiguous in memory, in one dispatch: a workgroup per row sums
// x^2 over the row (a shared-memory tree, no subgroup operations), then writes
//     y = x / sqrt(sum x^2 / K + eps)   (* gamma[k] when affine)
// The general path (reduction_rows.comp, then normalize_rows.comp) takes two dispatches and
// a barrier between them; a decoder's one-token step normalises one row twice per block,
// so there the barrier costs more than the work.

layout (constant_id = 0) const int affine = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) readonly buffer gamma_blob { sfp gamma_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };

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

    for (int k = l; k < p.K; k += n)
    {
        float v = float(buffer_ld1(bottom_blob_data, base + k)) * a;
        if (affine == 1)
            v = v * float(buffer_ld1(gamma_data, k));
        buffer_st1(top_blob_data, base + k, afp(v));
    }
}
