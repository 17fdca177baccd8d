#version 450

// Repack a tensor along its packing axis (w for dims 1, h for dims 2, c for dims 3/4)
// between elempack 1 and 4, in either direction, fp32 or fp16 storage alike.
//
// Layout (vkmat.py): unpacked index n of the packing axis at position i of the
// `inner` positions of one item (inner = w*h*d for dims 3/4, w for dims 2, 1 for dims 1)
// lives at scalar  (n / ep) * inner * ep + i * ep + n % ep.
// One invocation writes one output item (out_elempack scalars) at (i = x, item = y);
// scalars past the end of the axis (n not divisible by 4) are written as zero.

layout (constant_id = 0) const int in_elempack = 1;
layout (constant_id = 1) const int out_elempack = 4;

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int n;          // unpacked length of the packing axis
    int inner;      // positions per item
    int out_items;  // ceil(n / out_elempack)
} p;

void main()
{
    const int i = int(gl_GlobalInvocationID.x);
    const int item = int(gl_GlobalInvocationID.y);

    if (i >= p.inner || item >= p.out_items)
        return;

    for (int k = 0; k < out_elempack; k++)
    {
        const int n = item * out_elempack + k;
        const int dst = (item * p.inner + i) * out_elempack + k;
        if (n < p.n)
        {
            const int src = (n / in_elempack) * p.inner * in_elempack + i * in_elempack + n % in_elempack;
            buffer_cp1(top_blob_data, dst, bottom_blob_data, src);
        }
        else
        {
            buffer_st1(top_blob_data, dst, afp(0.f));
        }
    }
}
