// variants: MODE=0,1,2
// fp16a: MODE=0
#version 450

// Batched strided matrix product with a fused epilogue, the engine of InnerProduct, Gemm,
// MatMul and MultiHeadAttention:
//
//     out[z][m][n] = act((sum_k A[z][m][k] * B[z][k][n] + beta * C[z][m][n]) * alpha)
//
// Every operand is addressed through strides (in scalars), so transposes, broadcasts
// (stride 0), head splits and head merges are free:
//
//     A(m, k)  = A[a_off + zA + (m / a_elempack) * a_sm + m % a_elempack + k * a_sk]
//     B(k, n)  = B[b_off + zB + k * b_sk + n * b_sn]
//     C(m, n)  = C[c_off + zC + m * c_sm + n * c_sn]                (only when has_c)
//     out(m,n) = out[o_off + zO + (m / out_elempack) * o_sm + m % out_elempack + n * o_sn]
//
// with zX = (z / batch_inner) * x_sbh + (z % batch_inner) * x_sbl (two batch axes, as
// MatMul's 4-D broadcasting needs). a_elempack / out_elempack = 4 address a pack4 tensor
// whose rows (the m axis) are packed: a_sm / o_sm is then the stride of one row *group*.
//
// MODE 0: tiled. A workgroup computes a (4*ly) x (4*lx) tile of out through shared
//         memory, BK values of k at a time; each invocation owns 4 rows x 4 columns
//         (rows ty*4..ty*4+3, so a pack4 row group stays in one invocation; columns
//         tx + lx*j, so neighbouring invocations touch neighbouring columns).
// MODE 1: matrix-vector with k contiguous in B (InnerProduct, Linear): one workgroup per
//         output column n computes rows 0..3 (M <= 4), its invocations splitting k, then
//         reduce through shared memory. Reads B once, coalesced.
// MODE 2: one invocation per output, looping over k: small or skinny products where B is
//         contiguous along n.
//
// fp16 arithmetic (MODE 0 only; the other modes are bound by their loads): the tiles and
// the multiply-adds are fp16, each BK chunk summed in fp16 and the chunks in fp32, as in
// convolution.comp. The epilogue (store) is fp32.

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

#include "gemm_operands.comp"

#if MODE == 0

#define BK 16
// tile capacity: 4*ly <= 64 rows, 4*lx <= 128 columns (the host keeps lx*ly <= 256)
shared afp sA[BK * 64];
shared afp sB[BK * 128];

