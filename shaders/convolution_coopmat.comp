// vulkan1.0: no
#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require

// Convolution as a matrix product on tensor cores (VK_KHR_cooperative_matrix), for devices
// that multiply 16x16x16 fp16 tiles into fp32 with 32-wide subgroups (NVIDIA). Same product
// and layouts as convolution.comp (read its header): per group g
//
//     out[g*outc_g + m][n] = act(bias + sum_k W[g][m][k] * col(k, n)),   k = tap * inc_g + ic
//
// and the same specialization constants (ids 0-23), so the host chooses between the two
// freely. Only for fp16 storage: the fp16 values multiply exactly into fp32 accumulators,
// which is what the scalar shader computes too. The host also guarantees a pack4 input
// and inc_g % 4 == 0: then four consecutive k are one tap's four consecutive channels, one
// vec4 load from the input, and four consecutive weights are one aligned vec4 too.
//
// A workgroup of 4 subgroups (2 x 2) computes a BM x BN tile of (channels, pixels); each
// subgroup owns a quarter of it as WM x WN accumulators of 16x16. WM = WN = 2 (64 x 64
// tiles): larger tiles mean fewer workgroups for a kernel bound by staging and latency
// rather than by the multiplies, and bring in split-K and its reduce pass sooner.
// K advances in chunks of 32: the workgroup stages W[BM][32] and col[32][BN] in shared
// memory as fp16, each subgroup loads its fragments from there. The next chunk's global
// loads are issued into registers before the current chunk's multiplies (double
// buffering through registers; two chunks ahead and chunks of 64 were measured and not
// adopted). The epilogue goes fragment by fragment through a small
// per-subgroup staging area, since bias, activation and ncnn's packed layouts need each
// value's (channel, pixel).
// Every fixed-count loop is [[unroll]]ed: the register arrays (ra, rb) then stay registers.
// The cooperative matrices are not arrays at all but one variable each (acc00..acc11, a0,
// a1, b; WM = WN = 2 is written out): with fragment arrays, unrolled or not, a driver ran
// them several times slower.
// Figures for each of these choices: docs/perf-notes.md, "Tensor-core kernels: shapes and
// registers".
// Split-K (k_slices > 1) writes raw fp32 partial sums to the workspace like convolution.comp.

layout (constant_id = 0) const int kernel_w = 1;
layout (constant_id = 1) const int kernel_h = 1;
layout (constant_id = 2) const int dilation_w = 1;
layout (constant_id = 3) const int dilation_h = 1;
layout (constant_id = 4) const int stride_w = 1;
layout (constant_id = 5) const int stride_h = 1;
layout (constant_id = 6) const int bias_term = 0;
layout (constant_id = 7) const int activation_type = 0;
layout (constant_id = 8) const float activation_param_0 = 0;
layout (constant_id = 9) const float activation_param_1 = 0;
layout (constant_id = 10) const int w = 1;
layout (constant_id = 11) const int h = 1;
layout (constant_id = 12) const int in_cstep = 1;
layout (constant_id = 13) const int in_elempack = 1;
layout (constant_id = 14) const int outw = 1;
layout (constant_id = 15) const int outh = 1;
layout (constant_id = 16) const int out_cstep = 1;
layout (constant_id = 17) const int out_elempack = 1;
layout (constant_id = 18) const int inc_g = 1;
layout (constant_id = 19) const int outc_g = 1;
layout (constant_id = 20) const int pad_top = 0;
layout (constant_id = 21) const int pad_left = 0;
layout (constant_id = 22) const float pad_value = 0;
layout (constant_id = 23) const int k_slices = 1;
layout (constant_id = 24) const int residual_term = 0;  // add a same-shape blob before the activation

