#version 450

// SDPA with a KV cache kept on the device: the step's rows go into the cache in place,
//     cache[g][position + r][e] = cur[g / repeat][r][e]
// (repeat > 1: a decoder's Tile giving each kv head to `repeat` query heads, folded in here,
// so that cur holds the kv heads once and the copies are written straight into the cache)
// where position, the rows cached before this step, is read from a buffer the host writes
// before each run: one recording serves every step of the same shape. The cache holds
// `capacity` rows per kv head; rows past it are never written (the host grows the cache
// first). All pack1, copied without conversion.

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

// after the local size: functions there see the real gl_WorkGroupSize
#include "reduction_rows.h"

layout (binding = 0) readonly buffer cur_blob { sfp cur_data[]; };
layout (binding = 1) writeonly buffer cache_blob { sfp cache_data[]; };
layout (binding = 2) readonly buffer position_blob { int position_data[]; };

layout (push_constant) uniform parameter
{
    int total;     // scalars written: cache heads * cur * e
    int cur;       // rows of this step per kv head
    int e;         // row width
    int capacity;  // rows of the cache per kv head
    int repeat;    // cache heads per head of cur
} p;

void main()
{
    const int i = rows_flat_invocation();
    if (i >= p.total)
        return;
    const int col = i % p.e;
    const int r = (i / p.e) % p.cur;
    const int g = i / (p.e * p.cur);
    const int row = position_data[0] + r;
    if (row >= p.capacity)
        return;
    buffer_cp1(cache_data, (g * p.capacity + row) * p.e + col, cur_data, ((g / p.repeat) * p.cur + r) * p.e + col);
}
