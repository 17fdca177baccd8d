// vulkan1.0: no
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require

// gemm.comp's batched strided matrix product on tensor cores (VK_KHR_cooperative_matrix),
// for devices that multiply 16x16x16 fp16 tiles into fp32 with 32-wide subgroups (NVIDIA):
//
//     out[z][m][n] = act((sum_k A[z][m][k] * B[z][k][n] + beta * C[z][m][n]) * alpha)
//
// with the same operands, addressing, constants and epilogue (include/gemm_operands.comp),
// so the host picks between the two freely. Only for fp16 storage: fp16 values multiply
// exactly into the fp32 accumulators.
//
// The structure is convolution_coopmat.comp's: a workgroup of 4 subgroups (2 x 2) computes a
// 64 x 64 tile of out, each subgroup a 32 x 32 quarter as four 16x16 accumulators. K goes in
// chunks of 64 staged in shared memory as fp16 ([m][k] for A, [k][n] for B); the next chunk's
// global loads are issued into registers before the current chunk's multiplies. The kernel
// waits on those loads more than it multiplies, so the chunk is as deep as the registers
// allow (at 128 the staged values no longer fit; figures: docs/perf-notes.md, "Tensor-core
// kernels: shapes and registers"). Unlike the
// convolution, the operands here are any strided views (transposed, broadcast, a head of a
// packed tensor), so the staging loads one scalar at a time through the shared addressing,
// invocations walking whichever axis of the operand is contiguous. The epilogue goes
// fragment by fragment through a per-subgroup staging area to the shared store().
// Each cooperative matrix is a variable of its own (see convolution_coopmat.comp: fragments
// in arrays ran several times slower).

