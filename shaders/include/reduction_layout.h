// Unpacked numpy coordinates <-> scalar address of a dense VkMat (vkmat.py's layout).
//
// The tensor's unpacked numpy shape is a = (a0, a1, a2, a3), padded with trailing ones;
// axis 0 (the packing axis) is stored as a0 / ep items of ep scalars, so the scalar at
// coordinates c lives at ((c0 / ep) * inner + position in the item row) * ep + c0 % ep.

int layout_addr(ivec4 c, ivec4 a, int ep)
{
    const int inner = a.y * a.z * a.w;
    const int fi = (c.y * a.z + c.z) * a.w + c.w;
    return ((c.x / ep) * inner + fi) * ep + c.x % ep;
}

ivec4 layout_coords(int addr, ivec4 a, int ep)
{
    const int lane = addr % ep;
    const int it = addr / ep;
    const int inner = a.y * a.z * a.w;
    const int fi = it % inner;
    const int item = it / inner;
    return ivec4(item * ep + lane, fi / (a.z * a.w), (fi / a.w) % a.z, fi % a.w);
}