layout (local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

// inputs are read four channels (one pack4 item) or four k at a time through vec4 views
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (binding = 2) readonly buffer weight_blob { sfpvec4 weight_data[]; };
layout (binding = 3) readonly buffer bias_blob { sfp bias_data[]; };
layout (binding = 4) writeonly buffer workspace_blob { float workspace_data[]; };
layout (binding = 5) readonly buffer residual_blob { sfp residual_data[]; };

#include "activation.comp"

#define WM 2
#define WN 2
#define BM (32 * WM)
#define BN (32 * WN)
#define BK 32
#define NT 128
// Row strides of the shared tiles, in elements: padded against bank conflicts, and kept
// multiples of 16 bytes as cooperative-matrix loads and stores want.
#define SA_STRIDE (BK + 8)
#define SB_STRIDE (BN + 8)
#define SC_STRIDE 16

shared float16_t sA[BM * SA_STRIDE];   // [m][k]
shared float16_t sB[BK * SB_STRIDE];   // [k][n]
shared float sC[4 * 16 * SC_STRIDE];   // one finished 16x16 fragment per subgroup

const int M = outc_g;
const int N = outw * outh;
const int K = kernel_w * kernel_h * inc_g;
const int K_SLICE = (K + k_slices * BK - 1) / (k_slices * BK) * BK;

#define A_QUADS (BM * BK / 4 / NT)   // 4 quads of k of the weights per invocation per chunk
#define B_QUADS (BK * BN / 4 / NT)   // 4 quads of k of the im2col slice per invocation per chunk

f16vec4 ra[A_QUADS];
f16vec4 rb[B_QUADS];

// k0..k0+3 (k0 a multiple of 4) of the im2col column of the pixel whose input corner is
// (y0, x0): with inc_g % 4 == 0 the four share one tap and are one pack4 item of the input
f16vec4 gather4(int k0, int y0, int x0, int c_base)
{
    const int tap = k0 / inc_g;
    const int iy = y0 + (tap / kernel_w) * dilation_h;
    const int ix = x0 + (tap % kernel_w) * dilation_w;
    if (iy < 0 || ix < 0 || iy >= h || ix >= w)
        return f16vec4(float16_t(pad_value));
    const int c = c_base + k0 % inc_g;
    return f16vec4(bottom_blob_data[(c / 4) * in_cstep + iy * w + ix]);
}

// the global loads of one K chunk into registers; K and k_end are multiples of 4, so each
// quad is wholly inside or wholly outside
void load_chunk(int k0, int k_end, int m0, int w_base, int tid, ivec2 my_corner, bool my_n_ok, int c_base)
{
    [[unroll]] for (int i = 0; i < A_QUADS; i++)
    {
        const int e = tid + i * NT;
        const int m = m0 + e / (BK / 4);
        const int k = k0 + (e % (BK / 4)) * 4;
        ra[i] = (m < M && k < k_end) ? f16vec4(weight_data[(w_base + m * K + k) / 4]) : f16vec4(0.f);
    }
    [[unroll]] for (int q = 0; q < B_QUADS; q++)
    {
        const int k = k0 + (tid / BN + q * (NT / BN)) * 4;
        rb[q] = (my_n_ok && k < k_end) ? gather4(k, my_corner.x, my_corner.y, c_base) : f16vec4(0.f);
    }
}

void store_chunk(int tid)
{
    [[unroll]] for (int i = 0; i < A_QUADS; i++)
    {
        const int e = tid + i * NT;
        const int a = (e / (BK / 4)) * SA_STRIDE + (e % (BK / 4)) * 4;
        sA[a] = ra[i].x;
        sA[a + 1] = ra[i].y;
        sA[a + 2] = ra[i].z;
        sA[a + 3] = ra[i].w;
    }
    const int nn = tid % BN;
    [[unroll]] for (int q = 0; q < B_QUADS; q++)
    {
        const int b = (tid / BN + q * (NT / BN)) * 4 * SB_STRIDE + nn;
        sB[b] = rb[q].x;
        sB[b + SB_STRIDE] = rb[q].y;
        sB[b + 2 * SB_STRIDE] = rb[q].z;
        sB[b + 3 * SB_STRIDE] = rb[q].w;
    }
}

#define FRAG_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRAG_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
// Every fragment is a variable of its own, not an array element: with arrays (every loop
// [[unroll]]ed) a driver ran the multiplies several times slower (docs/perf-notes.md).
// (glslang wants one declarator per declaration.)
#define FRAG_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// The epilogue of fragment (i, j) through this subgroup's staging area; lanes walk it four
// channels (one pack4 item) at a time, pixel by pixel, so that neighbouring lanes write
// neighbouring output scalars.
#define EPILOGUE(ACC, i, j) \
    coopMatStore(ACC, sC, stage, SC_STRIDE, gl_CooperativeMatrixLayoutRowMajor); \
    subgroupMemoryBarrierShared(); \
    subgroupBarrier(); \
    for (int e = lane; e < 256; e += 32) \
    { \
        const int mm = (e / 64) * 4 + e % 4; \
        const int nn = (e / 4) % 16; \
        const int m = m0 + wm + 16 * (i) + mm; \
        const int n = n0 + wn + 16 * (j) + nn; \
        if (m >= M || n >= N) \
            continue; \
        const int oc = g * M + m; \
        const float v = sC[stage + mm * SC_STRIDE + nn]; \
        if (k_slices > 1) \
        { \
            workspace_data[(slice * groups * M + oc) * N + n] = v; \
            continue; \
        } \
        const afp bias = bias_term == 1 ? buffer_ld1(bias_data, oc) : afp(0.f); \
        const int o = (oc / out_elempack) * out_cstep * out_elempack + n * out_elempack + oc % out_elempack; \
        afp r = afp(v) + bias; \
        if (residual_term == 1) \
            r += buffer_ld1(residual_data, o); \
        buffer_st1(top_blob_data, o, activation_afp(r, activation_type, activation_param_0, activation_param_1)); \
    } \
    subgroupBarrier(); /* every lane has read the stage before the next fragment lands */

void main()
{
    const int tid = int(gl_LocalInvocationID.x);
    const int sg = int(gl_SubgroupID);       // 4 subgroups of 32
    const int lane = int(gl_SubgroupInvocationID);
    const int wm = (sg / 2) * (16 * WM);      // this subgroup's quarter of the tile
    const int wn = (sg % 2) * (16 * WN);
    const int m0 = int(gl_WorkGroupID.y) * BM;
    const int n0 = int(gl_WorkGroupID.x) * BN;
    const int g = int(gl_WorkGroupID.z) / k_slices;
    const int slice = int(gl_WorkGroupID.z) % k_slices;
    const int k_begin = slice * K_SLICE;
    const int k_end = min(K, k_begin + K_SLICE);
    const int w_base = g * M * K;
    const int c_base = g * inc_g;

    // each invocation always gathers the same pixel of the tile
    const int my_n = n0 + tid % BN;
    const bool my_n_ok = my_n < N;
    const ivec2 my_corner = ivec2((my_n / outw) * stride_h - pad_top, (my_n % outw) * stride_w - pad_left);

    // every fragment a variable of its own (see FRAG_C)
    FRAG_C acc00 = FRAG_C(0.f);
    FRAG_C acc01 = FRAG_C(0.f);
    FRAG_C acc10 = FRAG_C(0.f);
    FRAG_C acc11 = FRAG_C(0.f);
    FRAG_A a0;
    FRAG_A a1;
    FRAG_B b;

    if (k_begin < k_end)
        load_chunk(k_begin, k_end, m0, w_base, tid, my_corner, my_n_ok, c_base);
    for (int k0 = k_begin; k0 < k_end; k0 += BK)
    {
        store_chunk(tid);
        barrier();
        if (k0 + BK < k_end)
            load_chunk(k0 + BK, k_end, m0, w_base, tid, my_corner, my_n_ok, c_base);
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

    // the epilogue, one fragment at a time
    const int groups = int(gl_NumWorkGroups.z) / k_slices;
    const int stage = sg * 16 * SC_STRIDE;
    EPILOGUE(acc00, 0, 0)
    EPILOGUE(acc01, 0, 1)
    EPILOGUE(acc10, 1, 0)
    EPILOGUE(acc11, 1, 1)
}
