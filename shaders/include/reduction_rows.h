// Row addressing shared by the reduction / normalisation shaders.
//
// A tensor in a VkMat is dense. Seen in its *packed* order it has five axes, C-order:
//     (axis0 / elempack, a1, a2, a3, elempack)
// (numpy axis 0 is split into the item index and the lane inside an item). A row-wise
// operation marks each of those axes "kept" or "reduced"; the host side (_rows_gpu.py)
// drops size-1 axes and merges neighbours with the same mark, leaving at most three kept
// and three reduced axes, innermost last. A row g is one combination of kept coordinates,
// an element k of it one combination of reduced coordinates, and
//     address(g, k) = base(g) + offset(k),   each a sum of coordinate * address stride.
// Kept coordinates in packed order enumerate rows so that, for Reduction, g is also the
// scalar address of the result in the output tensor (see _rows_gpu.py).
//
// Include this after `layout (local_size_x_id = 233, ...) in;`: glslang gives functions
// defined before that declaration gl_WorkGroupSize = (1, 1, 1).

// decompose i over (s0, s1, s2) (s2 fastest) and weight by (t0, t1, t2)
int rows_linear(int i, int s0, int s1, int s2, int t0, int t1, int t2)
{
    const int c2 = i % s2;
    i /= s2;
    const int c1 = i % s1;
    const int c0 = i / s1;
    return c0 * t0 + c1 * t1 + c2 * t2;
}

// flat invocation index of a 1-D job folded onto a 2-D grid (more than 65535 groups along x)
int rows_flat_invocation()
{
    const uint row = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    return int(gl_GlobalInvocationID.y * row + gl_GlobalInvocationID.x);
}

// the inverse, for element-wise passes: scalar address -> (row g, element k). The merged
// packed axes come outermost first, padded at the front to five with size 1; only the
// last naxes are real (fewer divisions). Bit j of reduced_mask marks axis j reduced.
ivec2 rows_row_of(int addr, int s0, int s1, int s2, int s3, int s4, int reduced_mask, int naxes)
{
    const int sizes[5] = int[5](s0, s1, s2, s3, s4);
    int g = 0;
    int k = 0;
    int gmul = 1;
    int kmul = 1;
    for (int j = 4; j >= 5 - naxes; j--)
    {
        const int c = addr % sizes[j];
        addr /= sizes[j];
        if (((reduced_mask >> j) & 1) != 0)
        {
            k += c * kmul;
            kmul *= sizes[j];
        }
        else
        {
            g += c * gmul;
            gmul *= sizes[j];
        }
    }
    return ivec2(g, k);
}
