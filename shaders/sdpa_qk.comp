#version 450

// SDPA step 1: scores[h][i][j] = scale * sum_t q[head][i][t] * k[head / per_group][j][t]
//                                 (+ mask[i][j], per head when the mask has one per head)
// for a chunk of heads starting at head0. Each invocation computes a 4 x 4 block of
// scores held in registers (4 q rows x 4 k rows): 8 loads per 16 multiply-adds, no
// shared memory or barriers. Tensors are pack1; scores are fp32.

layout (constant_id = 0) const int has_mask = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer q_blob { sfp q_data[]; };
layout (binding = 1) readonly buffer k_blob { sfp k_data[]; };
layout (binding = 2) readonly buffer mask_blob { sfp mask_data[]; };
layout (binding = 3) writeonly buffer scores_blob { float scores_data[]; };

layout (push_constant) uniform parameter
{
    int src;         // query rows
    int dst;         // key rows
    int d;           // embed dim
    int per_group;   // query heads per key head
    int head0;       // first head of this chunk
    int heads;       // heads in this chunk
    int mask_cstep;  // 0: one mask for all heads, else src * dst
    float scale;
} p;

void main()
{
    const int j0 = int(gl_GlobalInvocationID.x) * 4;
    const int i0 = int(gl_GlobalInvocationID.y) * 4;
    const int hz = int(gl_GlobalInvocationID.z);
    if (i0 >= p.src || j0 >= p.dst || hz >= p.heads)
        return;
    const int head = p.head0 + hz;
    const int kh = head / p.per_group;

    // rows past the end read the last row again (in bounds) and are not stored
    ivec4 qrow;
    ivec4 krow;
    for (int u = 0; u < 4; u++)
    {
        qrow[u] = (head * p.src + min(i0 + u, p.src - 1)) * p.d;
        krow[u] = (kh * p.dst + min(j0 + u, p.dst - 1)) * p.d;
    }

    mat4 acc = mat4(0.f);  // acc[v][u]: q row i0 + u against k row j0 + v
    for (int t = 0; t < p.d; t++)
    {
        const vec4 a = vec4(float(buffer_ld1(q_data, qrow.x + t)), float(buffer_ld1(q_data, qrow.y + t)),
                            float(buffer_ld1(q_data, qrow.z + t)), float(buffer_ld1(q_data, qrow.w + t)));
        const vec4 b = vec4(float(buffer_ld1(k_data, krow.x + t)), float(buffer_ld1(k_data, krow.y + t)),
                            float(buffer_ld1(k_data, krow.z + t)), float(buffer_ld1(k_data, krow.w + t)));
        acc[0] += a * b.x;
        acc[1] += a * b.y;
        acc[2] += a * b.z;
        acc[3] += a * b.w;
    }

    for (int u = 0; u < 4 && i0 + u < p.src; u++)
    {
        for (int v = 0; v < 4 && j0 + v < p.dst; v++)
        {
            const int i = i0 + u;
            const int j = j0 + v;
            float s = acc[v][u] * p.scale;
            if (has_mask == 1)
                s += float(buffer_ld1(mask_data, head * p.mask_cstep + i * p.dst + j));
            scores_data[(hz * p.src + i) * p.dst + j] = s;
        }
    }
}
