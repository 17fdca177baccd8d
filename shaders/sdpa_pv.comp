#version 450

// SDPA step 3: out[head][i][j] = sum_t P[h][i][t] * v[head / per_group][t][j], with P the
// softmaxed fp32 scores of a chunk of heads starting at head0. Each invocation computes a
// 4 x 4 block of the output in registers (4 rows of P x 4 columns of v), like sdpa_qk.comp.

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

void main()
{
    const int j0 = int(gl_GlobalInvocationID.x) * 4;
    const int i0 = int(gl_GlobalInvocationID.y) * 4;
    const int hz = int(gl_GlobalInvocationID.z);
    if (i0 >= p.src || j0 >= p.dv || hz >= p.heads)
        return;
    const int head = p.head0 + hz;
    const int kh = head / p.per_group;

    // rows / columns past the end read the last one again (in bounds) and are not stored
    ivec4 prow;
    ivec4 vcol;
    for (int u = 0; u < 4; u++)
    {
        prow[u] = (hz * p.src + min(i0 + u, p.src - 1)) * p.dst;
        vcol[u] = kh * p.dst * p.dv + min(j0 + u, p.dv - 1);
    }

    mat4 acc = mat4(0.f);  // acc[v][u]: P row i0 + u against v column j0 + v
    for (int t = 0; t < p.dst; t++)
    {
        const vec4 a = vec4(scores_data[prow.x + t], scores_data[prow.y + t],
                            scores_data[prow.z + t], scores_data[prow.w + t]);
        const int vt = t * p.dv;
        const vec4 b = vec4(float(buffer_ld1(v_data, vcol.x + vt)), float(buffer_ld1(v_data, vcol.y + vt)),
                            float(buffer_ld1(v_data, vcol.z + vt)), float(buffer_ld1(v_data, vcol.w + vt)));
        acc[0] += a * b.x;
        acc[1] += a * b.y;
        acc[2] += a * b.z;
        acc[3] += a * b.w;
    }

    for (int u = 0; u < 4 && i0 + u < p.src; u++)
    {
        for (int v = 0; v < 4 && j0 + v < p.dv; v++)
            buffer_st1(top_blob_data, (head * p.src + i0 + u) * p.dv + j0 + v, afp(acc[v][u]));
    }
}
