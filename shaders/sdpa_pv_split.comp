#version 450

// SDPA step 3 for a few query rows (a decode step): out[head][i][j] = sum_t P[h][i][t] *
// v[head / per_group][t][j]. sdpa_pv.comp gives each invocation a 4 x 4 output block and the
// whole t loop: with one query row that is dv / 4 x heads invocations walking every cached
// row one after another, bound by the latency of each load. Here a workgroup owns one
// (head, row, 4 columns) and its lx invocations split the t loop, their partial sums meeting
// in shared memory.

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer scores_blob { float scores_data[]; };
layout (binding = 1) readonly buffer v_blob { sfp v_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int src;
    int dst;
    int dv;         // value dim
    int per_group;
    int head0;
    int heads;
} p;

shared vec4 partial[256];

void main()
{
    const int lx = int(gl_WorkGroupSize.x);
    const int tx = int(gl_LocalInvocationID.x);
    const int j0 = int(gl_WorkGroupID.x) * 4;
    const int i = int(gl_WorkGroupID.y);
    const int hz = int(gl_WorkGroupID.z);
    const int head = p.head0 + hz;
    const int kh = head / p.per_group;

    // columns past the end read the last one again (in bounds) and are not stored
    ivec4 vcol;
    for (int v = 0; v < 4; v++)
        vcol[v] = kh * p.dst * p.dv + min(j0 + v, p.dv - 1);
    const int prow = (hz * p.src + i) * p.dst;

    vec4 acc = vec4(0.f);
    for (int t = tx; t < p.dst; t += lx)
    {
        const float a = scores_data[prow + t];
        const int vt = t * p.dv;
        acc += a * vec4(float(buffer_ld1(v_data, vcol.x + vt)), float(buffer_ld1(v_data, vcol.y + vt)),
                        float(buffer_ld1(v_data, vcol.z + vt)), float(buffer_ld1(v_data, vcol.w + vt)));
    }
    partial[tx] = acc;
    barrier();
    for (int s = lx / 2; s > 0; s /= 2)
    {
        if (tx < s)
            partial[tx] += partial[tx + s];
        barrier();
    }
    if (tx == 0)
    {
        for (int v = 0; v < 4 && j0 + v < p.dv; v++)
            buffer_st1(top_blob_data, (head * p.src + i) * p.dv + j0 + v, afp(partial[0][v]));
    }
}
