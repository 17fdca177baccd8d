#version 450

// Split-K epilogue of convolution.comp: out[oc][n] = act(bias[oc] + sum_s partial[s][oc][n]
// (+ residual[oc][n] with residual_term: a residual connection folded in by the planner)),
// stored in the output's storage type and elempack. One invocation per output value
// (x = pixel n, y = output channel).

layout (constant_id = 0) const int k_slices = 1;
layout (constant_id = 1) const int bias_term = 0;
layout (constant_id = 2) const int activation_type = 0;
layout (constant_id = 3) const float activation_param_0 = 0;
layout (constant_id = 4) const float activation_param_1 = 0;
layout (constant_id = 5) const int N = 1;               // output pixels (= out cstep)
layout (constant_id = 6) const int num_output = 1;
layout (constant_id = 7) const int out_elempack = 1;
layout (constant_id = 8) const int residual_term = 0;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer workspace_blob { float workspace_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
layout (binding = 2) readonly buffer bias_blob { sfp bias_data[]; };
layout (binding = 3) readonly buffer residual_blob { sfp residual_data[]; };

#include "activation.comp"

void main()
{
    const int n = int(gl_GlobalInvocationID.x);
    const int oc = int(gl_GlobalInvocationID.y);
    if (n >= N || oc >= num_output)
        return;

    afp v = bias_term == 1 ? buffer_ld1(bias_data, oc) : afp(0.f);
    for (int s = 0; s < k_slices; s++)
        v += afp(workspace_data[(s * num_output + oc) * N + n]);
    const int o = (oc / out_elempack) * N * out_elempack + n * out_elempack + oc % out_elempack;
    if (residual_term == 1)
        v += buffer_ld1(residual_data, o);
    buffer_st1(top_blob_data, o, activation_afp(v, activation_type, activation_param_0, activation_param_1));
}