void main()
{
    const int lx = int(gl_WorkGroupSize.x);
    const int ly = int(gl_WorkGroupSize.y);
    const int tx = int(gl_LocalInvocationID.x);
    const int ty = int(gl_LocalInvocationID.y);
    const int tid = ty * lx + tx;
    const int nthreads = lx * ly;
    const int BM = ly * 4;
    const int BN = lx * 4;
    const int m0 = int(gl_WorkGroupID.y) * BM;
    const int n0 = int(gl_WorkGroupID.x) * BN;
    const int z = int(gl_WorkGroupID.z);

    const int a_base = p.a_off + batch_offset(z, p.a_sbh, p.a_sbl);
    const int b_base = p.b_off + batch_offset(z, p.b_sbh, p.b_sbl);

    vec4 sum[4];
    for (int j = 0; j < 4; j++)
        sum[j] = vec4(0.f);

    for (int k0 = 0; k0 < p.K; k0 += BK)
    {
        // A tile (BM x BK): invocations walk the operand's contiguous axis
        for (int e = tid; e < BM * BK; e += nthreads)
        {
            int mm, kk;
            if (p.a_sk == 1) { kk = e % BK; mm = e / BK; }
            else { mm = e % BM; kk = e / BM; }
            const int m = m0 + mm;
            const int k = k0 + kk;
            afp v = afp(0.f);
            if (m < p.M && k < p.K)
                v = buffer_ld1(a_data, a_index(a_base, m, k));
            sA[kk * BM + mm] = v;
        }
        // B tile (BK x BN)
        for (int e = tid; e < BK * BN; e += nthreads)
        {
            int nn, kk;
            if (p.b_sn == 1) { nn = e % BN; kk = e / BN; }
            else { kk = e % BK; nn = e / BK; }
            const int n = n0 + nn;
            const int k = k0 + kk;
            afp v = afp(0.f);
            if (n < p.N && k < p.K)
                v = buffer_ld1(b_data, b_base + k * p.b_sk + n * p.b_sn);
            sB[kk * BN + nn] = v;
        }
        barrier();

#if NCNN_fp16_arithmetic
        afpvec4 part[4];
        for (int j = 0; j < 4; j++)
            part[j] = afpvec4(0.f);
#define ACC part
#else
#define ACC sum
#endif
        for (int kk = 0; kk < BK; kk++)
        {
            const int ai = kk * BM + ty * 4;
            const afpvec4 a = afpvec4(sA[ai], sA[ai + 1], sA[ai + 2], sA[ai + 3]);
            const int bi = kk * BN + tx;
            ACC[0] += a * sB[bi];
            ACC[1] += a * sB[bi + lx];
            ACC[2] += a * sB[bi + lx * 2];
            ACC[3] += a * sB[bi + lx * 3];
        }
#if NCNN_fp16_arithmetic
        for (int j = 0; j < 4; j++)
            sum[j] += vec4(part[j]);
#endif
#undef ACC
        barrier();
    }

    for (int j = 0; j < 4; j++)
    {
        const int n = n0 + tx + lx * j;
        if (n >= p.N)
            continue;
        for (int i = 0; i < 4; i++)
        {
            const int m = m0 + ty * 4 + i;
            if (m < p.M)
                store(z, m, n, sum[j][i]);
        }
    }
}

#elif MODE == 1

shared afpvec4 partial[256];

void main()
{
    const int lx = int(gl_WorkGroupSize.x);
    const int tx = int(gl_LocalInvocationID.x);
    // columns over a 2-D grid of workgroups: more than 65535 columns fit
    const int n = int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x);
    const int z = int(gl_WorkGroupID.z);
    if (n >= p.N)
        return;  // the whole workgroup leaves together: no barrier is skipped by half of it

    const int a_base = p.a_off + batch_offset(z, p.a_sbh, p.a_sbl);
    const int b_base = p.b_off + batch_offset(z, p.b_sbh, p.b_sbl) + n * p.b_sn;

    afpvec4 sum = afpvec4(0.f);
    for (int k = tx; k < p.K; k += lx)
    {
        const afp b = buffer_ld1(b_data, b_base + k * p.b_sk);
        afpvec4 a = afpvec4(0.f);
        a.r = buffer_ld1(a_data, a_index(a_base, 0, k));
        if (p.M > 1) a.g = buffer_ld1(a_data, a_index(a_base, 1, k));
        if (p.M > 2) a.b = buffer_ld1(a_data, a_index(a_base, 2, k));
        if (p.M > 3) a.a = buffer_ld1(a_data, a_index(a_base, 3, k));
        sum += a * b;
    }
    partial[tx] = sum;
    barrier();
    for (int s = lx / 2; s > 0; s /= 2)
    {
        if (tx < s)
            partial[tx] += partial[tx + s];
        barrier();
    }
    if (tx < p.M && tx < 4)
        store(z, tx, n, partial[0][tx]);
}

#else

void main()
{
    const int n = int(gl_GlobalInvocationID.x);
    const int m = int(gl_GlobalInvocationID.y);
    const int z = int(gl_GlobalInvocationID.z);
    if (n >= p.N || m >= p.M)
        return;

    const int a_base = p.a_off + batch_offset(z, p.a_sbh, p.a_sbl);
    const int b_base = p.b_off + batch_offset(z, p.b_sbh, p.b_sbl) + n * p.b_sn;

    afp sum = afp(0.f);
    for (int k = 0; k < p.K; k++)
        sum += buffer_ld1(a_data, a_index(a_base, m, k)) * buffer_ld1(b_data, b_base + k * p.b_sk);
    store(z, m, n, sum);
}

#endif
