#version 450

// Copy the cached keys or values (heads, past_len, head_dim) into the front of the
// (heads, past_len + cur_len, head_dim) tensor that the new ones are appended to.
// One invocation per scalar: x = position within a head's block, y = head.

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer past_blob { sfp past_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int block;      // past_len * head_dim
    int heads;
    int dst_step;   // (past_len + cur_len) * head_dim
} p;

void main()
{
    const int i = int(gl_GlobalInvocationID.x);
    const int h = int(gl_GlobalInvocationID.y);
    if (i >= p.block || h >= p.heads)
        return;
    buffer_cp1(top_blob_data, h * p.dst_step + i, past_data, h * p.block + i);
}
