#version 450

// SDPA with kv_cache: the cache output is past rows then current rows, per kv head:
//     out[g][r][e] = r < past ? past[g][r][e] : cur[g][r - past][e]
// All pack1; one invocation per output scalar, copied without conversion.

layout (local_size_x_id = 233, local_size_y_id = 234, local_size_z_id = 235) in;

// after the local size: functions there see the real gl_WorkGroupSize
#include "reduction_rows.h"

layout (binding = 0) readonly buffer past_blob { sfp past_data[]; };
layout (binding = 1) readonly buffer cur_blob { sfp cur_data[]; };
layout (binding = 2) writeonly buffer top_blob { sfp top_blob_data[]; };

layout (push_constant) uniform parameter
{
    int total;
    int past;  // rows of past per head
    int cur;   // rows of cur per head
    int e;     // row width
} p;

void main()
{
    const int i = rows_flat_invocation();
    if (i >= p.total)
        return;
    const int rows = p.past + p.cur;
    const int col = i % p.e;
    const int r = (i / p.e) % rows;
    const int g = i / (p.e * rows);
    if (r < p.past)
    {
        buffer_cp1(top_blob_data, i, past_data, (g * p.past + r) * p.e + col);
    }
    else
    {
        buffer_cp1(top_blob_data, i, cur_data, (g * p.cur + r - p.past) * p.e + col);
    }
}
