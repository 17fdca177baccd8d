// vulkan1.0: no
// (fp16 storage only, which Vulkan 1.0 devices do not get: no SPIR-V 1.0 build)
#version 450

// The first step of an fp16-storage download of a large blob: its fp16 scalars, packed by
// 1 or 4 along the packing axis, become fp32 scalars unpacked, so the host only copies
// them: numpy's float16 -> float32 cast is slow, slower still on a packed blob's strided
// layout (figures: docs/perf-notes.md, "fp16 downloads cast on the GPU").
//
// Layout (vkmat.py): unpacked index n of the packing axis, position i of the `inner`
// positions of an item, lives at scalar (n / elempack) * inner * elempack + i * elempack
// + n % elempack; the output is the same with elempack 1: n * inner + i.

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

layout (binding = 0) readonly buffer src_blob { sfp src_data[]; };
layout (binding = 1) writeonly buffer dst_blob { float dst_data[]; };

layout (push_constant) uniform parameter
{
    int total;      // scalars written: (unpacked length of the packing axis) x inner
    int inner;      // positions per item
    int elempack;   // of the source
} p;

void main()
{
    const uint row = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int gi = int(gl_GlobalInvocationID.y * row + gl_GlobalInvocationID.x);
    if (gi >= p.total)
        return;

    const int n = gi / p.inner;
    const int i = gi % p.inner;
    dst_data[gi] = float(src_data[((n / p.elempack) * p.inner + i) * p.elempack + n % p.elempack]);
}
