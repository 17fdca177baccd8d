// variants: VEC4=0,1
// alias: gather_vec4 VEC4=1
#version 450

// Strided copy between two tensors: the data mover of every shape layer (Permute, Crop,
// Slice, Concat, Reshape/Flatten of packed data, ShuffleChannel, PixelShuffle, Reorg, Tile).
//
// The host (vkncnn/gpu/ops/data_movement.py) describes the copy as an index space of up to 8 axes
// (extents e0..e7, C order, e0 implied by `total`) and, per side, a base and one stride per
// axis. Index (i0..i7) copies  src[src_base + sum i_k*s_k]  to  dst[dst_base + sum i_k*d_k].
//
// VEC4=0: bases and strides count scalars of the *unpacked* (logical) tensors, so any
//         transpose, slice or repeat is just a choice of strides. The logical C-order index
//         `index` of a tensor whose packing axis has `inner` positions per item lives at scalar
//             ((n / 4) * inner + i) * 4 + n % 4     with n = index / inner, i = index % inner
//         in elempack 4 (vkmat.py), and at `index` in elempack 1. Each side has its own
//         elempack, so this variant also repacks.
// VEC4=1: both tensors are elempack 4 and the copy moves whole items: bases and strides
//         count items (the host proved that the four lanes of an item travel together).

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

#if VEC4
layout (binding = 0) readonly buffer bottom_blob { sfpvec4 bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfpvec4 top_blob_data[]; };
#else
layout (binding = 0) readonly buffer bottom_blob { sfp bottom_blob_data[]; };
layout (binding = 1) writeonly buffer top_blob { sfp top_blob_data[]; };
#endif

layout (push_constant) uniform parameter
{
    int total;                                  // e0 * e1 * ... * e7
    int e1; int e2; int e3; int e4; int e5; int e6; int e7;
    int s0; int s1; int s2; int s3; int s4; int s5; int s6; int s7;
    int d0; int d1; int d2; int d3; int d4; int d5; int d6; int d7;
    int src_base;
    int dst_base;
    int src_inner;                              // positions per item along the packing axis
    int dst_inner;
    int src_elempack;                           // 1 or 4 (VEC4=0 only)
    int dst_elempack;
} p;

int packed_address(int index, int inner, int elempack)
{
    if (elempack == 1)
        return index;
    const int n = index / inner;
    const int i = index - n * inner;
    return ((n >> 2) * inner + i) * 4 + (n & 3);
}

// peel the innermost remaining axis off the flat index
#define PEEL(e, s, d) { const int q = f / e; const int r = f - q * e; src += r * s; dst += r * d; f = q; }

void main()
{
    // a 2-D grid covers more than 65535 workgroups along x for big tensors
    const uint row = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int gi = int(gl_GlobalInvocationID.y * row + gl_GlobalInvocationID.x);

    if (gi >= p.total)
        return;

    int f = gi;
    int src = p.src_base;
    int dst = p.dst_base;
    PEEL(p.e7, p.s7, p.d7)
    PEEL(p.e6, p.s6, p.d6)
    PEEL(p.e5, p.s5, p.d5)
    PEEL(p.e4, p.s4, p.d4)
    PEEL(p.e3, p.s3, p.d3)
    PEEL(p.e2, p.s2, p.d2)
    PEEL(p.e1, p.s1, p.d1)
    src += f * p.s0;
    dst += f * p.d0;

#if VEC4
    buffer_cp4(top_blob_data, dst, bottom_blob_data, src);
#else
    const int si = packed_address(src, p.src_inner, p.src_elempack);
    const int di = packed_address(dst, p.dst_inner, p.dst_elempack);
    buffer_cp1(top_blob_data, di, bottom_blob_data, si);
#endif
}
