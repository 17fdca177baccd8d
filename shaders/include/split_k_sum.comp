// Split-K summed in place (the SPLITK=1 variants of convolution.comp and
// convolution_coopmat.comp; needs VK_EXT_shader_atomic_float).
//
// The k_slices workgroups of one output tile each sum a slice of K. Instead of writing
// their partial sums out for a second dispatch to add up (convolution_reduce.comp: on the
// H200 ~4.5 us per layer, mostly the cost of one more dispatch and barrier), each adds
// them into one fp32 sum per output value with atomicAdd, then counts itself in on the
// tile's arrival counter. The workgroup that arrives last takes the finished sums
// (atomicExchange with 0) and applies the epilogue: bias, residual, activation, store.
//
// Taking the sums with an exchange and resetting the counter leave both buffers zero
// again, as the host made them when it recorded the dispatch: a replayed command buffer
// finds them ready, with no clearing pass. The order of the additions varies from run to
// run, so results may differ in the last bit of fp32 (before the store rounds them).
//
// Memory ordering is the classic "last block" pattern: every invocation fences its adds
// before the workgroup barrier, one invocation then counts the workgroup in, and the last
// workgroup fences again before reading. All accesses to the sums are atomics, which act
// on the device's coherent copy, so the fences only have to order them.

#extension GL_EXT_shader_atomic_float : require

// sums[o] for output scalar o (the output's own scalar index, padding included)
layout (binding = 4) buffer split_k_sums_blob { float split_k_sums[]; };
// one counter per output tile
layout (binding = 6) buffer split_k_arrivals_blob { uint split_k_arrivals[]; };

shared bool split_k_last_arrival;

void split_k_add(int o, float v)
{
    atomicAdd(split_k_sums[o], v);
}

// Called by the whole workgroup after its last split_k_add: true in the workgroup that
// completes tile `tile` (the others may return).
bool split_k_arrive(int tile)
{
    memoryBarrierBuffer();
    barrier();
    if (gl_LocalInvocationIndex == 0)
    {
        const uint before = atomicAdd(split_k_arrivals[tile], 1u);
        split_k_last_arrival = before == uint(k_slices - 1);
        if (split_k_last_arrival)
            atomicExchange(split_k_arrivals[tile], 0u);  // ready for the next run
    }
    barrier();
    memoryBarrierBuffer();
    return split_k_last_arrival;
}

// the finished sum of output scalar o, leaving 0 behind
float split_k_take(int o)
{
    return atomicExchange(split_k_sums[o], 0.f);
}