layout (local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

#include "gemm_operands.comp"

#define BM 64
#define BN 64
#define BK 64
#define NT 128
// Row strides of the shared tiles in elements: padded against bank conflicts, multiples
// of 16 bytes as cooperative-matrix loads and stores want.
#define SA_STRIDE (BK + 8)
#define SB_STRIDE (BN + 8)
#define SC_STRIDE 16
#define A_ITEMS (BM * BK / NT)   // scalars of A each invocation stages per chunk
#define B_ITEMS (BK * BN / NT)

shared float16_t sA[BM * SA_STRIDE];   // [m][k]
shared float16_t sB[BK * SB_STRIDE];   // [k][n]
shared float sC[4 * 16 * SC_STRIDE];   // one finished 16x16 fragment per subgroup

float16_t ra[A_ITEMS];
float16_t rb[B_ITEMS];

// where item e of a chunk sits in the (BM x BK) A tile / (BK x BN) B tile: consecutive
// invocations take consecutive elements along the operand's contiguous axis
ivec2 a_item(int e)   // (mm, kk)
{
    return p.a_sk == 1 ? ivec2(e / BK, e % BK) : ivec2(e % BM, e / BM);
}

ivec2 b_item(int e)   // (kk, nn)
{
    return p.b_sn == 1 ? ivec2(e / BN, e % BN) : ivec2(e % BK, e / BK);
}

void load_chunk(int k0, int m0, int n0, int a_base, int b_base, int tid)
{
    [[unroll]] for (int i = 0; i < A_ITEMS; i++)
    {
        const ivec2 t = a_item(tid + i * NT);
        const int m = m0 + t.x;
        const int k = k0 + t.y;
        ra[i] = (m < p.M && k < p.K) ? float16_t(buffer_ld1(a_data, a_index(a_base, m, k))) : float16_t(0.f);
    }
    [[unroll]] for (int i = 0; i < B_ITEMS; i++)
    {
        const ivec2 t = b_item(tid + i * NT);
        const int k = k0 + t.x;
        const int n = n0 + t.y;
        rb[i] = (n < p.N && k < p.K) ? float16_t(buffer_ld1(b_data, b_base + k * p.b_sk + n * p.b_sn))
                                     : float16_t(0.f);
    }
}

void store_chunk(int tid)
{
    [[unroll]] for (int i = 0; i < A_ITEMS; i++)
    {
        const ivec2 t = a_item(tid + i * NT);
        sA[t.x * SA_STRIDE + t.y] = ra[i];
    }
    [[unroll]] for (int i = 0; i < B_ITEMS; i++)
    {
        const ivec2 t = b_item(tid + i * NT);
        sB[t.x * SB_STRIDE + t.y] = rb[i];
    }
}

#define FRAG_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRAG_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define FRAG_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// The epilogue of fragment (i, j) through this subgroup's staging area. Lanes walk it along
// the output's contiguous axis: n when out is planar, four rows (one pack4 item) per column
// when it is packed along m.
#define EPILOGUE(ACC, i, j) \
    coopMatStore(ACC, sC, stage, SC_STRIDE, gl_CooperativeMatrixLayoutRowMajor); \
    subgroupMemoryBarrierShared(); \
    subgroupBarrier(); \
    for (int e = lane; e < 256; e += 32) \
    { \
        const int mm = out_elempack == 4 ? (e / 64) * 4 + e % 4 : e / 16; \
        const int nn = out_elempack == 4 ? (e / 4) % 16 : e % 16; \
        const int m = m0 + wm + 16 * (i) + mm; \
        const int n = n0 + wn + 16 * (j) + nn; \
        if (m < p.M && n < p.N) \
            store(z, m, n, afp(sC[stage + mm * SC_STRIDE + nn])); \
    } \
    subgroupBarrier(); /* every lane has read the stage before the next fragment lands */

void main()
{
    const int tid = int(gl_LocalInvocationID.x);
    const int sg = int(gl_SubgroupID);       // 4 subgroups of 32
    const int lane = int(gl_SubgroupInvocationID);
    const int wm = (sg / 2) * 32;             // this subgroup's quarter of the tile
    const int wn = (sg % 2) * 32;
    const int m0 = int(gl_WorkGroupID.y) * BM;
    const int n0 = int(gl_WorkGroupID.x) * BN;
    const int z = int(gl_WorkGroupID.z);
    const int a_base = p.a_off + batch_offset(z, p.a_sbh, p.a_sbl);
    const int b_base = p.b_off + batch_offset(z, p.b_sbh, p.b_sbl);

    FRAG_C acc00 = FRAG_C(0.f);
    FRAG_C acc01 = FRAG_C(0.f);
    FRAG_C acc10 = FRAG_C(0.f);
    FRAG_C acc11 = FRAG_C(0.f);
    FRAG_A a0;
    FRAG_A a1;
    FRAG_B b;

    if (p.K > 0)
        load_chunk(0, m0, n0, a_base, b_base, tid);
    for (int k0 = 0; k0 < p.K; k0 += BK)
    {
        store_chunk(tid);
        barrier();
        if (k0 + BK < p.K)
            load_chunk(k0 + BK, m0, n0, a_base, b_base, tid);
        [[unroll]] for (int kk = 0; kk < BK; kk += 16)
        {
            coopMatLoad(a0, sA, wm * SA_STRIDE + kk, SA_STRIDE, gl_CooperativeMatrixLayoutRowMajor);
            coopMatLoad(a1, sA, (wm + 16) * SA_STRIDE + kk, SA_STRIDE, gl_CooperativeMatrixLayoutRowMajor);
            coopMatLoad(b, sB, kk * SB_STRIDE + wn, SB_STRIDE, gl_CooperativeMatrixLayoutRowMajor);
            acc00 = coopMatMulAdd(a0, b, acc00);
            acc10 = coopMatMulAdd(a1, b, acc10);
            coopMatLoad(b, sB, kk * SB_STRIDE + wn + 16, SB_STRIDE, gl_CooperativeMatrixLayoutRowMajor);
            acc01 = coopMatMulAdd(a0, b, acc01);
            acc11 = coopMatMulAdd(a1, b, acc11);
        }
        barrier();
    }

    const int stage = sg * 16 * SC_STRIDE;
    EPILOGUE(acc00, 0, 0)
    EPILOGUE(acc01, 0, 1)
    EPILOGUE(acc10, 1, 0)
    EPILOGUE(acc11, 1, 1)
}
