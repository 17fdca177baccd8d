// Chained dispatch levels: a dispatch waits for the level before it on a counter in device
// memory instead of behind a pipeline barrier (vkncnn/gpu/vulkan/level_chain.py).
//
// A barrier between two dependent dispatches drains the GPU: the second one's workgroups
// start only after the last of the first one's has ended, and a decode step's products and
// attention are a chain of such levels, each a few microseconds of work. Recorded without the
// barrier, the next level's workgroups start while the last level still runs: each issues the
// loads that do not depend on it (its weights, the cached keys) and only then waits here until
// every workgroup of that level has counted itself done, then reads its inputs.
//
// That is safe only where the device starts the workgroups of a queue's dispatches in the
// order they were recorded, so that a waiting workgroup never holds the place of one it
// waits for: the host chains levels only on such devices. A wait that outlasts
// CHAIN_MAX_SPINS reads of the counter gives up (or the driver ends the loop) and raises the flag in slot 0, which the
// host checks after the fence: an error, never a hang.
//
// The including shader defines CHAIN_BINDING (the counters' binding, after its own) and,
// with CHAINED, a push-constant block named p whose first four members are
//     uint wait_level;    the counter to wait on (an index into level_count)
//     uint wait_count;    the workgroups of that level; 0: the level is behind a barrier
//     uint signal_level;  the counter this workgroup adds itself to when done
//     uint backoff;       turns of idle arithmetic between two reads of the counter
// (the recorder writes them), before it includes this file. It declares every buffer that
// another dispatch of the same step writes CHAIN_COHERENT, so that its loads see the level's
// writes and not a stale cached line.

#ifndef CHAINED
#define CHAINED 0
#endif

#if CHAINED
#define CHAIN_COHERENT coherent
#define CHAIN_MAX_SPINS 4194304  // ~2 s of reads on an H100's L2; a real wait is a level's time

// volatile: every turn of the wait reads memory again
layout (binding = CHAIN_BINDING) volatile coherent buffer level_count_blob { uint level_count[]; };

shared uint chain_idle;

// by every invocation of the workgroup, before its first load of another dispatch's output
void wait_for_previous_level()
{
    if (p.wait_count == 0u)
        return;
    if (gl_LocalInvocationIndex == 0u)
    {
        // the waiting workgroups of a level all read one counter, which the level before
        // adds to: each reads it only every `backoff` turns of arithmetic, so that the
        // reads do not crowd out the adds
        int spins = 0;
        uint idle = gl_WorkGroupID.x;
        while (level_count[p.wait_level] < p.wait_count && spins < CHAIN_MAX_SPINS)
        {
            spins++;
            for (uint turn = 0u; turn < p.backoff; turn++)
                idle = idle * 1664525u + 1013904223u;
        }
        chain_idle = idle;  // keeps the idle turns from being optimised away
        // on the count, not the turns: a driver may end a long loop early (llvmpipe ends
        // every loop after 65535 turns)
        if (level_count[p.wait_level] < p.wait_count)
            atomicOr(level_count[0], 1u);
    }
    barrier();
    memoryBarrierBuffer();
}

// by every invocation of the workgroup, after its last store
void signal_level_done()
{
    memoryBarrierBuffer();
    barrier();
    if (gl_LocalInvocationIndex == 0u)
        atomicAdd(level_count[p.signal_level], 1u);
}
#else
#define CHAIN_COHERENT
void wait_for_previous_level() {}
void signal_level_done() {}
#endif
