// variants: COOPMAT=1,0
// vulkan1.0: no
// (the channels-last layout runs with fp16 storage on tensor-core devices only: no SPIR-V 1.0 build)
#version 450
#extension GL_EXT_control_flow_attributes : require
#if COOPMAT
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#endif

// Winograd F(FxF, 3x3), step 2 of 3 in the "channels-last" layout (gpu/ops/winograd_convolution.py uses it
// where the device has tensor cores): for every frequency f, the product
//
//     P[f] = U[f] @ V[f]      (M output channels x K input channels) @ (K x N tiles)
//
// with every operand laid out so that a 16x16 block of it is one strided matrix in memory:
//   U  [f][m][k]   row-major M x K (the transformed weights as uploaded),
//   V  [f][n][k]   K x N column-major: each tile's K channels contiguous (winograd_input.comp
//                  with CHANNELS_LAST=1 writes it),
//   P  [f][n][m]   M x N column-major (winograd_output.comp with CHANNELS_LAST=1 reads it).
// N (the tiles, padded) is a multiple of 16; COOPMAT=1 also needs M and K to be (the host
// checks), so no fragment is ever partial. COOPMAT=0 takes multiples of 4.
//
// COOPMAT=1: each subgroup loads its 16x16 fragments straight from the buffers with
// coopMatLoad (no shared-memory staging and no barrier in the K loop: the workgroup's four
// subgroups share A and B blocks through the L1 cache instead) and multiplies them on the
// tensor cores, fp16 x fp16 into fp32, the next K step's fragments loaded before the
// current step's multiplies. A workgroup is 2 x 2 subgroups: a 64 x 64 block of P.
// COOPMAT=0: the same contract computed with scalar arithmetic, one invocation per
// (tile, 4 output channels), for devices without cooperative matrices: the tests run the
// channels-last transforms and this layout on any device with it.

layout (constant_id = 0) const int M = 16;      // output channels
layout (constant_id = 1) const int K = 16;      // input channels
layout (constant_id = 2) const int N = 16;      // tiles, padded to a multiple of 16

layout (binding = 0) readonly buffer u_blob { sfp u_data[]; };
layout (binding = 1) readonly buffer v_blob { sfp v_data[]; };
layout (binding = 2) writeonly buffer p_blob { sfp p_data[]; };

#if COOPMAT

layout (local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

#define FRAG_A coopmat<sfp, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRAG_B coopmat<sfp, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define FRAG_C coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define FRAG_P coopmat<sfp, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// Each subgroup: a 32 x 32 block of P, 2 x 2 fragments. Every fragment is a variable of its
// own, not an array element: with arrays (every loop [[unroll]]ed) a driver ran the
// multiplies several times slower (docs/perf-notes.md, "Tensor-core kernels").
// (glslang also needs one declarator per coopmat declaration.)
#define LOAD_STEP(k, A0, A1, B0, B1) \
    coopMatLoad(A0, u_data, u_row0 + (k), K, gl_CooperativeMatrixLayoutRowMajor); \
    coopMatLoad(A1, u_data, u_row1 + (k), K, gl_CooperativeMatrixLayoutRowMajor); \
    coopMatLoad(B0, v_data, v_col0 + (k), K, gl_CooperativeMatrixLayoutColumnMajor); \
    coopMatLoad(B1, v_data, v_col1 + (k), K, gl_CooperativeMatrixLayoutColumnMajor);

#define MULTIPLY_STEP(A0, A1, B0, B1) \
    acc00 = coopMatMulAdd(A0, B0, acc00); \
    acc01 = coopMatMulAdd(A0, B1, acc01); \
    acc10 = coopMatMulAdd(A1, B0, acc10); \
    acc11 = coopMatMulAdd(A1, B1, acc11);

#define STORE(ACC, m, n) \
    if ((m) < M && (n) < N) \
        coopMatStore(FRAG_P(ACC), p_data, p_base + (n) * M + (m), M, gl_CooperativeMatrixLayoutColumnMajor);

void main()
{
    const int sg = int(gl_SubgroupID);           // 4 subgroups: 2 along M x 2 along N
    const int f = int(gl_WorkGroupID.z);
    const int m0 = int(gl_WorkGroupID.y) * 64 + (sg / 2) * 32;
    const int n0 = int(gl_WorkGroupID.x) * 64 + (sg % 2) * 32;
    // fragment origins clamped into the matrices: a fragment past M or N recomputes the
    // last one (its loads stay in bounds) and is not stored
    const int u_row0 = f * M * K + min(m0, M - 16) * K;
    const int u_row1 = f * M * K + min(m0 + 16, M - 16) * K;
    const int v_col0 = f * N * K + min(n0, N - 16) * K;
    const int v_col1 = f * N * K + min(n0 + 16, N - 16) * K;

    FRAG_C acc00 = FRAG_C(0.f);
    FRAG_C acc01 = FRAG_C(0.f);
    FRAG_C acc10 = FRAG_C(0.f);
    FRAG_C acc11 = FRAG_C(0.f);
    FRAG_A a0;
    FRAG_A a1;
    FRAG_B b0;
    FRAG_B b1;
    FRAG_A c0;
    FRAG_A c1;
    FRAG_B d0;
    FRAG_B d1;

    // two K steps per trip through two sets of fragments: one step's loads are in flight
    // while the other's multiplies run
    LOAD_STEP(0, a0, a1, b0, b1)
    for (int k = 0; k < K; k += 32)
    {
        const bool second = k + 16 < K;
        if (second)
        {
            LOAD_STEP(k + 16, c0, c1, d0, d1)
        }
        MULTIPLY_STEP(a0, a1, b0, b1)
        if (!second)
            break;
        if (k + 32 < K)
        {
            LOAD_STEP(k + 32, a0, a1, b0, b1)
        }
        MULTIPLY_STEP(c0, c1, d0, d1)
    }

    const int p_base = f * N * M;
    STORE(acc00, m0, n0)
    STORE(acc01, m0, n0 + 16)
    STORE(acc10, m0 + 16, n0)
    STORE(acc11, m0 + 16, n0 + 16)
}

#else

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

void main()
{
    const int n = int(gl_GlobalInvocationID.x);
    const int m4 = int(gl_GlobalInvocationID.y);
    const int f = int(gl_GlobalInvocationID.z);
    if (n >= N || m4 * 4 >= M)
        return;

    const int u_base = (f * M + m4 * 4) * K;
    const int v_base = (f * N + n) * K;
    vec4 sum = vec4(0.f);
    for (int k = 0; k < K; k++)
    {
        const float v = float(v_data[v_base + k]);
        sum += v * vec4(float(u_data[u_base + k]), float(u_data[u_base + K + k]),
                        float(u_data[u_base + 2 * K + k]), float(u_data[u_base + 3 * K + k]));
    }
    const int p = (f * N + n) * M + m4 * 4;
    [[unroll]] for (int i = 0; i < 4; i++)
        p_data[p + i] = sfp(sum[i]);
}

#endif
