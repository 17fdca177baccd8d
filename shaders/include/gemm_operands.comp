// The operands of the batched strided matrix product (gemm.comp, gemm_coopmat.comp): the
// specialization constants, bindings and push constants they share, their addressing
// (read gemm.comp's header) and the epilogue that stores one finished value.

layout (constant_id = 0) const int activation_type = 0;
layout (constant_id = 1) const float activation_param_0 = 0;
layout (constant_id = 2) const float activation_param_1 = 0;
layout (constant_id = 3) const int has_c = 0;
layout (constant_id = 4) const int a_elempack = 1;
layout (constant_id = 5) const int out_elempack = 1;

layout (binding = 0) readonly buffer a_blob { sfp a_data[]; };
layout (binding = 1) readonly buffer b_blob { sfp b_data[]; };
layout (binding = 2) readonly buffer c_blob { sfp c_data[]; };
layout (binding = 3) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int M; int N; int K; int batch_inner;
    int a_off; int a_sm; int a_sk; int a_sbh; int a_sbl;
    int b_off; int b_sk; int b_sn; int b_sbh; int b_sbl;
    int c_off; int c_sm; int c_sn; int c_sbh; int c_sbl;
    int o_off; int o_sm; int o_sn; int o_sbh; int o_sbl;
    float alpha; float beta;
} p;

#include "activation.comp"

int batch_offset(int z, int sbh, int sbl)
{
    return (z / p.batch_inner) * sbh + (z % p.batch_inner) * sbl;
}

int a_index(int base, int m, int k)
{
    return base + (m / a_elempack) * p.a_sm + m % a_elempack + k * p.a_sk;
}

// the epilogue is fp32 whatever the arithmetic of the sums
void store(int z, int m, int n, float sum)
{
    float v = sum;
    if (has_c == 1)
    {
        const int ci = p.c_off + batch_offset(z, p.c_sbh, p.c_sbl) + m * p.c_sm + n * p.c_sn;
        v += p.beta * float(buffer_ld1(c_data, ci));
    }
    v *= p.alpha;
    v = activation_f32(v, activation_type, activation_param_0, activation_param_1);
    const int oi = p.o_off + batch_offset(z, p.o_sbh, p.o_sbl) + (m / out_elempack) * p.o_sm
                 + m % out_elempack + n * p.o_sn;
    buffer_st1(top_blob_data, oi, v);
}
